"""Which environment a cuDNN folder belongs to (queries.copies.owning_environment), which decides whether a folder
that keeps other users out is the owner's by design (CD405's private copies): a `pip install --target` folder fix
makes inside a venv beside its site is that venv's (fix draw 1201281-4 ended at exit 1 on a CD405 about it)."""
from __future__ import annotations

from cudnn_doctor.model import Facts
from cudnn_doctor.queries.copies import owning_environment


def _facts(*sites: str) -> Facts:
    facts = Facts()
    facts.python.site_dirs = list(sites)
    return facts


def test_a_target_folder_inside_a_venv_is_that_venvs():
    facts = _facts("/root/work/venv/lib/python3.11/site-packages")
    assert owning_environment(facts, "/root/work/venv/cudnn8/nvidia/cudnn/lib") == "/root/work/venv"
    assert owning_environment(facts, "/root/work/venv/lib/python3.11/site-packages/nvidia/cudnn/lib") == \
        "/root/work/venv"


def test_a_system_prefix_owns_no_library_folder():
    facts = _facts("/usr/lib/python3/dist-packages", "/usr/local/lib/python3.11/dist-packages")
    assert owning_environment(facts, "/usr/lib/x86_64-linux-gnu") is None
    assert owning_environment(facts, "/usr/local/cuda/lib64") is None
    assert owning_environment(facts, "/opt/cudnn/lib") is None
