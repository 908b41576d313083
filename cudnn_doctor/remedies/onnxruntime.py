"""ONNX Runtime's CUDA provider finds CUDA and cuDNN only on the plain search path: the fix names what the installed
release really offers (its [cuda,cudnn] extras and preload_dlls() exist from one release on, compat says which)."""
from __future__ import annotations

from typing import Optional, Sequence

from ..knowledge import Compat
from ..model import Fix
from .shell import advice, or_else, prepend_ld_path, run


def onnxruntime_cuda_fix(compat: Compat, version: str, site: Optional[str], missing: Sequence[str] = ()) -> Fix:
    """Install the cuDNN wheel this release's build needs into its environment and put that folder on
    LD_LIBRARY_PATH (works for every release); name the release's own extras and preload_dlls() only where it has
    them, else the newer onnxruntime-gpu that has them."""
    table = compat.table("framework_features", "onnxruntime_gpu")
    build = compat.framework_build("onnxruntime_gpu", version)
    release = version.split("+")[0]
    if build is None:
        return advice("install the CUDA and cuDNN libraries onnxruntime-gpu %s was built for and put their folder on "
                      "LD_LIBRARY_PATH [%s]" % (release, table.get("source")))
    wanted = [n for n in missing if not n.startswith("libcudnn")] if missing else []
    commands = ['pip install "%s==%s"' % (build["cudnn_wheel"], build["cudnn_pin"])]
    if site:
        commands.append(prepend_ld_path("%s/nvidia/cudnn/lib" % site.rstrip("/")))
    fix = run(*commands)
    if compat.framework_feature("onnxruntime_gpu", "preload_dlls", release):
        other = ('or `pip install "onnxruntime-gpu[%s]==%s"` and call onnxruntime.preload_dlls() before creating '
                 'the session' % (",".join(table.get("pip_extras", [])), release))
    else:
        newer = table.get("preload_dlls_since")
        other = ("onnxruntime-gpu %s has neither the [cuda,cudnn] extras nor onnxruntime.preload_dlls(), which exist "
                 "from %s; or move to one built for cuDNN %s: `pip install \"onnxruntime-gpu[cuda,cudnn]>=%s\"` and "
                 "call onnxruntime.preload_dlls()" % (release, newer, 9, newer))
    if wanted:
        other += "; it also needs %s of CUDA %s on that path" % (", ".join(wanted), build["cuda"])
    return or_else(fix, other + " [%s]" % table.get("source"), "%s   (%s)")
