"""Container images read without a daemon: OCI layouts and archives, layers applied into a folder the doctor owns.
Imports readers and model, never probes, rules or the native child."""
from .errors import ImageError  # noqa: F401
from .opened import Limits, OpenedImage, open_image  # noqa: F401
from .reference import ImageRef, parse_reference  # noqa: F401
