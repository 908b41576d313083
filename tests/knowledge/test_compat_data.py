"""The compat/ knowledge base: every table sourced, versions parse, no duplicates, facts agree with each other."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from cudnn_doctor.knowledge import COMPAT_FILES, load_compat
from cudnn_doctor.versions import mm, mm_text, release3

try:
    import tomllib
except ImportError:  # pragma: no cover
    import tomli as tomllib

COMPAT_DIR = Path(__file__).resolve().parents[2] / "compat"
STATUSES = {"confirmed", "secondary", "unconfirmed", "disputed", "heuristic"}


@pytest.fixture(scope="module")
def compat():
    return load_compat()


@pytest.fixture(scope="module")
def raw():
    return {name: tomllib.loads((COMPAT_DIR / (name + ".toml")).read_text()) for name in COMPAT_FILES}


def _tables(raw):
    for file, data in raw.items():
        for name, table in data.items():
            if isinstance(table, dict):
                yield file, name, table


def test_every_file_parses_without_duplicate_keys():
    for name in COMPAT_FILES:
        tomllib.loads((COMPAT_DIR / (name + ".toml")).read_text())  # tomllib rejects duplicate keys


def test_every_table_names_its_source_and_status(raw):
    for file, name, table in _tables(raw):
        if name == "meta":
            assert table.get("sources") or table.get("source"), "%s [meta] has no sources" % file
            continue
        assert table.get("source"), "%s [%s] has no source" % (file, name)
        assert table.get("status") in STATUSES, "%s [%s] status %r" % (file, name, table.get("status"))
        for row in table.get("rows", []):
            if "status" in row:
                assert row["status"] in STATUSES, (file, name, row)
            if row.get("status") in ("secondary", "unconfirmed") and row.get("status") != table.get("status"):
                assert row.get("source") or row.get("note"), "%s [%s] row %s: say where it came from" % (
                    file, name, row)
    for symptom in raw["symptoms"]["symptom"]:
        assert symptom["patterns"] and symptom["meaning"] and symptom["catalogue"], symptom["id"]


def test_versions_parse(raw):
    for row in raw["cuda_driver"]["toolkit_driver"]["rows"]:
        assert Version(row["cuda"])
        for key in ("linux", "windows"):
            assert row[key] in ("", "N/A") or Version(row[key]), row
        assert row["linux"] or row.get("branch"), row
    for name in ("builds_v7", "builds_v8", "builds_v9"):
        for row in raw["cudnn"][name]["rows"]:
            assert Version(row["from"]) <= Version(row["to"]), row
            assert row["cuda"] and all(re.fullmatch(r"\d+\.\d+", c) for c in row["cuda"]), row
            assert bool(row.get("min_cc")) != bool(row.get("min_cc_range")), row
    for key in ("v7", "v8"):  # 8.5 and later: compat/derived.json, from PyPI and NVIDIA's manifests
        releases = raw["cudnn"]["releases"][key]
        assert releases == sorted(releases, key=Version) and len(set(releases)) == len(releases), key
    for row in raw["frameworks"]["pytorch_arch"]["rows"]:
        SpecifierSet(row["torch"])
    for table in raw["known_bad"].values():
        for row in table.get("rows", []):
            SpecifierSet(row["version"])


def test_no_duplicate_rows(raw):
    cuda = [r["cuda"] for r in raw["cuda_driver"]["toolkit_driver"]["rows"]]
    assert len(cuda) == len(set(cuda))
    for name in ("builds_v7", "builds_v8", "builds_v9"):
        keys = [(r["from"], r["to"], r["variant"]) for r in raw["cudnn"][name]["rows"]]
        assert len(keys) == len(set(keys)), name
    pairs = [(r["dl4j"], r["cuda"]) for r in raw["frameworks"]["dl4j"]["rows"]]
    assert len(pairs) == len(set(pairs))
    ids = [s["id"] for s in raw["symptoms"]["symptom"]]
    assert len(ids) == len(set(ids))


def test_driver_floors_grow_with_cuda(compat):
    """A newer CUDA minor never needs an older Linux driver than the one before it."""
    previous = None
    in_table = {mm_text(r["cuda"]) for r in compat.toolkit_rows()}
    for cuda in compat.cuda_releases():
        floor = compat.min_driver(cuda)
        if cuda not in in_table:  # known only from its runtime wheel: no driver row yet ("cannot tell")
            assert floor is None, cuda
            continue
        assert floor is not None and floor.floor is not None, cuda
        if previous is not None:
            assert floor.floor >= previous, cuda
        previous = floor.floor


def test_minor_compat_floors_match_the_brief(compat):
    assert compat.minor_compat_floor("11").version == "450.80.02"
    assert compat.minor_compat_floor("12").version == "525.60.13"
    assert compat.minor_compat_floor("13").version == "580.65.06"
    # Each floor is at or below the GA driver of the major's first release.
    for major in ("11", "12", "13"):
        assert compat.minor_compat_floor(major).floor <= compat.min_driver(major + ".1").floor


def test_cudnn_builds_reference_real_cuda_releases(compat):
    known = set(compat.cuda_releases())
    for b in compat.cudnn_builds():
        assert set(b.cuda) <= known, (b.variant, b.cuda)
        if b.family:
            assert len({c.split(".")[0] for c in b.cuda}) == 1, b


def test_cudnn_builds_cover_known_releases(compat):
    listed = set(compat.cudnn_releases())
    for b in compat.cudnn_builds():
        assert any(b.covers(r) for r in listed) or b.status != "confirmed", b


def test_cc_floors_agree_with_cuda_drops(compat):
    """cuDNN builds never claim GPUs their CUDA major cannot compile for."""
    for b in compat.cudnn_builds():
        if b.min_cc and b.min_cc.known and b.cuda_major:
            floor = compat.cuda_min_cc(b.cuda_major)
            assert mm(b.min_cc.low) >= mm(floor.low), (b.variant, b.first, b.min_cc.low, floor.low)


def test_architectures_cover_every_floor(compat):
    for row in compat.table("gpu_arch", "cuda_min_cc")["rows"]:
        assert compat.arch_for_cc(row["min_cc"]) is not None, row
    assert compat.arch_for_cc("9.0").name == "Hopper"
    assert compat.arch_for_cc("6.1").last_driver_branch == "580"


def test_dl4j_pairs_are_real_builds(compat):
    """Every DL4J CUDA<->cuDNN pair names a CUDA release and a cuDNN minor NVIDIA built for it."""
    for row in compat.framework_rows("dl4j"):
        if int(row["cudnn"].split(".")[0]) < 7:
            continue  # compat keeps no cuDNN 6 rows (unknown, not invented)
        assert mm(row["cuda"]) and row["cuda"] in compat.cuda_releases(), row
        builds = [b for b in compat.cudnn_builds_for_cuda(row["cuda"])
                  if release3(b.last).release[:2] >= tuple(int(x) for x in row["cudnn"].split(".")[:2])
                  and release3(b.first).release[0] == int(row["cudnn"].split(".")[0])]
        assert builds or row["status"] != "confirmed", row


def test_beta6_table(compat):
    rows = {(r["cuda"], r["cudnn"]) for r in compat.framework_rows("dl4j") if r["dl4j"] == "1.0.0-beta6"}
    assert rows == {("9.2", "7.2"), ("10.0", "7.4"), ("10.1", "7.6"), ("10.2", "7.6")}


def test_symptom_rules_exist():
    from cudnn_doctor.rules import RULES
    import cudnn_doctor.rules.registry  # noqa: F401

    ids = {r.id for r in RULES}
    for symptom in load_compat().symptoms():
        assert set(symptom.rules) <= ids, (symptom.id, set(symptom.rules) - ids)


def test_loader_falls_back_to_source_tree(compat):
    assert compat.origin
    assert compat.table("cuda_driver", "toolkit_driver")["rows"]


# --- accessors ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("cuda,linux,windows", [
    ("10.1", "418.39", "418.96"), ("10.2", "440.33", "441.22"), ("9.2", "396.26", "397.44"),
    ("11.8", "520.61.05", "520.06"), ("12.0", "525.60.13", "527.41"), ("13.0", "580.65.06", "580.88"),
    ("12.4.1", "550.54.15", "551.78"), ("7.0", "346.46", "347.62"),
])
def test_min_driver(compat, cuda, linux, windows):
    assert compat.min_driver(cuda, "linux").version == linux
    assert compat.min_driver(cuda, "windows").version == windows


def test_branch_only_release(compat):
    floor = compat.min_driver("13.4")
    assert floor.version is None and floor.branch == "615" and floor.text() == "R615 branch or later"


def test_driver_runs(compat):
    runnable = {r.cuda: r.how for r in compat.cuda_runnable("418.39")}
    assert runnable["10.1"] == "exact" and "10.2" not in runnable
    runnable = {r.cuda: r.how for r in compat.cuda_runnable("535.104.05")}
    assert runnable["12.2"] == "exact" and runnable["12.9"] == "minor-version compatibility"
    assert "13.0" not in runnable
    assert compat.max_cuda_for_driver("580.159.04") == "13.0"
    assert compat.driver_runs_cuda("580.159.04", "13.1", driver_cuda="13.0")[:2] == (
        True, "minor-version compatibility")
    assert compat.driver_runs_cuda("470.82.01", "12.1")[0] is False


@pytest.mark.parametrize("cudnn,built,toolkit,expected", [
    ("9.14.0", "13.0", "13.0", True),   # the real machine's system copy
    ("9.19.0", "13.1", "13.0", True),   # the real machine's wheel, newer minor of the same major
    ("7.6.5", "10.2", "10.2", True),
    ("7.6.5", "10.1", "10.2", False),   # before CUDA 11 each minor is its own soname
    ("7.6.5", None, "10.2", True),      # a CUDA 10.2 build of 7.6.5 exists
    ("7.6.3", None, "10.2", False),     # 10.2 builds start at 7.6.4
    ("8.9.7", "11.8", "12.2", False),
    ("8.9.7", "12.2", "12.4", True),
    ("9.17.0", "12", "13.0", False),
    ("9.17.0", "cuda13", "13.1", True),
    ("9.3.0", None, "12.5", True),      # no matrix row: the release era says a cuda12 build exists
    ("6.0.21", None, "8.0", None),      # unknown to compat
    ("garbage", None, "12.0", None),
])
def test_cudnn_cuda_verdict(compat, cudnn, built, toolkit, expected):
    ok, why = compat.cudnn_cuda_verdict(cudnn, built, toolkit)
    assert ok is expected, why
    assert why.endswith((".", "]", ")")) and len(why.splitlines()) == 1


def test_cudnn_min_cc(compat):
    assert compat.cudnn_min_cc("7.6.5").low == "3.0"
    assert compat.cudnn_min_cc("8.9.7").low == "5.0"
    assert compat.cudnn_min_cc("9.17.0").low == "7.5"
    # 9.11 dropped pre-Turing device code (conda-forge pulled its CUDA 12 cuDNN >= 9.11 builds for it).
    dropped = compat.cudnn_min_cc("9.11.0")
    assert dropped.known and dropped.low == "7.5" and "admin-requests/pull/1742" in dropped.source
    assert compat.cudnn_min_cc("9.10.2").low == "5.0"
    assert compat.cuda_min_cc("13").low == "7.5" and compat.cuda_min_cc("11.8").low == "3.5"


def test_known_bad(compat):
    assert compat.known_bad("cudnn", "9.10.0.56")[0]["fixed_in"] == "9.10.1"
    assert not [b for b in compat.known_bad("cudnn", "8.9.7") if b["version"] == "==9.10.0"]
    assert not compat.known_bad("cudnn", "8.9.7")


def test_forward_compat_gpu_names(compat):
    assert compat.forward_compat_gpu("NVIDIA GeForce RTX 3090") is False
    assert compat.forward_compat_gpu("NVIDIA H100 80GB HBM3") is True
    assert compat.forward_compat_gpu("NVIDIA RTX A6000") is None


def test_sass_rules(compat):
    assert compat.sass_runs(["8.0", "8.6", "9.0"], None, "8.9")
    assert not compat.sass_runs(["5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0"], None, "12.0")
    assert compat.sass_runs(["7.5", "12.0"], "12.0", "12.1")
    assert not compat.sass_runs(["7.5", "8.0"], None, "6.1")


# --- accessors that keep NVIDIA numbers out of the code ------------------------------------------------------------


def test_minor_compat_majors_come_from_the_table(compat):
    majors = sorted(int(r["major"]) for r in compat.table("cuda_driver", "minor_version_compat")["rows"])
    assert compat.minor_compat_majors() == majors
    first = majors[0]
    assert not compat.has_minor_compat(first - 1) and compat.has_minor_compat(first)
    assert compat.has_minor_compat(majors[-1] + 1)  # a newer major keeps the promise
    assert not compat.has_minor_compat(None) and not compat.has_minor_compat("garbage")


@pytest.mark.parametrize("cuda,expected_major,variant", [("13", 9, "cuda13"), ("13.0", 9, "cuda13"),
                                                          ("12.4", 9, "cuda12"), ("11.8", 9, "cuda11")])
def test_newest_cudnn_build_respects_variant_eras(compat, cuda, expected_major, variant):
    newest = compat.newest_cudnn_build(cuda)
    era = compat.variant_era(int(variant[4:]))
    assert release3(newest).release[0] == expected_major
    assert release3(newest) >= release3(era["first"])
    if era.get("last"):
        assert release3(newest) <= release3(era["last"])


def test_newest_cudnn_build_before_minor_compat_is_per_minor(compat):
    assert compat.newest_cudnn_build("10.2") == max(
        (b.last for b in compat.cudnn_builds() if "10.2" in b.cuda), key=release3)
    assert compat.newest_cudnn_build("10.2", 7) == "7.6.5"
    assert compat.newest_cudnn_build("13", 8) is None
    assert compat.newest_cudnn_build(None) is None


def test_cudnn_wheels_and_toolkit_packages(compat):
    assert [compat.cudnn_wheel(m) for m in (11, 12, 13)] == ["nvidia-cudnn-cu11", "nvidia-cudnn-cu12",
                                                              "nvidia-cudnn-cu13"]
    assert compat.cudnn_wheel(10) is None and compat.cudnn_wheel(None) is None
    assert compat.toolkit_package("13.0.2") == "cuda-toolkit-13-0"
    assert compat.toolkit_package("12.8") == "cuda-toolkit-12-8"
    assert compat.toolkit_package("13") is None


@pytest.mark.parametrize("release,cuda,machine,name", [
    ("9.23.2", "13", "x86_64", "cudnn-linux-x86_64-9.23.2.*_cuda13-archive.tar.xz"),
    ("9.23.2", "13.0", "aarch64", "cudnn-linux-sbsa-9.23.2.*_cuda13-archive.tar.xz"),
    ("8.4.0", "10.2", "x86_64", "cudnn-linux-x86_64-8.4.0.*_cuda10.2-archive.tar.xz"),
    ("8.4.0", "11", "x86_64", "cudnn-linux-x86_64-8.4.0.*_cuda11.6-archive.tar.xz"),
    ("7.6.5", "10.2", "x86_64", "cudnn-10.2-linux-x64-v7.6.5.*.tgz"),
    ("7.6.5", "10.2", "ppc64le", None),
    ("9.23.2", "13", "ppc64le", None),
])
def test_archive_names(compat, release, cuda, machine, name):
    assert compat.cudnn_archive_name(release, cuda, "linux", machine) == name


def test_nvenc_api_floors_are_exact_rows_per_platform(compat):
    """FFmpeg's nvenc.c and NVIDIA's Read Me agree on these; an API version between rows gets no guessed floor."""
    assert compat.nvenc_driver("12.1", "windows").version == "531.61"
    assert compat.nvenc_driver("12.1", "linux").version == "530.41.03"
    assert compat.nvenc_driver("10.0", "linux").version == "450.51"  # NVIDIA's Read Me (FFmpeg's has them swapped)
    assert compat.nvenc_driver("13.0", "linux") is None
    rows = compat.table("cuda_driver", "nvenc_api_driver")["rows"]
    apis = [Version(r["api"]) for r in rows]
    assert apis == sorted(apis)
    for platform in ("windows", "linux"):
        floors = [Version(r[platform]) for r in rows]
        assert floors == sorted(floors), platform  # a newer API never needs an older driver
