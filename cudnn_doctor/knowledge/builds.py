"""The builds `pick` chooses among (compat/framework_builds.toml with frameworks.toml and the derived pins): each
framework release's CUDA variants, the GPU code each carries and how each is installed."""
from __future__ import annotations

from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from ..versions import major_of, mm_text, ver
from .frameworks import FrameworkKnowledge
from .tables import Domain, Tables, row_source

# The PyPI project whose wheels stand for a framework's builds in [wheel_code].
_WHEEL_PROJECTS = {"cupy": ("cupy-cuda12x", "cupy-cuda13x"), "onnxruntime": ("onnxruntime-gpu",),
                   "tensorflow": ("tensorflow",), "torch": ("torch",), "paddlepaddle": ("paddlepaddle-gpu",)}


class Build(NamedTuple):
    """One installable build: a framework release made with one CUDA, and the GPU code it carries."""

    framework: str
    release: str
    cuda: str  # "12.6"; a bare major ("12") where only the major is known
    default: bool  # what a plain `pip install` from PyPI gets (else it comes from the framework's own index)
    sass: Tuple[str, ...] = ()
    ptx: Tuple[str, ...] = ()
    min_cc: str = ""  # coverage by a documented floor instead of code read (JAX compiles kernels at run time)
    driver_branch: str = ""  # a documented driver floor that replaces the CUDA release's own
    code_source: str = ""  # where the GPU code (or the floor) comes from; "" when the knowledge lacks it
    cudnn: str = ""  # the cuDNN wheel it pins
    sources: Tuple[str, ...] = ()

    @property
    def code_known(self) -> bool:
        return bool(self.sass or self.ptx or self.min_cc)


def arch_names(ccs: List[str], ptx: str) -> Tuple[Tuple[str, ...], Tuple[str, ...]]:
    """PyTorch's support-table notation (["7.5", "8.0"], "12.0") as cubin and PTX names (sm_75, compute_120)."""
    def num(cc: str) -> str:
        return cc.replace(".", "")
    return tuple("sm_%s" % num(c) for c in ccs), (("compute_%s" % num(ptx),) if ptx else ())


class BuildKnowledge(Domain):
    """Which builds exist per framework, what GPU code each carries and how to install it."""

    def __init__(self, tables: Tables, frameworks: FrameworkKnowledge) -> None:
        super().__init__(tables)
        self.frameworks = frameworks
        self._builds: Dict[str, List[Build]] = {}  # by framework (framework_builds)

    def spconv_cuda_builds(self) -> List[str]:
        """The CUDA releases spconv publishes a build for (spconv-cuXYZ), oldest first ([spconv])."""
        return [str(c) for c in self.table("framework_builds", "spconv").get("cuda", [])]

    def spconv_arch_variable(self) -> str:
        """The variable libspconv's C++ build takes its architecture list from ([spconv])."""
        return str(self.table("framework_builds", "spconv").get("arch_variable", "CUMM_CUDA_ARCH_LIST"))

    def library_min_cc(self, table: str) -> Optional[str]:
        """The least compute capability a library's kernels run on ([cuequivariance] min_cc), where compat has it."""
        floor = self.table("framework_builds", table).get("min_cc")
        return str(floor) if floor else None

    def wheel_code(self, project: str, version: str) -> Optional[Dict[str, Any]]:
        table = self.table("framework_builds", "wheel_code")
        for row in table.get("rows", []):
            if row["project"] == project and ver(row["version"]) == ver(version):
                return dict(row, status=row_source(table, row)[0], source=row_source(table, row)[1])
        return None

    def install_recipe(self, framework: str) -> Dict[str, Any]:
        table = self.table("framework_builds", "install")
        for row in table.get("rows", []):
            if row["framework"] == framework:
                return dict(row, source=row_source(table, row)[1])
        return {}

    def extension_project(self, module: str) -> Optional[str]:
        """The PyPI project that builds this top-level PyTorch extension module (flash_attn_2_cuda: flash-attn),
        from compat/packages.toml; None where the table does not know it."""
        rows = self.table("packages", "torch_extension_modules").get("rows", [])
        return next((str(r["project"]) for r in rows if r["module"] == module), None)

    def conda_override(self) -> Tuple[str, str]:
        """(the variable that stands in for the driver's CUDA in a conda/pixi solve, the channel)."""
        table = self.data.get("framework_builds", {}).get("install", {})
        return str(table.get("conda_override", "")), str(table.get("conda_channel", ""))

    def framework_builds(self, framework: str) -> List[Build]:
        """Every build the knowledge names for a framework, newest release first, PyPI's default build first."""
        cache = self._builds  # the tables never change
        if framework not in cache:
            make = {"torch": self._torch_builds, "tensorflow": self._tensorflow_builds, "jax": self._jax_builds}
            builds = make[framework]() if framework in make else self._wheel_builds(framework)
            cache[framework] = sorted(builds, key=lambda b: (ver(b.release), b.default, ver(b.cuda)), reverse=True)
        return list(cache[framework])

    def _pins(self, framework: str) -> List[Dict[str, Any]]:
        return [r for r in self.data.get("derived", {}).get("frameworks", []) if r.get("framework") == framework]

    def _from_wheel(self, project: str, release: str) -> Dict[str, Any]:
        row = self.wheel_code(project, release)
        if row is None:
            return {}
        return {"sass": tuple(row["sass"]), "ptx": tuple(row["ptx"]), "code_source": row["source"]}

    def _torch_builds(self) -> List[Build]:
        out = []
        for pin in self._pins("torch"):
            for row in self.frameworks.torch_rows(pin["version"]):
                default = mm_text(row["cuda"]) == mm_text(pin["cuda"])
                code = self._from_wheel("torch", pin["version"]) if default else {}
                arch = self.frameworks.pytorch_arch(pin["version"], row["cuda"])
                if not code and arch:
                    sass, ptx = arch_names(list(arch["arch"]), str(arch.get("ptx", "")))
                    code = {"sass": sass, "ptx": ptx, "code_source": str(arch["source"])}
                out.append(Build("torch", pin["version"], mm_text(row["cuda"]) or str(row["cuda"]), default,
                                 cudnn=pin["cudnn"] if default else row["cudnn"],
                                 sources=(pin["source"] if default else row["source"],), **code))
        return out

    def _tensorflow_builds(self) -> List[Build]:
        out = []
        for pin in self._pins("tensorflow"):
            tested = self.frameworks.tensorflow_row(pin["version"])
            cuda = pin["cuda"] or (tested["cuda"] if tested else "")
            if cuda:
                out.append(Build("tensorflow", pin["version"], mm_text(cuda) or cuda, True, cudnn=pin["cudnn"],
                                 sources=(pin["source"],), **self._from_wheel("tensorflow", pin["version"])))
        return out

    def _jax_builds(self) -> List[Build]:
        plugins = {row["plugin"]: row for row in self.frameworks.framework_rows("jax")}
        out = []
        for pin in self._pins("jax"):
            doc = plugins.get(pin["project"])
            if doc is None:
                continue
            out.append(Build("jax", pin["version"], str(pin["cuda_major"]), True, min_cc=str(doc["min_cc"]),
                             driver_branch=str(doc["driver_linux"]), code_source=str(doc["source"]),
                             cudnn=pin["cudnn"], sources=(pin["source"],)))
        return out

    def _wheel_builds(self, framework: str) -> List[Build]:
        table = self.table("framework_builds", "wheel_code")
        return [Build(framework, row["version"], str(row["cuda"]), True, sass=tuple(row["sass"]),
                      ptx=tuple(row["ptx"]), code_source=row_source(table, row)[1], sources=(row["source"],))
                for row in table.get("rows", []) if row["project"] in _WHEEL_PROJECTS.get(framework, ())]

    def build_pip_project(self, build: Build) -> str:
        """What pip installs for a build: 'torch', 'tensorflow[and-cuda]', 'jax[cuda12]', 'cupy-cuda12x'."""
        recipe = self.install_recipe(build.framework)
        return str(recipe.get("pip", build.framework)).replace("<M>", str(major_of(build.cuda)))
