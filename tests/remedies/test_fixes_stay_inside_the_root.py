"""A fix for a --root tree is built for it: every builder (walked, with values drawn by hypothesis) and every rule's
fix on the scenario machines acts only on the root's files, from outside it (`ldconfig -r`, ROOT/etc/...), or
inside it (`chroot ROOT`); nothing rewrites the text afterwards (issue 29, item 1)."""
from __future__ import annotations

import copy as _copy
import importlib
import inspect
import pkgutil
from typing import Any, Callable, Dict, List

import pytest
from packaging.requirements import Requirement
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cudnn_doctor.remedies as remedies
import cudnn_doctor.remedies.install  # noqa: F401  (remedies.install.undo_command)
from cudnn_doctor.knowledge import load_compat
from cudnn_doctor.model import Fix, Target
from cudnn_doctor.model_theano import TheanoFacts, TheanoInstall
from cudnn_doctor.remedies.acting import building_for
from cudnn_doctor.remedies.environments import Need, SiteCudnn
from cudnn_doctor.run_results import SmokeResult
from facts_factory import PIP_CUDNN, SYSLIB, TORCH_SITE, cudnn_copy, framework, real_machine, resolution
from shellcheck_kit import outside_root, quoted_commands

DOCTOR = ("/home/u/venv/bin/cudnn-doctor",)
ROOTS = ["/mnt/img", "/srv/roots/node 7"]  # a space: the root is quoted wherever it is named
# Windows builders write PowerShell for the Windows machine itself (no --root tree to act in from outside); the
# composing primitives take finished commands and words, which the builders below hand them. explain's paste answers
# (paste, paste_runtime) are for the machine that printed the pasted text and pick's for the machine or node it is
# asked about: neither takes --root, so they are always built for the default target (tests/explain, tests/pick).
SKIPPED_MODULES = {"windows", "shells", "acting", "paste", "paste_runtime", "pick"}
COMPOSERS = {"run", "stated", "advice", "say", "or_else", "then", "noted", "capitalized", "with_doctor"}

PATHS = st.sampled_from(["/usr/local/cuda-12.4/lib64", SYSLIB, PIP_CUDNN, "/opt/cudnn/lib", "/usr/local/cuda",
                         "/opt/conda", "/usr/local/cuda-13.0/targets/x86_64-linux/lib"])
FILES = st.sampled_from([SYSLIB + "/libcudnn.so.9.1.0", "/usr/include/cudnn_version.h", SYSLIB + "/libcuda.so.1",
                         "/usr/local/cuda/lib64/libcudnn_ops.so.8", "/usr/bin/nvidia-ctk"])
CUDAS = st.sampled_from(["11.8", "12.4", "12.8", "13.0"])
CUDNNS = st.sampled_from(["8.9.7", "9.1.0", "9.14.0"])


def _copies() -> st.SearchStrategy:
    return st.builds(lambda d, v, c, o, p: cudnn_copy(d, v, c, origin=o, package=p, header="%s/cudnn_version.h" % d),
                     PATHS, CUDNNS, CUDAS, st.sampled_from(["system", "pip", "toolkit", "conda"]),
                     st.sampled_from([None, "deb libcudnn9-cuda-12 9.1.0.70-1", "nvidia-cudnn-cu12 9.1.0.70"]))


def _theano() -> TheanoFacts:
    install = TheanoInstall(version="1.0.5", location=TORCH_SITE, metadata=TORCH_SITE + "/Theano-1.0.5.dist-info",
                            backends=["gpuarray"], include_path="/usr/local/cuda/include",
                            library_path="/usr/local/cuda/lib64", header_path="/usr/local/cuda/include/cudnn.h")
    return TheanoFacts(installs=[install], rc_files=["/root/.theanorc"])


def _facts():
    facts = real_machine()
    facts.cudnn.append(cudnn_copy("/usr/local/cuda-13.0/lib64", "9.14.0", "13.0", origin="toolkit"))
    return facts


class Built:
    """A Fix argument, built inside the target's block like every fix it is composed into."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make


def _made(value: Any) -> Any:
    return value.make() if isinstance(value, Built) else [_made(v) for v in value] if isinstance(value, list) else value


# Values by parameter name: a builder with a parameter none of these fill fails the walk (add its kind here).
DL4J_ROW = {"extra": "cuda12", "min_cc": "5.2", "driver_linux": "525", "cuda": "12.4", "cudnn": "9.1.0",
            "backend": "nd4j-cuda-12.4", "dl4j": "1.0.0-M2.1"}
def _layout() -> Any:
    from cudnn_doctor.remedies.environment_layout import Layout, Placement
    torch = Need(framework("torch", "2.9.1", TORCH_SITE), "nvidia-cudnn-cu12", 9,
                 Requirement("nvidia-cudnn-cu12==9.10.2.21"))
    tf = Need(framework("tensorflow", "2.17.1", TORCH_SITE), "nvidia-cudnn-cu12", 8, None)
    return Layout(TORCH_SITE, (Placement("nvidia-cudnn-cu12", "9.10.2.21", (torch,)),
                               Placement("nvidia-cudnn-cu12", "8.9.7.29", (tf,), "/opt/torch/.venv/cudnn8")))


def _rebuild() -> Any:
    from cudnn_doctor.remedies.environment_rebuild import Rebuild
    jax = Need(framework("jax-cuda13-pjrt", "0.7.2", TORCH_SITE), "nvidia-cudnn-cu13", 9,
               Requirement("nvidia-cudnn-cu13<10.0,>=9.12.0.46"))
    return Rebuild(jax, ("jax-cuda12-pjrt", "jax-cuda12-plugin"),
                   '"jax-cuda13-pjrt==0.7.2" "jax-cuda13-plugin[with-cuda]==0.7.2"', "13")


BY_NAME: Dict[str, st.SearchStrategy] = {
    "facts": st.builds(_facts), "compat": st.just(load_compat()), "copy": _copies(), "holder": _copies(),
    "newer": _copies(), "older": _copies(), "shared": _copies(), "system": _copies(), "best": _copies(),
    "fw": st.builds(lambda: framework("torch", "2.5.1+cu124", cuda_version="12.4")),
    "theano": st.builds(_theano),
    "directory": PATHS, "folder": PATHS, "lib": PATHS, "lib_dir": PATHS, "prefix": PATHS, "site": PATHS,
    "matching_dir": PATHS, "main_dir": PATHS, "parent": PATHS, "target": PATHS, "given": PATHS, "where": PATHS,
    "fw_location": PATHS, "include": PATHS, "library": FILES, "entry": PATHS, "ld_entry": PATHS,
    "link": st.just("/usr/local/cuda"), "header": FILES, "path": FILES, "libcuda": FILES, "soname_file": FILES,
    "ctk": st.sampled_from([None, "/usr/bin/nvidia-ctk"]), "set_aside": PATHS,
    "paths": st.lists(FILES, min_size=1, max_size=3), "files": st.lists(FILES, max_size=2),
    "folders": st.lists(PATHS, max_size=2), "unknown": st.lists(PATHS, max_size=2),
    "entries": st.lists(PATHS, min_size=1, max_size=2), "stale": st.just(["libcudnn_ops.so.9.1.0"]),
    "names": st.just(["cupy-cuda11x", "cupy-cuda12x"]), "keep": st.lists(FILES, max_size=2),
    "links": st.just([("libcudnn.so.9.1.0", "libcudnn.so.9")]),
    "items": st.just([{"path": SYSLIB + "/libcudnn.so.9.1.0", "soname": "libcudnn.so.9"}]),
    "packages": st.just(["libcudnn9-cuda-12"]), "missing": st.just(["libcudart.so.12"]),
    "repo": st.just({"repo": "/var/cudnn-local-repo-ubuntu2204-9.1.0", "keyring": "cudnn-local-keyring.gpg"}),
    "cuda": CUDAS, "driver_cuda": CUDAS, "image_cuda": CUDAS, "node_cuda": CUDAS, "torch_cuda": CUDAS,
    "have_cuda": CUDAS, "needs_cuda": CUDAS, "install": st.just("12.4"), "first": CUDAS, "last": CUDAS,
    "version": CUDNNS, "release": CUDNNS, "cudnn": CUDNNS, "compiled": CUDNNS, "runtime": CUDNNS, "newest": CUDNNS,
    "older_release": CUDNNS, "minimum": CUDNNS, "fixed_in": CUDNNS, "at_least": CUDNNS, "restore": st.none(),
    "cudnn_version": CUDNNS, "loaded_version": CUDNNS, "header_version": CUDNNS, "older": CUDNNS,
    "cudnn_major": st.sampled_from([None, 8, 9]), "major": st.sampled_from([8, 9]), "cuda_major": st.just("12"),
    "fits": st.sampled_from([lambda copy: True, lambda copy: False]),  # whether the framework's own copy will do
    "cc": st.just("9.0"), "min_cc": st.just("7.5"), "floor": st.just("8.0"), "floor_text": st.just(">= 550.54.14"),
    "driver": st.sampled_from([None, "550.54.14"]), "driver_floor": st.just("550.54.14"), "module": st.just("550.54.14"),
    "branch": st.just("550"), "kernel": st.just("6.8.0-49-generic"), "index": st.just(0), "free": st.sampled_from([None, 1]),
    "platform": st.just("linux"), "machine": st.just("x86_64"), "origin": st.sampled_from(["system", "pip", "conda"]),
    "channel": st.sampled_from(["apt", "dnf", "pip", "conda", "unknown"]), "target_kind": st.sampled_from(
        ["prefix", "toolkit"]), "wheel": st.just("cupy-cuda13x"), "spec": st.just(">=9.5"), "specifier": st.just("==9.1.0.70"),
    "requirement": st.just("cudnn>=9.5"), "name": st.just("libcudnn_ops.so.9"), "devices": st.just("0"),
    "framework": st.just("torch"), "torch": st.just("2.5.1"), "torch_version": st.just("2.5.1"), "arch": st.just("Volta"),
    "date": st.just("2026-01-01"), "status": st.just("CUDNN_STATUS_NOT_SUPPORTED"), "code": st.just(9),
    "result": st.just(SmokeResult(ok=False, library="libcudnn.so.9", status="CUDNN_STATUS_NOT_SUPPORTED")),
    "cap_bytes": st.just(1 << 28), "visible": st.sampled_from([1, 2]),
    "folder_wheel": st.just({"name": "nvidia-cudnn-cu12", "version": "9.1.0.70", "location": "/home/u/pylibs",
                             "via": "PYTHONPATH"}),
    "then_fix": st.none(),
    "causes": st.just(["power limit"]), "nvml": st.just({"power_default_limit_w": 700.0}),
    "row": st.just(DL4J_ROW),
    "limit": st.just(""), "last_native": st.just("2.10"), "last_native_gpu": st.just("2.10"), "tested": st.none(),
    "paddle_default_limit_mb": st.just(4096), "toolkit_package": st.sampled_from([None, "cuda-toolkit-12-4"]),
    "rollback": st.booleans().map(lambda owned: Built(lambda: remedies.install.undo_command("toolkit", "/usr/local/cuda",
                                                                                            owned))),
    "newer_row": st.sampled_from([None, DL4J_ROW]), "newest_row": st.just(DL4J_ROW),
    "note": st.just(""), "indices": st.just([0, 1]), "bridges": st.just(["0000:00:01.0"]),
    "runtime": st.sampled_from(["docker", "containerd", "crio"]),
    # remedies/environments and TensorFlow's CUDA libraries (issue 34's whole-environment fixes)
    "pins": st.sampled_from([[], ["nvidia-cublas-cu12==12.3.4.1", "nvidia-cudnn-cu12==8.9.7.29"]]),
    "needs": st.just([
        Need(framework("torch", "2.9.1", TORCH_SITE), "nvidia-cudnn-cu12", 9, Requirement("nvidia-cudnn-cu12==9.10.2.21")),
        Need(framework("tensorflow", "2.17.1", TORCH_SITE), "nvidia-cudnn-cu12", 8, None)]),
    # what solve() found for one site: no set as built; one framework's other build, or none
    "solved": st.sampled_from([None, (_layout(), _rebuild())]).map(lambda rebuilt: SiteCudnn(
        [Need(framework("torch", "2.9.1", TORCH_SITE), "nvidia-cudnn-cu12", 9,
              Requirement("nvidia-cudnn-cu12==9.10.2.21")),
         Need(framework("tensorflow", "2.17.1", TORCH_SITE), "nvidia-cudnn-cu12", 8, None)], None, "", rebuilt)),
    # a pin no release meets beside another framework's (rules/frameworks CD702)
    "installed": st.just("12.9.86"), "others": st.just([("jax-cuda12-plugin", ">=12.6.85")]),
    # issue 43: the set of cuDNN libraries for one environment, preloads, a wheel reinstalled whole
    "layout": st.just(_layout()),
    # a framework moved to its release's build for another CUDA (remedies/environment_rebuild)
    "rebuild": st.just(_rebuild()),
    # the request a preload answered: by the file's path, or by a bare name the loader found it by
    "res": st.builds(lambda path, via: resolution("libcudnn.so.9", path, via=via),
                     st.sampled_from(["/opt/cudnn913/lib/libcudnn.so.9", SYSLIB + "/libcudnn.so.9"]),
                     st.sampled_from(["LD_PRELOAD", "/etc/ld.so.preload"])),
    "project": st.just("nvidia-cudnn-cu13"), "wheel_version": st.just("9.26.0.51"),
    "plugin_wheels": st.just(["jax-cuda12-plugin", "jax-cuda12-pjrt"]),
    # the NVIDIA wheels a site holds (name: release): a wheel there is not installed again, or is reinstalled whole
    "site_releases": st.sampled_from([{}, {"nvidia-cudnn-cu12": "9.3.0.75", "nvidia-cublas-cu12": "12.3.4.1",
                                           "nvidia-cuda-runtime-cu12": "12.3.101"}]),
}
BY_TYPE = {"bool": st.booleans(), "int": st.integers(0, 3), "str": st.just("x"), "Optional[str]": st.none()}


def builders() -> Dict[str, Callable[..., Any]]:
    out = {}
    for info in pkgutil.iter_modules(remedies.__path__):
        if info.name in SKIPPED_MODULES:
            continue
        module = importlib.import_module("cudnn_doctor.remedies." + info.name)
        for name, func in vars(module).items():
            if inspect.isfunction(func) and func.__module__ == module.__name__ and not name.startswith("_") and \
                    name not in COMPOSERS and "Fix" in str(func.__annotations__.get("return")):
                out["%s.%s" % (info.name, name)] = func
    return out


BUILDERS = builders()


def _floor():
    from cudnn_doctor.knowledge.driver import DriverFloor

    return DriverFloor(cuda="12.4", platform="linux", version="550.54.14", branch="550")


# Values by annotation, where one name means different things to different builders.
DL4J_ROW = {"cuda": "12.4", "dl4j": "1.0.0-M2.1", "cudnn": "9.1.0", "backend": "nd4j-cuda-12.4"}
A_BUILT = Built(lambda: remedies.ld_conf_fix("/opt/cudnn/lib"))
A_FIX = st.just(A_BUILT)
BY_ANNOTATION = {"Optional[DriverFloor]": st.builds(_floor), "Any": None, "Optional[CudnnCopy]": _copies(),
                 "CudnnCopy": _copies(), "Optional[Fix]": st.sampled_from([None, A_BUILT]), "Fix": A_FIX,
                 "Sequence[Fix]": st.lists(A_FIX, min_size=1, max_size=2),
                 "Optional[Dict[str, str]]": st.just(DL4J_ROW), "Dict[str, str]": st.just(DL4J_ROW),
                 "Dict[str, Optional[str]]": st.just({"dnn.enabled": "False"}),
                 "Optional[Tuple[str, str]]": st.sampled_from([None, ("2.4.1", "12.1")])}


def _strategy(func: Callable[..., Any]) -> st.SearchStrategy:
    fields = {}
    for p in inspect.signature(func).parameters.values():
        if p.kind == inspect.Parameter.VAR_POSITIONAL:
            continue
        if BY_ANNOTATION.get(str(p.annotation)) is not None:
            fields[p.name] = BY_ANNOTATION[str(p.annotation)]
        elif p.name == "floor" and str(p.annotation) == "Any":
            fields[p.name] = st.builds(_floor)
        elif p.name == "cuda_major" and str(p.annotation) == "int":  # a CUDA major as a number (nvrtc_builtins_fix)
            fields[p.name] = st.sampled_from([11, 12, 13])
        elif p.name in BY_NAME:
            fields[p.name] = BY_NAME[p.name]
        elif p.default is not inspect.Parameter.empty:
            continue
        elif str(p.annotation) in BY_TYPE:
            fields[p.name] = BY_TYPE[str(p.annotation)]
        else:
            raise AssertionError("no value for %s's parameter %s: add one to BY_NAME" % (func.__name__, p.name))
    return st.fixed_dictionaries(fields)


def _commands(fix: Fix) -> List[str]:
    """What a user may run from a fix: its commands, its cudnn-doctor command, and commands quoted in its words."""
    return list(fix.commands) + ([fix.doctor] if fix.doctor else []) + quoted_commands(fix.text) + \
        quoted_commands(fix.manual)


def test_the_walk_finds_the_builders():
    assert len(BUILDERS) > 100 and "shell.ld_conf_fix" in BUILDERS and "cudnn.interrupted_install_fix" in BUILDERS


@pytest.mark.parametrize("name", sorted(BUILDERS))
@pytest.mark.parametrize("root", ROOTS, ids=["plain", "spaced"])
def test_every_builder_acts_only_inside_the_root(name, root):
    func = BUILDERS[name]

    @settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(_strategy(func))
    def check(kwargs):
        with building_for(Target(root=root, doctor=DOCTOR, doctor_on_path=False)):
            # A fresh copy of each drawn value (a builder may edit the facts it gets), the knowledge base shared.
            fix = func(**{k: v if k == "compat" else _made(_copy.deepcopy(v)) for k, v in kwargs.items()})
        fixes = [fix] if isinstance(fix, Fix) else []
        if isinstance(fix, str):  # doctor_install and install_command give the command itself
            fixes = [Fix(text=fix, commands=[fix])]
        for one in fixes:
            bad = {c: outside_root(c, root, DOCTOR) for c in _commands(one)}
            assert not {c: b for c, b in bad.items() if b}, one.text
            assert all(w.startswith(root.rstrip("/") + "/") for w in one.writes), one.writes

    check()


# --- rules over the scenario machines, judged as a --root tree -------------------------------------------------------


def _scenario_fixes(root: str) -> List[Fix]:
    from test_fixes_runnable import FACT_SCENARIOS

    from cudnn_doctor.diagnose import collect_report

    out = []
    for name, (build, options) in sorted(FACT_SCENARIOS.items()):
        facts = build()
        facts.host.root = root
        report = collect_report(facts=facts, requires=list(options.get("requires", [])), target=options.get("target"))
        out += [f.remedy for f in report.findings if f.remedy]
    return out


@pytest.mark.parametrize("root", ROOTS, ids=["plain", "spaced"])
def test_every_rules_fix_on_a_root_acts_only_inside_it(root):
    from kit import FIXED_DOCTOR

    fixes = _scenario_fixes(root)
    assert len(fixes) > 100
    bad = ["%r: %s" % (c, ", ".join(where)) for fix in fixes for c in _commands(fix)
           for where in [outside_root(c, root, FIXED_DOCTOR)] if where]
    assert bad == []


def test_the_checker_sees_a_path_outside_the_root():
    assert outside_root("sudo cp -P a /usr/lib/", "/mnt/img") == ["/usr/lib/"]
    assert outside_root("sudo ldconfig", "/mnt/img") == ["ldconfig without -r (the machine's own loader cache)"]
    assert outside_root("cudnn-doctor install --cuda-home /usr/local/cuda", "/mnt/img") == ["/usr/local/cuda"]
    assert outside_root("sudo chroot /mnt/img apt install x && sudo ldconfig -r /mnt/img", "/mnt/img") == []
    assert outside_root("cd /mnt/img/usr/lib && sudo ln -sf /usr/lib/libcuda.so.1 libcuda.so", "/mnt/img") == []
    assert outside_root("echo /usr/lib | sudo tee /mnt/img/etc/ld.so.conf.d/x.conf > /dev/null", "/mnt/img") == []
    assert outside_root("pip install torch --index-url https://download.pytorch.org/whl/cu124", "/mnt/img") == []
