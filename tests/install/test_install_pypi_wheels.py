"""`install --version V --cuda N` through PyPI plans from the file list PyPI gives: every real file name of
nvidia-cudnn-cu11/12/13 (tests/data/pypi_cudnn_files.json, recorded by scripts/record_pypi_files.py) is parsed by
packaging, and each plan names a file PyPI really has, for the target's processor and glibc. The expected names are
read from the recorded list by plain string work, not through the code under test."""
from __future__ import annotations

import pytest
from packaging.utils import parse_wheel_filename

from pypi_files import NEWEST_CU12, NEWEST_CU13, files, newest

from cudnn_doctor.install.wheel_pick import manylinux_glibc, pick_wheel, platform_tags, wheel_files

GLIBC = (2, 36)  # Debian 12, Ubuntu 22.04 has 2.35: above every floor NVIDIA's wheels name


def plan(project, version, platform, glibc=GLIBC):
    return pick_wheel(wheel_files(files(project)), project, version, platform, glibc)


def names(project):
    return {f["filename"] for f in files(project)}


def short(label):
    return ".".join(label.split(".")[:3])


@pytest.mark.parametrize("project", ["nvidia-cudnn-cu11", "nvidia-cudnn-cu12", "nvidia-cudnn-cu13"])
def test_every_real_wheel_name_parses(project):
    wheels = [f["filename"] for f in files(project) if f["filename"].endswith(".whl")]
    assert wheels and len(wheel_files(files(project))) == len(wheels)
    for name in wheels:
        parse_wheel_filename(name)


@pytest.mark.parametrize("cuda, newest_release", [("12", NEWEST_CU12), ("13", NEWEST_CU13)])
@pytest.mark.parametrize("platform, tail", [("linux-x86_64", "x86_64.whl"), ("linux-sbsa", "aarch64.whl"),
                                            ("windows-x86_64", "win_amd64.whl")])
def test_newest_cudnn9_on_cuda12_and_13_for_each_processor(cuda, newest_release, platform, tail):
    project = "nvidia-cudnn-cu%s" % cuda
    label, _ = newest_release
    want = [n for n in names(project) if n.startswith("nvidia_cudnn_cu%s-%s-" % (cuda, label)) and n.endswith(tail)]
    choice = plan(project, short(label), platform)
    assert choice.wheel is not None, choice.why
    assert [choice.wheel.filename] == want
    assert "manylinux_2_27" in choice.wheel.filename or platform.startswith("windows")


def test_the_issue_s_two_releases_are_found():
    """The two the old suffix match missed: 9.28.1 for CUDA 13 and 9.10.2 for CUDA 12 (manylinux_2_27)."""
    assert plan("nvidia-cudnn-cu13", "9.28.1", "linux-x86_64").wheel.filename == \
        "nvidia_cudnn_cu13-9.28.1.4-py3-none-manylinux_2_27_x86_64.whl"
    assert plan("nvidia-cudnn-cu12", "9.10.2", "linux-x86_64").wheel.filename == \
        "nvidia_cudnn_cu12-9.10.2.21-py3-none-manylinux_2_27_x86_64.whl"
    assert plan("nvidia-cudnn-cu13", "9.28.1", "linux-sbsa").wheel.filename == \
        "nvidia_cudnn_cu13-9.28.1.4-py3-none-manylinux_2_27_aarch64.whl"


@pytest.mark.parametrize("project, version, platform, name", [
    ("nvidia-cudnn-cu12", "8.9.7", "linux-x86_64", "nvidia_cudnn_cu12-8.9.7.29-py3-none-manylinux1_x86_64.whl"),
    ("nvidia-cudnn-cu12", "8.9.7", "windows-x86_64", "nvidia_cudnn_cu12-8.9.7.29-py3-none-win_amd64.whl"),
    ("nvidia-cudnn-cu11", "8.5.0", "linux-x86_64", "nvidia_cudnn_cu11-8.5.0.96-2-py3-none-manylinux1_x86_64.whl"),
    ("nvidia-cudnn-cu11", "8.9.6", "linux-x86_64", "nvidia_cudnn_cu11-8.9.6.50-py3-none-manylinux1_x86_64.whl"),
    ("nvidia-cudnn-cu12", "9.1.0", "linux-x86_64", "nvidia_cudnn_cu12-9.1.0.70-py3-none-manylinux2014_x86_64.whl"),
    # NVIDIA put the aarch64 wheels of 9.0.0 and 9.1.0 in .post1 releases.
    ("nvidia-cudnn-cu12", "9.1.0", "linux-sbsa",
     "nvidia_cudnn_cu12-9.1.0.70.post1-py3-none-manylinux2014_aarch64.whl"),
    ("nvidia-cudnn-cu12", "9.0.0.312", "linux-sbsa",
     "nvidia_cudnn_cu12-9.0.0.312.post1-py3-none-manylinux2014_aarch64.whl"),
])
def test_old_cudnn8_and_early_9_releases(project, version, platform, name):
    assert name in names(project)
    choice = plan(project, version, platform)
    assert choice.wheel is not None and choice.wheel.filename == name, choice.why


def test_every_cudnn_release_pypi_has_is_planned_for_each_platform_it_has():
    """Each final release of each project: the plan for each platform the release has a wheel for names one of
    that release's files for that platform; for a platform it has none for (or only a yanked one), it says so."""
    for project in ("nvidia-cudnn-cu11", "nvidia-cudnn-cu12", "nvidia-cudnn-cu13"):
        releases = {}
        for f in files(project):
            label = f["filename"].split("-")[1].split(".post")[0]  # 9.0.0.312.post1 holds 9.0.0.312's aarch64 wheel
            if f["filename"].endswith(".whl") and all(p.isdigit() for p in label.split(".")) \
                    and not f.get("yanked"):
                releases.setdefault(label, set()).add(f["filename"])
        for label, have in releases.items():
            for platform, tail in (("linux-x86_64", "x86_64.whl"), ("linux-sbsa", "aarch64.whl"),
                                   ("windows-x86_64", "win_amd64.whl")):
                choice = plan(project, label, platform)
                fits = {n for n in have if n.endswith(tail)}
                if fits:
                    assert choice.wheel is not None and choice.wheel.filename in fits, (project, label, platform)
                else:
                    assert choice.wheel is None and project in choice.why, (project, label, platform)


def test_glibc_below_the_floor_is_refused_with_the_floor():
    choice = plan("nvidia-cudnn-cu13", "9.28.1", "linux-x86_64", glibc=(2, 17))
    assert choice.wheel is None
    assert "glibc 2.27 or newer; this machine has 2.17" in choice.why
    # cuDNN 9.1.0's manylinux2014 wheel (glibc 2.17) fits the same machine.
    assert plan("nvidia-cudnn-cu12", "9.1.0", "linux-x86_64", glibc=(2, 17)).wheel is not None


def test_an_unknown_glibc_takes_the_wheel_and_says_its_floor():
    choice = plan("nvidia-cudnn-cu13", "9.28.1", "linux-sbsa", glibc=None)
    assert choice.wheel.filename.endswith("manylinux_2_27_aarch64.whl")
    assert "needs 2.27 or newer" in choice.glibc_note


def test_releases_pypi_lacks_are_named_with_the_newest():
    label, _ = NEWEST_CU12
    choice = plan("nvidia-cudnn-cu12", "9.99.0", "linux-x86_64")
    assert choice.wheel is None and "PyPI lists no nvidia-cudnn-cu12 release of cuDNN 9.99.0" in choice.why
    assert "newest: %s" % label in choice.why
    assert "for linux-sbsa" in plan("nvidia-cudnn-cu12", "8.9.7", "linux-sbsa").why
    assert plan("nvidia-cudnn-cu12", "9.28.0", "linux-ppc64le").wheel is None


def test_a_yanked_wheel_is_never_taken():
    yanked = [f["filename"] for f in files("nvidia-cudnn-cu11") if f.get("yanked")]
    assert "nvidia_cudnn_cu11-8.9.4.19-py3-none-win_amd64.whl" in yanked
    assert plan("nvidia-cudnn-cu11", "8.9.4.19", "windows-x86_64").wheel is None
    assert plan("nvidia-cudnn-cu11", "8.9.4", "windows-x86_64").wheel.filename == \
        "nvidia_cudnn_cu11-8.9.4.25-py3-none-win_amd64.whl"


def test_development_releases_only_by_their_full_label():
    devs = sorted(f["filename"].split("-")[1] for f in files("nvidia-cudnn-cu13") if ".dev" in f["filename"])
    assert devs
    label = short(devs[-1])
    choice = plan("nvidia-cudnn-cu13", label, "linux-x86_64")
    assert choice.wheel is None or ".dev" not in str(choice.wheel.version)


def test_cudnn7_has_no_wheel_on_pypi():
    """The nvidia-cudnn name holds two placeholder sdists, no wheel: cuDNN 7 comes from NVIDIA's archive only."""
    assert files("nvidia-cudnn") and not wheel_files(files("nvidia-cudnn"))
    assert all(oldest_major(p) >= 8 for p in ("nvidia-cudnn-cu11", "nvidia-cudnn-cu12", "nvidia-cudnn-cu13"))


def oldest_major(project):
    """The lowest cuDNN major among a project's wheels of final releases (0.0.0a0 placeholders left out)."""
    return min(w.version.major for w in wheel_files(files(project)) if not w.version.is_prerelease)


def test_platform_tags_follow_pep600():
    tags = platform_tags("linux-x86_64", (2, 28))
    assert tags[0] == "manylinux_2_28_x86_64" and tags[-1] == "manylinux1_x86_64"
    assert tags.index("manylinux_2_17_x86_64") + 1 == tags.index("manylinux2014_x86_64")
    assert "manylinux2014_aarch64" in platform_tags("linux-sbsa", (2, 28))
    assert not any("manylinux1" in t for t in platform_tags("linux-sbsa", (2, 28)))
    assert platform_tags("windows-x86_64", None) == ["win_amd64"]
    assert manylinux_glibc("manylinux_2_27_aarch64") == (2, 27) and manylinux_glibc("manylinux1_x86_64") == (2, 5)
    assert newest("nvidia-cudnn-cu13", "aarch64.whl")[0] == NEWEST_CU13[0]


def test_the_wheel_index_plans_the_same_file_for_every_release():
    """Two readings of the same names: the wheel index's resolver (knowledge/resolve.release_wheel, which install
    plans with) and wheel_pick (which plans a release newer than the index from PyPI's live list) name the same file
    for every cuDNN release the recorded list holds, on x86_64, aarch64 and Windows."""
    from cudnn_doctor.install.pypi import planned_by_index
    from cudnn_doctor.knowledge.wheel_index import load_wheel_index

    if not load_wheel_index().has_project("nvidia-cudnn-cu12"):
        pytest.skip("the wheel index does not hold NVIDIA's cuDNN wheels")
    compared = 0
    for project in ("nvidia-cudnn-cu11", "nvidia-cudnn-cu12", "nvidia-cudnn-cu13"):
        known = set(load_wheel_index().versions(project))
        for w in wheel_files(files(project)):
            label = short(str(w.version))
            if w.version.is_prerelease or not any(v.startswith(label + ".") for v in known):
                continue
            for platform in ("linux-x86_64", "linux-sbsa", "windows-x86_64"):
                mine = plan(project, label, platform).wheel
                assert planned_by_index(project, label, platform, GLIBC) == (mine.filename if mine else None), \
                    (project, label, platform)
                compared += 1
    assert compared > 300
