"""Imports every rule module so its rules register themselves, in layer order (CD1xx ... CD9xx)."""
from importlib import import_module

from . import RULES

MODULES = (
    "blocked", "driver", "gpu", "node_health", "node_xid", "node_links", "toolkit", "cudnn_files", "cudnn_runtime", "loader", "frameworks", "java", "containers", "declared",
    "node_runtime", "image", "require", "target", "conda", "environment", "leftovers", "shadowing", "install_state", "catalogue",
    "knowledge_age", "theano", "theano_flags", "framework_loads", "environments_fit", "windows",
    "bench",  # the bench stage's rules (CD95x)
)
_ORDER = [import_module("." + name, __package__).__name__ for name in MODULES]
# Rules run (and reports list them) in the order above, whichever rule module some other code imported first.
RULES.sort(key=lambda r: _ORDER.index(r.func.__module__))
