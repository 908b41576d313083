"""`explain` names only cuDNN builds that exist: torch's "compiled against (9, 1, 0) but found runtime version
(8, 9, 2)" on a CUDA 13 machine must not say `install --version 9.1.0 --cuda 13` (cuDNN 9.1.0 was never built for
CUDA 13); the release it names is one the knowledge's validator says NVIDIA built for that CUDA."""
from __future__ import annotations

import json
import re

from clirunner import CliRunner

from cudnn_doctor.cli import app
from cudnn_doctor.knowledge import load_compat

PASTE = ("RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (9, 1, 0) but found runtime "
         "version (8, 9, 2). PyTorch already comes bundled with cuDNN. One option to resolving this error is to "
         "ensure PyTorch can find the bundled cuDNN. Looks like your LD_LIBRARY_PATH contains incompatible version "
         "of cudnn. Please either remove it from the path or install cudnn (9, 1, 0)")


def test_torch_paste_on_a_cuda_13_machine_names_a_real_build(machine):
    machine.toolkit("13.0.2")
    machine.driver()
    result = CliRunner().invoke(app, ["explain", "--root", str(machine.root), "--json", PASTE])
    doc = json.loads(result.stdout)
    text = json.dumps(doc)
    assert "--version 9.1.0 --cuda 13" not in text
    compat = load_compat()
    named = re.findall(r"install --version (\S+) --cuda (\d+)", text)
    assert named, text
    for release, cuda in named:
        assert compat.cudnn_build_exists(release, cuda) is True, (release, cuda)
