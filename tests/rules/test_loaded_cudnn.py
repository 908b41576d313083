"""One answer to "which cuDNN does a plain process load": the newest major by number, wherever it is asked."""
from __future__ import annotations

from facts_factory import cudnn_copy, resolution

from cudnn_doctor.model import Facts
from cudnn_doctor.results import Report
from cudnn_doctor.queries import loaded_cudnn
from cudnn_doctor.render.prometheus import render_prometheus


def _two_majors() -> Facts:
    facts = Facts()
    facts.cudnn = [cudnn_copy("/opt/cudnn9/lib", "9.14.0", "13.0"), cudnn_copy("/opt/cudnn10/lib", "10.0.0", "13.0", sublibs=["graph"])]
    # As text "libcudnn.so.10" sorts before "libcudnn.so.9": the query must compare the majors as numbers.
    facts.loader.resolved = {"libcudnn.so.9": resolution("libcudnn.so.9", "/opt/cudnn9/lib/libcudnn.so.9"),
                             "libcudnn.so.10": resolution("libcudnn.so.10", "/opt/cudnn10/lib/libcudnn.so.10"),
                             "libcudnn.so.8": resolution("libcudnn.so.8", None)}
    return facts


def test_the_newest_major_is_the_loaded_one_compared_as_numbers():
    assert loaded_cudnn(_two_majors()).path == "/opt/cudnn10/lib/libcudnn.so.10"
    only_old = _two_majors()
    only_old.loader.resolved["libcudnn.so.10"] = resolution("libcudnn.so.10", None)
    assert loaded_cudnn(only_old).path == "/opt/cudnn9/lib/libcudnn.so.9"
    assert loaded_cudnn(Facts()) is None


def test_prometheus_reports_the_version_of_the_loaded_copy():
    text = render_prometheus(Report(facts=_two_majors(), findings=[], rules_run=[]), 0)
    info = next(line for line in text.splitlines() if line.startswith("cudnn_doctor_build_info{"))
    assert 'cudnn="10.0.0"' in info, info
