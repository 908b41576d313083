"""Container images for the image tests: real ones built with Debian's umoci/skopeo from real NVIDIA libraries
(PyPI wheels), and hand-written OCI layouts for the hostile layers no image tool would produce."""
from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import shutil
import subprocess
import tarfile
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import realdata

ENV = {
    "PATH": "/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "NVIDIA_REQUIRE_CUDA": "cuda>=12.4 brand=tesla,driver>=470,driver<471 brand=unknown,driver>=470,driver<471",
    "NVIDIA_DRIVER_CAPABILITIES": "compute,utility",
    "NVIDIA_VISIBLE_DEVICES": "all",
    "CUDA_VERSION": "12.4.1",
    "LD_LIBRARY_PATH": "/usr/local/nvidia/lib:/usr/local/nvidia/lib64",
}


def tools_missing() -> Optional[str]:
    """Why the real-image tests cannot run here (None when umoci and skopeo are installed or installable)."""
    if shutil.which("umoci") and shutil.which("skopeo"):
        return None
    if os.geteuid() == 0 and shutil.which("apt-get"):
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        subprocess.run(["apt-get", "update", "-qq"], capture_output=True, env=env)
        subprocess.run(["apt-get", "install", "-y", "-qq", "umoci", "skopeo"], capture_output=True, env=env)
        if shutil.which("umoci") and shutil.which("skopeo"):
            return None
    return "umoci and skopeo are not installed (Debian: apt-get install umoci skopeo)"


def _run(*argv: str) -> None:
    proc = subprocess.run(list(argv), capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError("%s failed: %s" % (" ".join(argv), proc.stderr[-400:]))


def _copy(src: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src, dest)


def build_cuda_image(work: Path) -> Tuple[Path, Path]:
    """An OCI layout `layout:v2` of two layers (plus its base), built with umoci from real NVIDIA libraries:
    layer 1 a CUDA 12.4 runtime under /usr/local/cuda-12.4 (symlinked as /usr/local/cuda), cuDNN 8 and an ld.so
    configuration; layer 2 removes cuDNN 8 (a whiteout), adds cuDNN 9 and overrides the ld.so configuration.
    Returns (layout folder, the unpacked root of the same image, by umoci)."""
    cudart = realdata.real_wheel(*realdata.CUDART12)
    cudnn8 = realdata.real_wheel(*realdata.CUDNN8)
    cudnn9 = realdata.real_wheel(*realdata.CUDNN9)
    if not (cudart and cudnn8 and cudnn9):
        raise RuntimeError("the NVIDIA wheels could not be downloaded")
    layout = work / "layout"
    _run("umoci", "init", "--layout", str(layout))
    _run("umoci", "new", "--image", "%s:base" % layout)
    bundle = work / "b1"
    _run("umoci", "unpack", "--rootless", "--image", "%s:base" % layout, str(bundle))
    root = bundle / "rootfs"
    lib64 = root / "usr/local/cuda-12.4/lib64"
    _copy(next((cudart / "nvidia/cuda_runtime/lib").glob("libcudart.so.12*")), lib64 / "libcudart.so.12.4.127")
    os.symlink("libcudart.so.12.4.127", lib64 / "libcudart.so.12")
    os.symlink("cuda-12.4", root / "usr/local/cuda")
    x86 = root / "usr/lib/x86_64-linux-gnu"
    _copy(cudnn8 / "nvidia/cudnn/lib/libcudnn.so.8", x86 / "libcudnn.so.8.9.7")
    os.symlink("libcudnn.so.8.9.7", x86 / "libcudnn.so.8")
    (root / "etc/ld.so.conf.d").mkdir(parents=True)
    (root / "etc/ld.so.conf").write_text("include /etc/ld.so.conf.d/*.conf\n")
    (root / "etc/ld.so.conf.d/cuda.conf").write_text("/usr/local/cuda-12.4/lib64\n")
    _run("umoci", "repack", "--image", "%s:base" % layout, str(bundle))
    shutil.rmtree(bundle)
    bundle = work / "b2"
    _run("umoci", "unpack", "--rootless", "--image", "%s:base" % layout, str(bundle))
    root = bundle / "rootfs"
    x86 = root / "usr/lib/x86_64-linux-gnu"
    (x86 / "libcudnn.so.8").unlink()
    (x86 / "libcudnn.so.8.9.7").unlink()
    _copy(cudnn9 / "nvidia/cudnn/lib/libcudnn.so.9", x86 / "libcudnn.so.9.1.0")
    _copy(cudnn9 / "nvidia/cudnn/lib/libcudnn_graph.so.9", x86 / "libcudnn_graph.so.9.1.0")
    os.symlink("libcudnn.so.9.1.0", x86 / "libcudnn.so.9")
    os.symlink("libcudnn_graph.so.9.1.0", x86 / "libcudnn_graph.so.9")
    (root / "etc/ld.so.conf.d/cuda.conf").write_text("/usr/local/cuda/lib64\n/usr/lib/x86_64-linux-gnu\n")
    _run("umoci", "repack", "--image", "%s:v2" % layout, str(bundle))
    shutil.rmtree(bundle)
    args = ["umoci", "config", "--image", "%s:v2" % layout]
    for name, value in ENV.items():
        args += ["--config.env", "%s=%s" % (name, value)]
    _run(*args)
    unpacked = work / "unpacked"
    _run("umoci", "unpack", "--rootless", "--image", "%s:v2" % layout, str(unpacked))
    return layout, unpacked / "rootfs"


def docker_archive(layout: Path, dest: Path) -> Path:
    """The same image as `docker save` writes it, converted by skopeo."""
    _run("skopeo", "copy", "oci:%s:v2" % layout, "docker-archive:%s:cuda/test:v2" % dest)
    return dest


def oci_archive(layout: Path, dest: Path) -> Path:
    _run("skopeo", "copy", "oci:%s:v2" % layout, "oci-archive:%s:v2" % dest)
    return dest


# --- hand-written layouts: what no image tool writes, but an attacker can -------------------------------------


def tar_bytes(entries: Sequence[Tuple[tarfile.TarInfo, Optional[bytes]]], compress: bool = True) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for info, data in entries:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    raw = buf.getvalue()
    return gzip.compress(raw) if compress else raw


def entry(name: str, data: Optional[bytes] = None, kind: bytes = tarfile.REGTYPE, link: str = "",
          mode: int = 0o644, size: Optional[int] = None) -> Tuple[tarfile.TarInfo, Optional[bytes]]:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode = kind, link, mode
    info.size = len(data) if data is not None else 0
    if kind == tarfile.DIRTYPE:
        info.mode = 0o755
    return info, data


def write_layout(folder: Path, layers: List[bytes], env: Dict[str, str], tag: str = "latest") -> Path:
    """An OCI image layout holding one image of these layer blobs (bottom first) and this Env."""
    blobs = folder / "blobs" / "sha256"
    blobs.mkdir(parents=True)

    def put(data: bytes) -> Dict[str, object]:
        digest = hashlib.sha256(data).hexdigest()
        (blobs / digest).write_bytes(data)
        return {"digest": "sha256:" + digest, "size": len(data)}

    config = {"architecture": "amd64", "os": "linux", "config": {"Env": ["%s=%s" % kv for kv in env.items()]},
              "rootfs": {"type": "layers", "diff_ids": []}}
    manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "config": dict(put(json.dumps(config).encode()), mediaType="application/vnd.oci.image.config.v1+json"),
                "layers": [dict(put(layer), mediaType="application/vnd.oci.image.layer.v1.tar+gzip")
                           for layer in layers]}
    index = {"schemaVersion": 2, "manifests": [dict(put(json.dumps(manifest).encode()),
                                                    mediaType="application/vnd.oci.image.manifest.v1+json",
                                                    annotations={"org.opencontainers.image.ref.name": tag})]}
    (folder / "index.json").write_text(json.dumps(index))
    (folder / "oci-layout").write_text(json.dumps({"imageLayoutVersion": "1.0.0"}))
    return folder


CUPY = ("cupy-cuda12x", "13.3.0")


def add_cupy_layer(layout: Path, work: Path) -> Optional[str]:
    """A third layer over `v2`, tagged `cupy`: CuPy's dist-info and its CUB kernels (a real fat binary with sm_50 to
    sm_90 cubins and compute_90 PTX) in /usr/local/lib/python3.11/site-packages. None when the wheel cannot be had."""
    import zipfile

    wheel = realdata.wheel_file(*CUPY)
    if wheel is None:
        return None
    bundle = work / "b3"
    _run("umoci", "unpack", "--rootless", "--image", "%s:v2" % layout, str(bundle))
    site = bundle / "rootfs/usr/local/lib/python3.11/site-packages"
    with zipfile.ZipFile(wheel) as zf:
        for name in zf.namelist():
            if name.startswith(("cupy_cuda12x-13.3.0.dist-info/", "cupy/cuda/cub.")):
                zf.extract(name, site)
    _run("umoci", "repack", "--image", "%s:cupy" % layout, str(bundle))
    shutil.rmtree(bundle)
    return "%s:cupy" % layout
