"""What a framework asks for and what fixes exist for it: requirement lines as the real wheels write them, the
onnxruntime-gpu releases' features, and the words CD702 uses (the real-world corpus proves the whole path)."""
from __future__ import annotations

from packaging.requirements import Requirement

from cudnn_doctor.knowledge import load_compat
from cudnn_doctor.model import Resolution
from cudnn_doctor.probes.framework_cudnn import requirement_cudnn_major, specifier_major
from cudnn_doctor.readers.package_meta import parse_tf_build_info
from cudnn_doctor.remedies import onnxruntime_cuda_fix
from cudnn_doctor.rules import RuleContext, evaluate
from facts_factory import PIP_CUDNN as PIP_CUDNN_DIR, TORCH_SITE, framework, make_facts
from shellcheck_kit import ld_library_path_after
import pytest

# The fixes these tests build themselves are written for Target() (the live root, a user, sh).
pytestmark = pytest.mark.usefixtures("fix_target")

# Requires-Dist lines copied from the METADATA of the wheels the corpus uses.
TF_2_15 = "nvidia-cudnn-cu12 (==8.9.4.25) ; extra == 'and-cuda'"
TF_2_18 = "nvidia-cudnn-cu12 ==9.3.0.75 ; extra == 'and-cuda'"
JAX_0_4_30 = "nvidia-cudnn-cu12 <10.0,>=9.0 ; extra == 'with_cuda'"
JAX_0_5_3 = 'nvidia-cudnn-cu12<10.0,>=9.1; extra == "with-cuda"'
ORT_1_22 = 'nvidia-cudnn-cu12~=9.0; extra == "cudnn"'
TORCH_2_5 = 'nvidia-cudnn-cu12 (==9.1.0.70) ; platform_system == "Linux" and platform_machine == "x86_64"'


def test_pinned_major_is_read_from_each_real_requirement_under_its_extra():
    assert requirement_cudnn_major([TF_2_15], ["and-cuda"])[0] == 8
    assert requirement_cudnn_major([TF_2_18], ["and-cuda"])[0] == 9
    assert requirement_cudnn_major([JAX_0_4_30], ["with_cuda"])[0] == 9
    assert requirement_cudnn_major([JAX_0_5_3], ["with-cuda"])[0] == 9
    assert requirement_cudnn_major([ORT_1_22], ["cuda", "cudnn"])[0] == 9
    assert requirement_cudnn_major([TORCH_2_5], [])[0] == 9
    assert requirement_cudnn_major([TF_2_15], []) is None  # the extra is not installed: no claim
    assert requirement_cudnn_major(['nvidia-cudnn-cu12==9.1.0.70; sys_platform == "win32"'], []) is None


def test_the_major_is_what_pip_would_install():
    for spec, major in (("==8.9.*", 8), (">=9.1,<10", 9), ("<10", 9), ("~=8.9", 8), ("==9.24.0.43", 9)):
        assert specifier_major(Requirement("nvidia-cudnn-cu12" + spec)) == major, spec


def test_onnxruntime_features_by_release():
    compat = load_compat()
    assert compat.framework_feature("onnxruntime_gpu", "preload_dlls", "1.20.2") is False
    assert compat.framework_feature("onnxruntime_gpu", "preload_dlls", "1.21.0") is True
    assert compat.framework_feature("onnxruntime_gpu", "pip_extras", "1.18.0") is False
    assert compat.framework_build("onnxruntime_gpu", "1.18.0")["cudnn_wheel"] == "nvidia-cudnn-cu11"
    assert compat.framework_build("onnxruntime_gpu", "1.22.0")["cudnn_major"] == 9


def test_onnxruntime_fix_offers_only_what_the_release_has():
    compat = load_compat()
    old = onnxruntime_cuda_fix(compat, "1.18.0", TORCH_SITE)
    assert old.commands[0] == 'pip install "nvidia-cudnn-cu11==8.9.*"'
    assert "[cuda,cudnn]==1.18.0" not in old.text and "has neither" in old.text
    new = onnxruntime_cuda_fix(compat, "1.22.0", TORCH_SITE)
    assert '"onnxruntime-gpu[cuda,cudnn]==1.22.0"' in new.text and "preload_dlls()" in new.text
    assert all("onnxruntime-gpu[" not in c for c in new.commands)  # the commands are what works everywhere


def _cd702(requirement: str, wheel: str, version: str, resolved: Resolution):
    facts = make_facts()
    fw = framework("tensorflow", "2.15.1", requires=[requirement], resolved_cudnn=resolved)
    facts.python.frameworks = [fw]
    facts.python.nvidia_wheels = [{"name": wheel, "version": version, "location": TORCH_SITE}]
    findings, _ = evaluate(facts, RuleContext(compat=load_compat()))
    return [f for f in findings if f.id == "CD702"]


def test_cd702_quotes_the_failure_that_really_happens():
    [f] = _cd702(TF_2_15, "nvidia-cudnn-cu12", "9.1.0.70", Resolution(name="libcudnn.so.8"))
    assert f.severity.value == "error" and "cannot open shared object file" in f.detail
    assert "Loaded runtime CuDNN" not in f.detail
    newer = _cd702(TF_2_15, "nvidia-cudnn-cu12", "8.9.7.29", Resolution(
        name="libcudnn.so.8", path=TORCH_SITE + "/nvidia/cudnn/lib/libcudnn.so.8"))
    assert newer[0].severity.value == "warning"  # a newer 8.9 loads: the oracle saw it run


def test_cd702_speaks_of_the_library_it_is_about():
    [f] = _cd702("nvidia-cublas-cu12 (==12.2.5.6) ; extra == 'and-cuda'", "nvidia-cublas-cu12", "12.4.5.8",
                 Resolution(name="libcudnn.so.8"))
    assert "cudnn" not in f.detail.lower() and "nvidia-cublas-cu12" in f.detail



def test_tensorflow_build_info_in_both_forms_the_wheels_use():
    # 2.15.1's file (an OrderedDict of pairs) and 2.21.0's CPU build, as shipped; older releases wrote a dict.
    gpu = ("import collections\nbuild_info = collections.OrderedDict([('cuda_version', '12.2'), "
           "('cudnn_version', '8'), ('is_cuda_build', True), ('is_rocm_build', False)])\n")
    cpu = "build_info = collections.OrderedDict([('is_cuda_build', False), ('is_rocm_build', False)])\n"
    assert parse_tf_build_info(gpu)["cudnn_version"] == "8" and parse_tf_build_info(gpu)["is_cuda_build"] is True
    assert parse_tf_build_info(cpu) == {"is_cuda_build": False, "is_rocm_build": False}
    assert parse_tf_build_info("build_info = {'cuda_version': '11.2', 'is_cuda_build': True}")["cuda_version"] == "11.2"
    assert parse_tf_build_info("build_info = [garbage") == {}


def test_a_dlopen_from_an_rpath_object_searches_its_loaders_rpath_before_ld_library_path(tmp_path):
    # glibc (elf/dl-load.c): the caller's RPATH, then the RPATHs of the objects that loaded it, then
    # LD_LIBRARY_PATH; a caller with RUNPATH inherits nothing. The corpus shows both kinds of real cuDNN shim.
    from cudnn_doctor.host import Host
    from cudnn_doctor.probes.loader import LoaderView

    for folder in ("fw/lib", "loader-rpath", "ld-path"):
        (tmp_path / folder).mkdir(parents=True)
    for folder in ("loader-rpath", "ld-path"):
        (tmp_path / folder / "libcudnn_graph.so.9").write_bytes(b"")
    view = LoaderView(Host(str(tmp_path), env={"LD_LIBRARY_PATH": "/ld-path"}))
    chain = [(["$ORIGIN/../../loader-rpath"], "/fw/lib")]
    rpath = view.candidates("libcudnn_graph.so.9", rpath=["/nowhere"], origin="/shim", inherited_rpath=chain)
    assert [via for _, via in rpath] == ["RPATH of its loader", "LD_LIBRARY_PATH"]
    runpath = view.candidates("libcudnn_graph.so.9", runpath=["/nowhere"], origin="/shim", inherited_rpath=chain)
    assert [via for _, via in runpath] == ["LD_LIBRARY_PATH"]


def _sublibrary_facts(graph_dir: str, all_there: bool = False, other_version: str = "9.3.0", requires=(),
                      rule: str = "CD709", names=("libcudnn_graph.so.9", "libcudnn_ops.so.9", "libcudnn_cnn.so.9")):
    from facts_factory import PIP_CUDNN, cudnn_copy, resolution

    facts = make_facts()
    other = "/opt/other-cudnn/lib"
    facts.cudnn = [cudnn_copy(PIP_CUDNN, "9.1.0", "12.4", origin="pip", links=False,
                              package="nvidia-cudnn-cu12 9.1.0.70"),
                   cudnn_copy(other, other_version, "12.6", origin="ld_library_path", links=False)]
    facts.loader.ld_library_path = [other]
    fw = framework("torch", "2.5.1", resolved_cudnn=resolution("libcudnn.so.9", PIP_CUDNN + "/libcudnn.so.9", "RPATH"))
    fw.requires = list(requires)
    names = list(names)
    fw.resolved_cudnn_parts = {
        n: resolution(n, "%s/%s" % (graph_dir if (n == names[0] or all_there) else PIP_CUDNN, n), "LD_LIBRARY_PATH")
        for n in names}
    facts.python.frameworks = [fw]
    facts.python.nvidia_wheels = [{"name": "nvidia-cudnn-cu12", "version": "9.1.0.70", "location": TORCH_SITE}]
    findings, _ = evaluate(facts, RuleContext(compat=load_compat()))
    return [f for f in findings if f.id == rule]


def test_cd709_two_releases_in_one_process_is_an_error_fixed_by_dropping_the_folder():
    [f] = _sublibrary_facts("/opt/other-cudnn/lib")
    assert f.severity.value == "error" and "libcudnn_graph.so.9" in f.title and "9.3.0" in f.title
    assert len(f.remedy.commands) == 1 and ld_library_path_after(f.remedy.commands, ["/opt/other-cudnn/lib"]) == []


def test_cd709_another_releases_precompiled_engines_say_what_stops_and_what_still_runs():
    # H200 (docs/real-stacks.md): cuDNN refused another release's libcudnn_engines_precompiled.so.9; torch 2.11's
    # convolutions and attention ran; after a convolution's backward pass its batch norm, LSTM and GRU stopped at
    # NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE (before one, they ran).
    [f] = _sublibrary_facts("/opt/other-cudnn/lib", names=("libcudnn_engines_precompiled.so.9", "libcudnn_graph.so.9"))
    assert f.severity.value == "error" and "libcudnn_engines_precompiled.so.9" in f.title
    assert "batch normalization and RNNs stop at CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE" in f.detail
    assert "backward" in f.detail
    [f] = _sublibrary_facts("/opt/other-cudnn/lib")  # the graph library: no word about engines
    assert "NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE" not in f.detail


def test_cd709_all_sub_libraries_of_one_other_release_load_but_are_named():
    [f] = _sublibrary_facts("/opt/other-cudnn/lib", all_there=True)
    assert f.severity.value == "warning"
    assert _sublibrary_facts(PIP_CUDNN_DIR) == []


def test_cd709_one_older_release_behind_the_shim_stops_a_framework_built_with_a_newer_minor():
    # Seen on an H100 (tests/data/gpu/realstack-h100-round.json): torch 2.11, built with the 9.19 wheel it pins, with
    # the system 9.14 sub-libraries on LD_LIBRARY_PATH, stopped at "PyTorch was compiled against (9, 19, 0) but
    # found runtime version (9, 14, 0)". Here: the shim is 9.1.0, every sub-library 9.0.0, the pin 9.1.0.70.
    [f] = _sublibrary_facts("/opt/other-cudnn/lib", all_there=True, other_version="9.0.0",
                            requires=["nvidia-cudnn-cu12==9.1.0.70; platform_system == 'Linux'"])
    assert f.severity.value == "error"
    assert "built with cuDNN 9.1.0.70" in f.detail and "own version check" in f.detail
    # Built with an older minor than the release it would report: cuDNN's own compatibility holds, a warning.
    [f] = _sublibrary_facts("/opt/other-cudnn/lib", all_there=True, other_version="9.3.0",
                            requires=["nvidia-cudnn-cu12==9.1.0.70"])
    assert f.severity.value == "warning"


def test_cd702_an_older_wheel_whose_shim_forwards_to_a_release_the_pin_admits_loads():
    # Draw 7002/42 (scripts/realworld.sh --only 42 --seed 7002): jax 0.7.2 (>=9.8) with the 9.5.1 wheel and 9.8 first on
    # LD_LIBRARY_PATH: every sub-library came from 9.8, cudnnGetVersion() said 9.8.0, JAX's own check passed. Here:
    # the 9.1.0 wheel, a pin >=9.3, every sub-library from 9.3.0.
    pin = ["nvidia-cudnn-cu12>=9.3,<10"]
    [f] = _sublibrary_facts("/opt/other-cudnn/lib", all_there=True, requires=pin, rule="CD702")
    assert f.severity.value == "warning" and "cudnnGetVersion() reports 9.3.0" in f.detail
    # Only the graph library from 9.3.0: two releases in one process, and the shim's own 9.1 is what stops it.
    [f] = _sublibrary_facts("/opt/other-cudnn/lib", requires=pin, rule="CD702")
    assert f.severity.value == "error"
    # Every sub-library from 9.2.0, still older than the pin: the framework's check refuses it.
    [f] = _sublibrary_facts("/opt/other-cudnn/lib", all_there=True, other_version="9.2.0", requires=pin, rule="CD702")
    assert f.severity.value == "error"
