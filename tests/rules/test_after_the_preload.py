"""CD711's fix goes on past the preload to what each framework the preload answered meets next: a folder on
LD_LIBRARY_PATH the refusing framework would fall back to is taken away, and no other framework that needed that
folder is left without a cuDNN (a review of draw 486637-22's fix)."""
from __future__ import annotations

from cudnn_doctor.knowledge import load_compat
from cudnn_doctor.rules import RuleContext, evaluate
from facts_factory import TORCH_SITE, cudnn_copy, framework, real_machine, resolution
from shellcheck_kit import ld_library_path_after

PRELOADED, CONDA = "/opt/cudnn913/lib", "/opt/conda/lib"
ORT_SITE = "/opt/ort/lib/python3.12/site-packages"


def _machine(ort_site: str):
    """torch 2.11 (built with 9.19, its 9.19 wheel in its site) and ONNX Runtime 1.23 (whose library searches only its
    own folder) in ``ort_site``, both under an LD_PRELOAD of cuDNN 9.13, a conda prefix's 9.12 on LD_LIBRARY_PATH,
    no cuDNN in the loader's cache."""
    facts = real_machine()
    facts.cudnn = [c for c in facts.cudnn if c.origin != "system"]
    facts.cudnn += [cudnn_copy(PRELOADED, "9.13.0", "13.0", origin="other", found_via=["LD_PRELOAD"]),
                    cudnn_copy(CONDA, "9.12.0", "13.0", origin="conda", links=False)]
    facts.loader.ld_preload = [PRELOADED + "/libcudnn.so.9"]
    facts.loader.ld_library_path = [CONDA]
    preloaded = resolution("libcudnn.so.9", PRELOADED + "/libcudnn.so.9", via="LD_PRELOAD")
    after = resolution("libcudnn.so.9", CONDA + "/libcudnn.so.9", via="LD_LIBRARY_PATH")
    [torch] = facts.python.frameworks
    torch.resolved_cudnn, torch.cudnn_without_preload = preloaded, after
    ort = framework("onnxruntime-gpu", "1.23.0", location=ort_site, cuda_version="12.9",
                    consumer_library=ort_site + "/onnxruntime/capi/libonnxruntime_providers_cuda.so",
                    resolved_cudnn=preloaded, cudnn_without_preload=after,
                    library_search_path=[ort_site + "/onnxruntime/capi"])
    facts.python.frameworks.append(ort)
    if ort_site not in facts.python.site_dirs:
        facts.python.site_dirs.append(ort_site)
    return facts


def _cd711(facts):
    findings, _ = evaluate(facts, RuleContext(compat=load_compat()))
    return [f for f in findings if f.id == "CD711" and f.evidence["framework"] == "torch"][0].remedy.commands


def test_torch_leaves_the_conda_folder_and_onnxruntime_in_another_environment_is_given_a_cudnn():
    commands = _cd711(_machine(ORT_SITE))
    assert commands[0] == "unset LD_PRELOAD", commands
    after = ld_library_path_after(commands, [CONDA])
    assert CONDA not in after, commands  # torch (built with 9.19) would meet the conda 9.12 next
    assert any("nvidia/cudnn/lib" in e for e in after) or any("nvidia-cudnn" in c for c in commands), commands


def test_in_one_site_the_folder_onnxruntime_loads_from_brings_the_sites_plan():
    commands = _cd711(_machine(TORCH_SITE))
    after = ld_library_path_after(commands, [CONDA])
    assert CONDA not in after and any(e.startswith(TORCH_SITE) for e in after), commands
