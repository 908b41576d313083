"""`cudnn-doctor explain`: pasted error text -> meaning -> the rules that decide it (section J of the catalogue)."""
from __future__ import annotations

import json

import pytest
from clirunner import CliRunner

from cudnn_doctor.explain import match_symptoms as _match, routed_rules
from cudnn_doctor.knowledge import load_compat
from cudnn_doctor.results import Report
from cudnn_doctor.rules import RuleContext, evaluate
from facts_factory import real_machine

# Tests here call builders (and judges) themselves: their fixes are written for Target().
pytestmark = pytest.mark.usefixtures("fix_target")


def match_symptoms(text):
    return _match(text, load_compat())

CASES = [
    ("W dso_loader.cc:64] Could not load dynamic library 'libcudnn.so.8'; dlerror: libcudnn.so.8: cannot open "
     "shared object file: No such file or directory", "cudnn-so-missing", "CD401"),
    ("Could not load library libcudnn_ops_infer.so.8. Error: libcudnn_ops_infer.so.8: cannot open shared object "
     "file: No such file or directory", "cudnn-sublibrary-missing", "CD402"),
    ("Unable to load any of {libcudnn_ops.so.9.1.0, libcudnn_ops.so.9.1, libcudnn_ops.so.9, libcudnn_ops.so}",
     "cudnn-sublibrary-missing", "CD402"),
    ("Could not load library libcudnn_cnn_infer.so.8. Error: libnvrtc.so: cannot open shared object file: No such "
     "file or directory", "nvrtc-unversioned", "CD602"),
    ("Could not load library libcudnn_cnn_infer.so.8. Error: libcuda.so: cannot open shared object file",
     "libcuda-unversioned", "CD603"),
    ("libcuda.so: wrong ELF class: ELFCLASS32", "wrong-elf-class", "CD604"),
    ("/usr/local/cuda/lib64/libcudnn.so.6: file too short", "truncated-library", "CD406"),
    ("libcudnn.so.8: cannot open shared object file: Permission denied", "permission-denied", "CD405"),
    ("/sbin/ldconfig.real: /usr/local/cuda/lib64/libcudnn.so.7 is not a symbolic link", "not-a-symlink", "CD404"),
    ("undefined symbol: _Z22cudnnGenericOpTensorNd, version libcudnn_ops_infer.so.8", "mixed-sublibraries", "CD403"),
    ("cuDNN error: CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH", "mixed-sublibraries", "CD403"),
    ("E cuda_dnn.cc:447] Loaded runtime CuDNN library: 8.7.0 but source was compiled with: 8.9.4.",
     "cudnn-runtime-older", "CD503"),
    ("RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (8, 5, 0) but found runtime "
     "version (8, 3, 3).", "torch-cudnn-incompatible", "CD504"),
    ("XlaRuntimeError: FAILED_PRECONDITION: DNN library initialization failed.", "cudnn-not-initialized", "CD401"),
    ("Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR", "cudnn-internal-error", "CD207"),
    ("Check failed: status == CUDNN_STATUS_SUCCESS (6 vs. 0) CUDNN_STATUS_ARCH_MISMATCH", "arch-mismatch", "CD202"),
    ("CUDA error: no kernel image is available for execution on the device", "no-kernel-image", "CD201"),
    ("CUDA driver version is insufficient for CUDA runtime version", "driver-too-old", "CD301"),
    ("Error 804: forward compatibility was attempted on non supported HW", "forward-compat-unsupported", "CD303"),
    ("CUDA driver is a stub library", "stub-library", "CD304"),
    ("the provided PTX was compiled with an unsupported toolchain", "ptx-toolchain", "CD305"),
    ("OSError: libcudart.so.11.0: cannot open shared object file", "cuda-runtime-missing", "CD306"),
    ("Failed to initialize NVML: Driver/library version mismatch", "nvml-mismatch", "CD104"),
    ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver", "cannot-talk-to-driver", "CD102"),
    ("failed call to cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected", "no-device", "CD605"),
    ("all CUDA-capable devices are busy or unavailable", "devices-busy", "CD205"),
    ("AssertionError: Torch not compiled with CUDA enabled", "torch-cpu-only", "CD701"),
    ("Cannot dlopen some GPU libraries. Please make sure the missing libraries", "tf-cannot-dlopen", "CD306"),
    ("Could not load CudnnConvolutionHelper: no jnicudnn in java.library.path", "dl4j-cudnn", "CD920"),
    ("RuntimeError: Mixed dnn version. The header is version 5005 while the library is version 5110.",
     "mixed-dnn-header", "CD407"),
    ("nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.8", "container-requirement", "CD301"),
]


@pytest.mark.parametrize("text,symptom,rule_id", CASES, ids=[c[1] + "-" + str(i) for i, c in enumerate(CASES)])
def test_match(text, symptom, rule_id):
    matches = match_symptoms(text)
    ids = [m.id for m in matches]
    assert symptom in ids, ids
    assert rule_id in routed_rules(matches)
    hit = next(m for m in matches if m.id == symptom)
    assert hit.meaning and hit.catalogue


def test_unrelated_text_matches_nothing():
    assert match_symptoms("Segmentation fault in my own code") == []
    assert match_symptoms("") == []


def test_routing_is_case_insensitive_and_deduplicated():
    text = "could not load dynamic library 'LIBCUDNN.so.8' ... DNN library initialization failed"
    matches = match_symptoms(text)
    rules = routed_rules(matches)
    assert {"cudnn-so-missing", "cudnn-not-initialized"} <= {m.id for m in matches}
    assert len(rules) == len(set(rules))


def test_every_routed_rule_is_registered():
    import cudnn_doctor.rules.registry  # noqa: F401
    from cudnn_doctor.rules import RULES

    ids = {r.id for r in RULES}
    for symptom in load_compat().symptoms():
        assert set(symptom.rules) <= ids


def _app():
    from cudnn_doctor.cli import app
    return app


def test_cli_explain_without_checks():
    result = CliRunner().invoke(_app(), ["explain", "--no-check", "Loaded runtime CuDNN library: 8.7.0 but source "
                                                                  "was compiled with: 8.9.4"])
    assert result.exit_code == 1, result.output  # the text alone shows the problem: the exit code says so
    assert "built with cuDNN 8.9.4, loaded cuDNN 8.7.0" in result.stdout
    assert 'pip install "nvidia-cudnn-cu' in result.stdout.split("\nFix\n", 1)[1]  # a fix without the machine
    assert "cudnn-runtime-older" not in result.stdout and "E1" not in result.stdout  # catalogue letters: -v only
    verbose = CliRunner().invoke(_app(), ["explain", "-v", "--no-check", "Loaded runtime CuDNN library: 8.7.0 but "
                                                                        "source was compiled with: 8.9.4"]).stdout
    assert "cudnn-runtime-older" in verbose and "E1, G4, I1" in verbose and "CD503" in verbose


def test_cli_explain_runs_the_routed_checks(monkeypatch):
    """The checks run through collect_report; here it judges the facts factory's machine with one fault."""
    import cudnn_doctor.diagnose as check_mod

    def fake_diagnose(root="/", env=None, requires=(), target=None, **kw):
        facts = real_machine()
        facts.loader.ld_library_path = ["/usr/lib/x86_64-linux-gnu"]
        from facts_factory import resolution
        facts.python.frameworks[0].resolved_cudnn = resolution(
            "libcudnn.so.9", "/usr/lib/x86_64-linux-gnu/libcudnn.so.9", via="LD_LIBRARY_PATH")
        findings, ran = evaluate(facts, RuleContext(compat=load_compat()))
        return Report(facts=facts, findings=findings, rules_run=ran)

    monkeypatch.setattr(check_mod, "diagnose", fake_diagnose)
    result = CliRunner().invoke(_app(), ["explain", "--json", "PyTorch was compiled against (9, 19, 0) but found "
                                                              "runtime version (9, 14, 0)"])
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    assert doc["command"] == "explain" and doc["matches"][0]["id"] == "torch-cudnn-incompatible"
    assert any(f["id"] == "CD503" and f["severity"] == "error" for f in doc["findings"])
    assert all(f["id"] in doc["rules"] for f in doc["findings"])


def test_cli_explain_reads_stdin_and_rejects_empty():
    runner = CliRunner()
    result = runner.invoke(_app(), ["explain", "--no-check", "-"], input="wrong ELF class: ELFCLASS32\n")
    assert result.exit_code == 0 and "wrong architecture" in result.stdout
    result = runner.invoke(_app(), ["explain", "--no-check", "-"], input="   \n")
    assert result.exit_code == 2 and "stdin (-) was empty" in result.stderr and "| cudnn-doctor explain -" in result.stderr
    result = runner.invoke(_app(), ["explain", "--no-check", ""])
    assert result.exit_code == 2 and "error text" in result.stderr


# --- library names in the pasted text -----------------------------------------------------------------------------------

from cudnn_doctor.explain import extract_sonames  # noqa: E402
from cudnn_doctor.explain.libraries import check_libraries as _check  # noqa: E402
from cudnn_doctor.model import Resolution  # noqa: E402


@pytest.mark.parametrize("text,names", [
    ("OSError: libcudart.so.11.0: cannot open shared object file: No such file or directory", ["libcudart.so.11.0"]),
    ("Could not load library libcudnn_cnn_infer.so.8. Error: libnvrtc.so: cannot open shared object file",
     ["libcudnn_cnn_infer.so.8", "libnvrtc.so"]),
    ("Unable to load any of {libcudnn_ops.so.9.1.0, libcudnn_ops.so.9.1, libcudnn_ops.so.9, libcudnn_ops.so}",
     ["libcudnn_ops.so.9.1.0", "libcudnn_ops.so.9.1", "libcudnn_ops.so.9", "libcudnn_ops.so"]),
    ("/usr/local/cuda/lib64/libcudnn.so.6: file too short. libcudnn.so.6 again.", ["libcudnn.so.6"]),
    ("Could not load dynamic library 'cudart64_110.dll'; dlerror: cudart64_110.dll not found; cudnn64_8.dll",
     ["cudart64_110.dll", "cudnn64_8.dll"]),
    ("libstdc++.so.6: version `GLIBCXX_3.4.30' not found", ["libstdc++.so.6"]),
    ("Segmentation fault", []),
])
def test_extract_sonames(text, names):
    assert extract_sonames(text) == names


def _missing(name):
    return Resolution(name=name)


def check_libraries(names, facts, compat, resolve):
    """What the loader probe would have recorded for each pasted name, then explain's judgement of it."""
    for name in names:
        facts.loader.resolved.setdefault(name, resolve(name))
    return _check(names, facts, compat)


def test_missing_cuda_runtime_names_the_installed_one_and_the_fix():
    facts = real_machine()  # CUDA 13.0 toolkit (libcudart.so.13) at /usr/local/cuda, driver 580
    [lib] = check_libraries(["libcudart.so.11.0"], facts, load_compat(), _missing)
    assert lib.problem and lib.found is None
    assert lib.message == ("libcudart.so.11.0 is not on the search path; installed: CUDA 13.0 (libcudart.so.13) "
                           "at /usr/local/cuda")
    newest_11 = [c for c in load_compat().cuda_releases() if c.startswith("11.")][-1]
    assert "install the CUDA %s runtime" % newest_11 in lib.fix.text
    assert "sudo apt install cuda-toolkit-%s" % newest_11.replace(".", "-") in lib.fix.text
    assert "build for the installed CUDA 13.0" in lib.fix.text


def test_resolved_name_is_not_a_problem_here():
    facts = real_machine()
    [lib] = check_libraries(["libcudnn.so.9"], facts, load_compat(), _missing)  # the probes resolved it
    assert not lib.problem and lib.found == "/usr/lib/x86_64-linux-gnu/libcudnn.so.9"
    assert "another environment" in lib.message


def test_resolver_answers_names_the_probes_did_not_ask_about():
    facts = real_machine()
    asked = []

    def resolve(name):
        asked.append(name)
        return Resolution(name=name, path="/opt/x/" + name, realpath="/opt/x/" + name, via="LD_LIBRARY_PATH",
                          error="file too short")

    [lib] = check_libraries(["libcublas.so.13"], facts, load_compat(), resolve)
    assert asked == ["libcublas.so.13"] and lib.problem and "file too short" in lib.message


def test_cudnn_major_without_a_build_for_this_cuda():
    facts = real_machine()
    [lib] = check_libraries(["libcudnn.so.8"], facts, load_compat(), _missing)
    assert lib.problem and "installed: cuDNN 9.14.0 (libcudnn.so.9)" in lib.message
    assert "CUDA 13.0 has no cuDNN 8 build" in lib.fix.text and 'pip install "nvidia-cudnn-cu12==8.*"' in lib.fix.text
    assert "compat knows" not in lib.fix.text


def test_windows_dll_is_named_not_resolved():
    [lib] = check_libraries(["cudnn64_8.dll"], real_machine(), load_compat(), _missing)
    assert not lib.problem and "Windows" in lib.message and "PATH" in lib.fix.text


def test_cli_explain_decides_a_pasted_soname_on_a_fake_machine(machine):
    """End to end over a fake root: CUDA 13.0 installed, the program wants CUDA 11's runtime."""
    machine.driver()
    machine.toolkit("13.0")
    result = CliRunner().invoke(_app(), ["explain", "--json", "--root", str(machine.root),
                                         "OSError: libcudart.so.11.0: cannot open shared object file"])
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    assert doc["libraries_named"] == ["libcudart.so.11.0"]
    [lib] = doc["libraries"]
    assert lib["problem"] and lib["message"].startswith("libcudart.so.11.0 is not on the search path; installed: "
                                                        "CUDA 13.0")
    assert "cuda-toolkit-11-" in lib["fix"]
    text = CliRunner().invoke(_app(), ["explain", "--root", str(machine.root),
                                       "libcudart.so.11.0: cannot open shared object file"])
    assert "None of these checks found a problem" not in text.stdout
    assert "libcudart.so.11.0 is not on the search path" in text.stdout


def test_execution_failed_is_generic_unless_the_text_is_from_dl4j():
    ids = [m.id for m in match_symptoms("cuDNN error: CUDNN_STATUS_EXECUTION_FAILED")]
    assert "cudnn-execution-failed" in ids and "dl4j-workspace" not in ids
    assert {"CD207", "CD104"} <= set(routed_rules(match_symptoms("CUDNN_STATUS_EXECUTION_FAILED")))
    java = "org.nd4j.linalg.api.ops.executioner ... cuDNN error: CUDNN_STATUS_EXECUTION_FAILED"
    ids = [m.id for m in match_symptoms(java)]
    assert "cudnn-execution-failed" in ids and "dl4j-workspace" in ids


def test_missing_cudnn_fix_prefers_tensorflow_and_cuda_and_pins_the_major():
    from cudnn_doctor.remedies.explain import library_fix as _library_fix
    from facts_factory import framework

    compat = load_compat()
    f = real_machine()
    f.cudnn = []
    f.python.frameworks = [framework("tensorflow", "2.16.1", cuda_version="12.3")]
    assert 'tensorflow[and-cuda]==2.16.1' in _library_fix(compat, f, "libcudnn.so.8").text
    f.python.frameworks = []
    fix = _library_fix(compat, f, "libcudnn.so.9").text
    assert "nvidia-cudnn-cu13==9.*" in fix


def test_cli_explain_leads_with_information_the_error_routes_to(machine):
    """No cuDNN at all is only information for `check`, but it is the likeliest cause of NOT_INITIALIZED: explain
    must show it with its fix, not say that nothing was found (a machine without a GPU, where CD401 is info)."""
    machine.toolkit("13.0")
    text = CliRunner().invoke(_app(), ["explain", "--root", str(machine.root), "CUDNN_STATUS_NOT_INITIALIZED"]).stdout
    assert "None of these checks found a problem" not in text
    assert "CD401" in text.split("On this machine", 1)[1]
    assert "cudnn-doctor install --version" in text.split("\nFix\n", 1)[1]
