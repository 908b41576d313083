"""URL downloads and --version/--cuda manifest resolution, against a local HTTP server on 127.0.0.1."""
from __future__ import annotations

import http.server
import json
import socket
import threading
from contextlib import contextmanager
from functools import partial
from pathlib import Path

import pytest

import archive_factory as af
from kit import have_gcc



def loopback_works() -> bool:
    """Whether a server on 127.0.0.1 can be reached: not under `unshare -n` until `ip link set lo up` (.ci/run does)."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        try:
            socket.create_connection(listener.getsockname(), timeout=2).close()
        except OSError:
            return False
    return True


LOOPBACK = pytest.mark.skipif(not loopback_works(), reason="the loopback interface is down (unshare -n without `ip link "
                              "set lo up`): no local HTTP server can be reached")
pytestmark = [pytest.mark.skipif(not have_gcc(), reason="gcc is needed to build the fake NVIDIA libraries"), LOOPBACK]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextmanager
def serve(directory: Path):
    """A static file server in a thread; shut down on exit, and it stops itself after 60 s regardless."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(_QuietHandler, directory=str(directory)))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    watchdog = threading.Timer(60, server.shutdown)
    watchdog.daemon = True
    watchdog.start()
    try:
        yield "http://127.0.0.1:%d/" % server.server_address[1]
    finally:
        watchdog.cancel()
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.fixture
def world(machine, tmp_path, monkeypatch):
    base = af.toolkit_with_cudnn9(machine, tmp_path, monkeypatch)
    web = tmp_path / "web"
    archive = af.make("linux-xz", web / "cudnn" / "linux-x86_64")
    return dict(base, web=web, archive=archive)


def _manifest(world, sha=None, size=None, variants=("12",)):
    rel = "cudnn/linux-x86_64/" + world["archive"].name
    entry = {"relative_path": rel, "sha256": sha or af.sha256_file(world["archive"]), "md5": "0" * 32,
             "size": str(size or world["archive"].stat().st_size)}
    data = {"release_date": "2024-04-15", "release_label": "9.1.0", "release_product": "cudnn",
            "cudnn": {"name": "NVIDIA CUDA Deep Neural Network library", "license": "cudnn",
                      "license_path": "cudnn/LICENSE.txt", "version": "9.1.0.70",
                      "linux-x86_64": {"cuda%s" % v: dict(entry) for v in variants},
                      "cuda_variant": list(variants),
                      "linux-sbsa": {"cuda12": dict(entry, relative_path="cudnn/linux-sbsa/x.tar.xz")}}}
    (world["web"] / "redistrib_9.1.0.json").write_text(json.dumps(data))


def test_url_download_installs_and_leaves_no_temp_files(world):
    with serve(world["web"]) as base:
        url = base + "cudnn/linux-x86_64/" + world["archive"].name
        result = af.invoke("install", url, "--cuda-home", world["home"], "--no-smoke", "--allow-http",
                           "--sha256", af.sha256_file(world["archive"]), "--json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["source"]["kind"] == "url" and doc["source"]["sha256"] == af.sha256_file(world["archive"])
    assert (world["home"] / "lib64" / "libcudnn.so.9.1.0").is_file()
    assert list(world["temp"].iterdir()) == []
    assert result.stderr == ""  # no progress bar when stderr is not a terminal


def test_url_checksum_mismatch_deletes_the_download_and_changes_nothing(world):
    before = af.snapshot(world["tmp"])
    with serve(world["web"]) as base:
        url = base + "cudnn/linux-x86_64/" + world["archive"].name
        result = af.invoke("install", url, "--cuda-home", world["home"], "--no-smoke", "--allow-http",
                           "--sha256", "f" * 64)
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1 and "download deleted" in result.stderr and "fix:" in result.stderr
    assert af.snapshot(world["tmp"]) == before


def test_plain_http_is_refused_without_allow_http(world):
    before = af.snapshot(world["tmp"])
    result = af.invoke("install", "http://127.0.0.1:9/x.tar.xz", "--cuda-home", world["home"])
    assert result.exit_code == 2 and "plain http" in result.stderr and "--allow-http" in result.stderr
    assert af.snapshot(world["tmp"]) == before


def test_http_404_is_one_line(world):
    with serve(world["web"]) as base:
        result = af.invoke("install", base + "missing.tar.xz", "--cuda-home", world["home"], "--allow-http",
                           "--sha256", "0" * 64)
    assert result.exit_code == 1 and "HTTP 404" in result.stderr and result.stderr.count("\n") == 1


def test_version_and_cuda_resolve_through_the_manifest(world):
    _manifest(world)
    with serve(world["web"]) as base:
        result = af.invoke("install", "--version", "9.1.0", "--cuda", "12", "--cuda-home", world["home"],
                           "--no-smoke", "--allow-http", "--sha256", af.sha256_file(world["archive"]), "--json",
                           env={"CUDNN_DOCTOR_REDIST_URL": base})
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["source"]["kind"] == "manifest"
    assert doc["source"]["manifest"]["relative_path"].endswith(world["archive"].name)
    assert doc["source"]["manifest"]["variant"] == "cuda12"
    assert (world["home"] / "lib64" / "libcudnn.so.9.1.0").is_file()


def test_manifest_url_option_and_wrong_checksum_in_manifest(world):
    _manifest(world, sha="0" * 64)
    before = af.snapshot(world["tmp"])
    with serve(world["web"]) as base:
        result = af.invoke("install", "--version", "9.1.0", "--cuda", "12", "--cuda-home", world["home"],
                           "--allow-http", "--sha256", "0" * 64, "--manifest-url", base + "redistrib_9.1.0.json")
    assert result.exit_code == 1 and "sha256 of" in result.stderr
    assert af.snapshot(world["tmp"]) == before


def _install_from_redist(world, version):
    """`install --version V --cuda 12` from the test server's redist index, with the archive's own sha256."""
    with serve(world["web"]) as base:
        return af.invoke("install", "--version", version, "--cuda", "12", "--cuda-home", world["home"],
                         "--allow-http", "--sha256", af.sha256_file(world["archive"]),
                         env={"CUDNN_DOCTOR_REDIST_URL": base})


def test_manifest_without_the_cuda_variant(world):
    _manifest(world, variants=("11",))
    result = _install_from_redist(world, "9.1.0")
    assert result.exit_code == 1
    assert "no build for CUDA 12" in result.stderr and "--cuda with one of: 11" in result.stderr


def test_unknown_release_is_one_line(world):
    result = _install_from_redist(world, "9.99.0")
    assert result.exit_code == 1 and "no cuDNN release 9.99.0" in result.stderr


def test_manifest_size_mismatch(world):
    _manifest(world, size=123)
    result = _install_from_redist(world, "9.1.0")
    assert result.exit_code == 1 and "larger than expected" in result.stderr


def test_usage_errors(world):
    r = af.invoke("install", "--version", "9.1.0", "--cuda-home", world["home"])
    assert r.exit_code == 2 and "--version needs --cuda" in r.stderr
    r = af.invoke("install", "--cuda-home", world["home"])
    assert r.exit_code == 2 and "nothing to install" in r.stderr
    r = af.invoke("install", "x.tar.xz", "--cuda-home", world["home"], "--prefix", world["tmp"])
    assert r.exit_code == 2 and "exclude each other" in r.stderr
    r = af.invoke("install", "ftp://example.com/x.tar.xz", "--cuda-home", world["home"])
    assert r.exit_code == 2 and "scheme" in r.stderr
    r = af.invoke("install", str(world["tmp"] / "nope.tar.xz"), "--cuda-home", world["home"])
    assert r.exit_code == 2 and "no such archive" in r.stderr
    r = af.invoke("install", world["archive"], "--cuda-home", world["tmp"] / "nowhere")
    assert r.exit_code == 2 and "--cuda-home" in r.stderr and "does not exist" in r.stderr  # a usage error (issue 22)


def test_pick_from_manifest_single_variant_form():
    from cudnn_doctor.install.errors import Refusal
    from cudnn_doctor.install.fetch import pick_from_manifest

    data = {"cudnn": {"version": "8.9.7.29", "linux-x86_64": {
        "relative_path": "cudnn/linux-x86_64/cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz",
        "sha256": "A" * 64, "size": "100"}}}
    chosen = pick_from_manifest(data, "8.9.7", "12", "linux-x86_64")
    assert chosen["sha256"] == "a" * 64 and chosen["size"] == 100
    with pytest.raises(Refusal, match="only built for CUDA 12"):
        pick_from_manifest(data, "8.9.7", "11", "linux-x86_64")
    with pytest.raises(Refusal, match="not 9.1.0"):
        pick_from_manifest(data, "9.1.0", "12", "linux-x86_64")


@pytest.mark.parametrize("how", ["url", "version"])
def test_allow_http_without_sha256_is_refused_before_any_download(world, how):
    """--allow-http alone would install an unverified archive; a checksum brought by the user is required."""
    _manifest(world)
    before = af.snapshot(world["tmp"])
    requests = []

    class Counting(_QuietHandler):
        def do_GET(self):
            requests.append(self.path)
            super().do_GET()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(Counting, directory=str(world["web"])))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        base = "http://127.0.0.1:%d/" % server.server_address[1]
        source = [base + "cudnn/linux-x86_64/" + world["archive"].name] if how == "url" else \
            ["--version", "9.1.0", "--cuda", "12"]
        result = af.invoke("install", *source, "--cuda-home", world["home"], "--no-smoke", "--allow-http",
                           env={"CUDNN_DOCTOR_REDIST_URL": base})
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert result.stderr.count("\n") == 1 and "without --sha256" in result.stderr
    assert "fix: add --sha256" in result.stderr
    assert requests == []  # refused before anything was fetched
    assert af.snapshot(world["tmp"]) == before
    assert not (world["home"] / "lib64" / "libcudnn.so.9.1.0").exists()
