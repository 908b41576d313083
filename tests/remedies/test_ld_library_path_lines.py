"""The LD_LIBRARY_PATH lines fixes print, run in sh: dropping folders keeps what an earlier fix put first, so two
findings' fixes run one after the other compose (draws 31337/36 and /49: a wheel folder exported first, then a line
written from the environment as found undid it)."""
from __future__ import annotations

from hypothesis import given, settings, strategies as st

from cudnn_doctor.model import Resolution
from cudnn_doctor.remedies.shell import ld_library_path_without, prepend_ld_path
from facts_factory import TORCH_SITE, cudnn_copy, framework, real_machine
from shellcheck_kit import ld_library_path_after
import pytest

# The fixes these tests build themselves are written for Target() (the live root, a user, sh).
pytestmark = pytest.mark.usefixtures("fix_target")

# Folder names as users write them: spaces, quotes, dots, trailing slashes, characters grep would read as regex.
_PART = st.text(alphabet="abc .'-_+*[]$", min_size=1, max_size=6).filter(lambda p: p.strip() not in ("", ".", ".."))
_FOLDER = st.lists(_PART, min_size=1, max_size=3).map(lambda parts: "/" + "/".join(parts)).filter(
    lambda f: ":" not in f)


@settings(max_examples=60, deadline=None)
@given(st.lists(_FOLDER, min_size=1, max_size=5, unique=True), st.data())
def test_dropping_folders_keeps_the_others_in_order_and_an_earlier_export(before, data):
    drop = data.draw(st.lists(st.sampled_from(before), min_size=1, unique=True))
    facts = real_machine()
    facts.loader.ld_library_path = list(before)
    first = "/opt/wheel folder/nvidia/cudnn/lib"
    commands = [prepend_ld_path(first), *ld_library_path_without(facts, drop).commands]
    assert ld_library_path_after(commands, before) == [first] + [e for e in before if e not in drop]


def test_a_folder_spelled_with_a_trailing_slash_goes_as_the_environment_spells_it():
    facts = real_machine()
    facts.loader.ld_library_path = ["/opt/a/lib/", "/opt/b"]
    fix = ld_library_path_without(facts, ["/opt/a/lib"])
    assert ld_library_path_after(fix.commands, facts.loader.ld_library_path) == ["/opt/b"]
    assert ld_library_path_after(fix.commands, []) == []  # nothing set when it runs: nothing to drop, no error


def test_a_plain_path_framework_fed_from_a_dropped_folder_gets_its_own_wheel_folder_first():
    # draw 271127/311: torch's CD709 dropped a conda folder; ONNX Runtime beside it (no RPATH into nvidia/) had loaded
    # its cuDNN from there and would have found none.
    conda, own = "/opt/conda/lib", TORCH_SITE + "/nvidia/cudnn/lib"
    facts = real_machine()
    ort = framework("onnxruntime-gpu", "1.22.0", cuda_version="12",
                    resolved_cudnn=Resolution("libcudnn.so.9", conda + "/libcudnn.so.9", via="LD_LIBRARY_PATH"))
    ort.library_search_path = [TORCH_SITE + "/onnxruntime/capi"]
    facts.python.frameworks = [ort]
    facts.cudnn = [cudnn_copy(own, "9.10.2", "12.9", origin="pip", links=False)]
    facts.loader.ld_library_path = [conda, "/opt/kept"]
    fix = ld_library_path_without(facts, [conda])
    assert ld_library_path_after(fix.commands, facts.loader.ld_library_path) == [own, "/opt/kept"]
    ort.library_search_path.append(own)  # one that searches its wheel folder itself needs nothing more
    assert ld_library_path_after(ld_library_path_without(facts, [conda]).commands, [conda]) == []
