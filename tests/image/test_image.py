"""check --image / --against and fleet --image on real images (umoci/skopeo, real NVIDIA libraries from PyPI
wheels) and on hostile layers written by hand."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest
from clirunner import CliRunner

import image_factory as factory
from cudnn_doctor.cli import app
from cudnn_doctor.commands.check_image import read_image_facts
from cudnn_doctor.diagnose import collect_facts

runner = CliRunner()


@pytest.fixture(scope="session")
def cuda_image(tmp_path_factory):
    why = factory.tools_missing()
    if why:
        pytest.skip(why)
    work = tmp_path_factory.mktemp("image")
    try:
        layout, rootfs = factory.build_cuda_image(work)
    except RuntimeError as exc:
        pytest.skip(str(exc))
    return layout, rootfs, work


def _comparable(facts) -> dict:
    """Facts as the report holds them, less what says where and how fast they were read."""
    doc = facts.to_dict()
    for key in ("timings_ms", "image"):
        doc.pop(key, None)
    doc["host"].pop("root")
    return doc


def _node_report(folder: Path, host: str, driver: str, cuda: str, gpu: str = "NVIDIA A100-SXM4-80GB",
                 cc: str = "8.0", count: int = 8) -> Path:
    fields = {"arch": "x86_64", "kernel": "6.8.0", "driver": driver, "driver_cuda": cuda, "kernel_module": driver,
              "gpus": [{"name": gpu, "compute_capability": cc, "mig": False, "count": count}], "toolkits": [],
              "cudnn": [], "frameworks": [], "loads_cudnn": []}
    doc = {"schema_version": "1", "tool": {"name": "cudnn-doctor", "version": "0.1.0"}, "command": "check",
           "exit_code": 0, "host": host, "started_at": "2026-11-24T01:00:00Z", "verdict": "ok",
           "fingerprint": {"id": "%016x" % (hash((driver, cuda, gpu, count)) & (1 << 64) - 1), "version": 1,
                           "fields": fields}, "facts": {}, "findings": []}
    path = folder / ("%s.json" % host)
    path.write_text(json.dumps(doc, indent=2, sort_keys=True))
    return path


@pytest.mark.realdata
def test_oci_layout_reads_to_the_same_facts_as_root_on_the_unpacked_image(cuda_image):
    layout, rootfs, _ = cuda_image
    from_image = read_image_facts("oci:%s:v2" % layout, None)
    from_root = collect_facts(str(rootfs), factory.ENV)
    assert _comparable(from_image) == _comparable(from_root)
    assert [c.version for c in from_image.cudnn] == ["9.1.0"]  # the cuDNN 8 of layer 1 is whited out
    assert from_image.toolkits[0].version == "12.4" and from_image.toolkits[0].link_chain[-1] == "/usr/local/cuda-12.4"


@pytest.mark.realdata
@pytest.mark.parametrize("transport", ["docker-archive", "oci-archive"])
def test_archives_read_to_the_same_facts_as_the_layout(cuda_image, transport):
    layout, rootfs, work = cuda_image
    dest = work / ("%s.tar" % transport)
    if not dest.exists():
        (factory.docker_archive if transport == "docker-archive" else factory.oci_archive)(layout, dest)
    ref = "%s:%s" % (transport, dest) + (":cuda/test:v2" if transport == "docker-archive" else "")
    assert _comparable(read_image_facts(ref, None)) == _comparable(collect_facts(str(rootfs), factory.ENV))


@pytest.mark.realdata
def test_layers_whiteouts_and_overrides_are_applied_in_order(cuda_image):
    layout, _, _ = cuda_image
    facts = read_image_facts("oci:%s:v2" % layout, None)
    img = facts.image
    assert len(img.layers) == 2 and img.layers[1]["whiteouts"] == 2
    assert "/usr/lib/x86_64-linux-gnu/libcudnn.so.8" in img.layers[1]["removed"]
    assert facts.loader.conf_dirs == ["/usr/local/cuda/lib64", "/usr/lib/x86_64-linux-gnu"]  # layer 2's file
    assert img.requirements == [factory.ENV["NVIDIA_REQUIRE_CUDA"]] and img.env["CUDA_VERSION"] == "12.4.1"


@pytest.mark.realdata
def test_check_image_alone_leaves_driver_and_gpus_to_the_node(cuda_image):
    layout, _, _ = cuda_image
    result = runner.invoke(app, ["check", "--image", "oci:%s:v2" % layout, "--json"])
    doc = json.loads(result.stdout)
    ids = {f["id"] for f in doc["findings"]}
    assert "CD810" in ids and not any(i.startswith(("CD1", "CD2")) for i in ids)
    assert doc["facts"]["host"]["root"] == "oci:%s:v2" % layout


@pytest.mark.realdata
def test_against_finds_the_runtime_refusal_on_an_old_driver_and_nothing_on_a_fitting_node(cuda_image, tmp_path):
    layout, _, _ = cuda_image
    old = _node_report(tmp_path, "old001", "535.183.01", "12.2")
    new = _node_report(tmp_path, "new001", "580.95.05", "13.0")
    refused = runner.invoke(app, ["check", "--image", "oci:%s:v2" % layout, "--against", str(old), "--json"])
    hit = [f for f in json.loads(refused.stdout)["findings"] if f["id"] == "CD811"]
    assert refused.exit_code == 1 and hit[0]["severity"] == "error"
    assert "unsatisfied condition: cuda>=12.4, please update your driver" in hit[0]["title"]
    fits = runner.invoke(app, ["check", "--image", "oci:%s:v2" % layout, "--against", str(new), "--json"])
    assert [f["severity"] for f in json.loads(fits.stdout)["findings"] if f["id"] == "CD811"] == ["info"]


@pytest.mark.realdata
def test_fleet_image_names_which_nodes_can_run_it(cuda_image, tmp_path):
    layout, _, _ = cuda_image
    reports = tmp_path / "reports"
    reports.mkdir()
    for i in range(1, 4):
        _node_report(reports, "gpu%03d" % i, "580.95.05", "13.0")
    for i in range(4, 6):
        _node_report(reports, "gpu%03d" % i, "535.183.01", "12.2")
    result = runner.invoke(app, ["fleet", str(reports), "--image", "oci:%s:v2" % layout, "--json"])
    doc = json.loads(result.stdout)
    assert doc["command"] == "fleet" and doc["schema_version"] == "1"
    assert doc["hosts_by_image_verdict"]["refused"] == "gpu[004-005]"
    assert doc["image_verdicts"]["refused"] == 2 and doc["nodes"] == 5
    refused = [c for c in doc["node_classes"] if c["verdict"] == "refused"][0]
    assert "cuda>=12.4" in refused["condition"] and refused["hosts"] == "gpu[004-005]"
    # cuDNN 9 without its sub-libraries is the image's own problem: said once, not per node class
    assert "CD402" in {f["id"] for f in doc["image_findings"]}
    assert not any(f["id"] == "CD402" for c in doc["node_classes"] for f in c["findings"])
    assert doc["hosts_by_image_verdict"]["fails"] == "gpu[001-003]" and "groups" in doc and "reports" in doc
    assert result.exit_code == 1
    human = runner.invoke(app, ["fleet", str(reports), "--image", "oci:%s:v2" % layout, "--no-color"])
    assert "gpu[004-005]" in human.stdout and "refused" in human.stdout


def _listing(root: str, folders) -> list:
    out = []
    for top in folders:
        for folder, dirs, files in os.walk(os.path.join(root, top.lstrip("/"))):
            for name in dirs + files:
                out.append("/" + os.path.relpath(os.path.join(folder, name), root))
    return sorted(out)


@pytest.mark.realdata
def test_podman_lists_the_same_files_as_image(cuda_image, tmp_path):
    """Where podman can run a container, a shell inside it lists exactly the files --image read."""
    layout, _, work = cuda_image
    busybox = shutil.which("busybox")
    if not shutil.which("podman") or not shutil.which("umoci"):
        pytest.skip("podman is not installed here (Debian: apt-get install podman)")
    if not busybox or b"ld-linux" in Path(busybox).read_bytes()[:4096]:
        pytest.skip("no static busybox to give the image a shell (Debian: apt-get install busybox-static)")
    bundle = tmp_path / "bundle"
    subprocess.run(["umoci", "unpack", "--rootless", "--image", "%s:v2" % layout, str(bundle)], check=True,
                   capture_output=True)
    (bundle / "rootfs/bin").mkdir(exist_ok=True)
    shutil.copy(busybox, bundle / "rootfs/bin/busybox")
    os.symlink("busybox", bundle / "rootfs/bin/sh")
    subprocess.run(["umoci", "repack", "--image", "%s:shell" % layout, str(bundle)], check=True, capture_output=True)
    folders = ("/usr", "/etc/ld.so.conf.d")
    proc = subprocess.run(["podman", "run", "--rm", "--net", "none", "oci:%s:shell" % layout, "/bin/busybox", "find",
                           *folders, "-mindepth", "1"], capture_output=True, text=True, timeout=300)
    if proc.returncode:
        pytest.skip("podman cannot run a container here: %s" % proc.stderr.strip().splitlines()[-1][-200:])
    from cudnn_doctor.image import open_image

    with open_image("oci:%s:shell" % layout) as opened:
        assert sorted(proc.stdout.split()) == _listing(opened.root, folders)


# --- hostile layers: one line, exit 2, nothing left behind --------------------------------------------------------

E = factory.entry
HOSTILE = {
    "absolute": [E("/etc/evil", b"x")],
    "dotdot": [E("usr/../../evil", b"x")],
    "device": [E("dev/sda", kind=tarfile.CHRTYPE)],
    "link-loop-above-a-file": [E("a", kind=tarfile.SYMTYPE, link="b"), E("b", kind=tarfile.SYMTYPE, link="a"),
                               E("a/x", b"x")],
    "hardlink-out": [E("x", kind=tarfile.LNKTYPE, link="../../etc/passwd")],
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_layers_are_refused_with_one_line(name, tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    layout = factory.write_layout(tmp_path / "img", [factory.tar_bytes(HOSTILE[name])], factory.ENV)
    result = runner.invoke(app, ["check", "--image", "oci:%s" % layout])
    assert result.exit_code == 2, result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cudnn-doctor: error: --image") and "Traceback" not in result.stderr
    assert list((tmp_path / "tmp").iterdir()) == []  # the temporary root is gone
    assert not (Path("/") / "evil").exists()


def test_a_huge_file_is_refused_before_a_byte_is_written(tmp_path):
    info = tarfile.TarInfo("usr/lib/huge.so")
    info.size = 20 << 30
    layer = info.tobuf(tarfile.PAX_FORMAT) + b"\0" * 1024
    layout = factory.write_layout(tmp_path / "img", [factory.tar_bytes([]), __import__("gzip").compress(layer)],
                                  factory.ENV)
    result = runner.invoke(app, ["check", "--image", "oci:%s" % layout])
    assert result.exit_code == 2 and "over the 16.0 GiB limit for one file" in result.stderr


def test_opaque_folders_and_plain_link_loops(tmp_path):
    lower = factory.tar_bytes([E("opt/", kind=tarfile.DIRTYPE), E("opt/old", b"1"),
                               E("opt/keep/", kind=tarfile.DIRTYPE),
                               E("loop1", kind=tarfile.SYMTYPE, link="loop2"),
                               E("loop2", kind=tarfile.SYMTYPE, link="loop1")])
    upper = factory.tar_bytes([E("opt/", kind=tarfile.DIRTYPE), E("opt/.wh..wh..opq", b""), E("opt/new", b"2")])
    layout = factory.write_layout(tmp_path / "img", [lower, upper], {"PATH": "/usr/bin"})
    from cudnn_doctor.image import open_image

    with open_image("oci:%s" % layout) as opened:
        assert sorted(os.listdir(os.path.join(opened.root, "opt"))) == ["new"]
        assert os.readlink(os.path.join(opened.root, "loop1")) == "loop2"  # kept: the probes see a dangling loop
        assert opened.facts.layers[1]["opaque"] == ["/opt"]


def test_bad_references_are_one_line(tmp_path):
    for ref in ("oci:%s/none" % tmp_path, "docker:foo", "oci-archive:%s" % tmp_path):
        result = runner.invoke(app, ["check", "--image", ref])
        assert result.exit_code == 2 and result.stderr.count("\n") == 1, (ref, result.stderr)
    assert runner.invoke(app, ["check", "--against", "x.json"]).exit_code == 2


def test_writes_through_an_image_link_stay_inside_the_image(tmp_path):
    """`etc2 -> /etc` then `etc2/passwd`: the image's absolute link means the image's own /etc."""
    layer = factory.tar_bytes([E("etc/", kind=tarfile.DIRTYPE), E("etc2", kind=tarfile.SYMTYPE, link="/etc"),
                               E("etc2/passwd", b"image's own\n"), E("x", b"data"),
                               E("y", kind=tarfile.LNKTYPE, link="x")])
    layout = factory.write_layout(tmp_path / "img", [layer], {"PATH": "/usr/bin"})
    from cudnn_doctor.image import open_image

    host_passwd = Path("/etc/passwd").read_bytes()
    with open_image("oci:%s" % layout) as opened:
        assert Path(opened.root, "etc/passwd").read_text() == "image's own\n"
        assert os.stat(os.path.join(opened.root, "y")).st_ino == os.stat(os.path.join(opened.root, "x")).st_ino
    assert Path("/etc/passwd").read_bytes() == host_passwd


def test_total_size_entries_and_time_are_bounded(tmp_path):
    from cudnn_doctor.image import ImageError, Limits, open_image

    many = factory.tar_bytes([E("f%04d" % i, b"0123456789") for i in range(600)])
    layout = factory.write_layout(tmp_path / "img", [many], {"PATH": "/usr/bin"})
    for limits, words in ((Limits(max_bytes=100), "unpacks to more than"), (Limits(max_entries=50), "more than 50"),
                          (Limits(seconds=0), "took longer than")):
        with pytest.raises(ImageError, match=words):
            with open_image("oci:%s" % layout, limits):
                pass


@pytest.fixture(scope="session")
def cupy_image(cuda_image):
    layout, _, work = cuda_image
    ref = factory.add_cupy_layer(layout, work)
    if ref is None:
        pytest.skip("the cupy-cuda12x wheel could not be downloaded")
    return "oci:" + ref


@pytest.mark.realdata
def test_framework_cubins_are_judged_against_the_node_gpus(cupy_image, tmp_path):
    """CuPy's CUB carries sm_50..sm_90 cubins: a Kepler node has no kernels for it, an H100 node runs it natively."""
    kepler = _node_report(tmp_path, "k80node", "470.256.02", "11.4", gpu="Tesla K80", cc="3.7", count=4)
    hopper = _node_report(tmp_path, "h100node", "580.95.05", "13.0", gpu="NVIDIA H100 80GB HBM3", cc="9.0")
    old = json.loads(runner.invoke(app, ["check", "--image", cupy_image, "--against", str(kepler), "--json"]).stdout)
    cd201 = [f for f in old["findings"] if f["id"] == "CD201"]
    assert cd201 and cd201[0]["severity"] == "error" and "Tesla K80" in cd201[0]["title"]
    new = json.loads(runner.invoke(app, ["check", "--image", cupy_image, "--against", str(hopper), "--json"]).stdout)
    assert {f["severity"] for f in new["findings"] if f["id"] == "CD201"} == {"info"}  # one per GPU
    assert [fw["name"] for fw in new["facts"]["python"]["frameworks"]] == ["cupy-cuda12x"]


def test_a_layer_that_does_not_match_its_digest_is_refused(tmp_path):
    layout = factory.write_layout(tmp_path / "img", [factory.tar_bytes([E("etc/x", b"honest")])], {"PATH": "/bin"})
    blob = max((tmp_path / "img/blobs/sha256").iterdir(), key=lambda p: p.stat().st_size if p.read_bytes()[:2] ==
               b"\x1f\x8b" else -1)
    blob.write_bytes(factory.tar_bytes([E("etc/x", b"altered")]))
    result = runner.invoke(app, ["check", "--image", "oci:%s" % layout])
    assert result.exit_code == 2 and "does not match its digest" in result.stderr
