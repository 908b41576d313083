"""Imports every rule module so its rules register themselves, in layer order (CD1xx ... CD9xx)."""
from . import (  # noqa: F401
    RULES,
    blocked, driver, gpu, toolkit, cudnn_files, cudnn_runtime, loader, frameworks, java, containers, image, require,
    target, conda, environment, leftovers, shadowing, install_state, catalogue, knowledge_age,
    theano, theano_flags, framework_loads, windows,
    bench,  # the bench stage's rules (CD95x)
)

# Rules run (and reports list them) in the order of the modules above, whichever rule module some other code
# happened to import first.
_ORDER = [m.__name__ for m in (
    blocked, driver, gpu, toolkit, cudnn_files, cudnn_runtime, loader, frameworks, java, containers, image, require,
    target, conda, environment, leftovers, shadowing, install_state, catalogue, knowledge_age,
    theano, theano_flags, framework_loads, windows, bench)]
RULES.sort(key=lambda r: _ORDER.index(r.func.__module__))
