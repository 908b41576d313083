"""The real-world harness reads a new environment's line as the doctor prints it: the activate lines it appends (the
wheel folders first for a library without an RPATH into them, the shell's cuDNN folders taken off) are each found,
so the environment it builds and judges is the one the line makes (a greedy pattern once swallowed the second)."""
from __future__ import annotations

import shlex

import realworld_judge as judge
from cudnn_doctor.diagnose import fix_target
from cudnn_doctor.knowledge import load_compat
from cudnn_doctor.remedies.acting import building_for
from cudnn_doctor.remedies.environments import need_of, separate_environments_fix
from facts_factory import TORCH_SITE, cudnn_copy, framework, real_machine, resolution


def test_both_activate_lines_of_a_plain_path_framework_are_read():
    compat = load_compat()
    facts = real_machine()
    ort = framework("onnxruntime-gpu", "1.18.0", cuda_version="12.4", cudnn_version="9", requires=[],
                    consumer_library=TORCH_SITE + "/onnxruntime/capi/libonnxruntime_providers_cuda.so",
                    resolved_cudnn=resolution("libcudnn.so.9", None))
    ort.library_search_path = [TORCH_SITE + "/onnxruntime/capi"]
    facts.python.frameworks = [ort]
    facts.cudnn.append(cudnn_copy("/opt/conda/lib", "8.9.6", "11.8", origin="conda", links=False))
    facts.loader.ld_library_path = ["/opt/conda/lib", "/usr/local/cuda/lib64"]
    with building_for(fix_target(facts)):
        [line] = separate_environments_fix(compat, [need_of(compat, ort)], facts).commands
    m = judge.NEW_ENVIRONMENT.match(line)
    assert m is not None, line
    assert m.group(5) and "printf" not in m.group(5), m.group(5)
    dropped = shlex.split(m.group(6))
    assert len(dropped) == 1 and dropped[0].startswith("export LD_LIBRARY_PATH=")
    after = judge.shell_after({"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": "/opt/conda/lib:/usr/local/cuda/lib64"},
                              dropped)
    assert after == {"LD_LIBRARY_PATH": "/usr/local/cuda/lib64"}
