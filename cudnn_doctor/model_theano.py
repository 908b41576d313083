"""The facts about Theano: each install, the cuDNN paths its configuration gives it and what they hold, and the
configuration Theano would read (THEANO_FLAGS over .theanorc) with Keras's backend."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional


@dataclass
class TheanoInstall:
    """One installed Theano, with the cuDNN paths its configuration gives it and what those paths hold."""

    version: str
    location: str  # site-packages folder
    metadata: str  # the *.dist-info / *.egg-info it was read from
    backends: List[str] = field(default_factory=list)  # "cuda" (old theano.sandbox.cuda), "gpuarray"
    include_path: Optional[str] = None  # dnn.include_path in effect ("" in Theano = none)
    include_path_from: Optional[str] = None  # "THEANO_FLAGS", an rc file, "default (cuda.root=/usr/local/cuda)"
    library_path: Optional[str] = None  # dnn.library_path in effect
    library_path_from: Optional[str] = None
    header_path: Optional[str] = None  # the cudnn.h its C code compiles against
    header_version: Optional[str] = None
    link_path: Optional[str] = None  # the libcudnn.so that `-lcudnn` links (in library_path, else the system's)
    link_realpath: Optional[str] = None
    load_path: Optional[str] = None  # the libcudnn.so.N the compiled module loads at run time
    load_realpath: Optional[str] = None
    load_via: Optional[str] = None
    library_files: List[str] = field(default_factory=list)  # libcudnn* names in library_path


@dataclass
class TheanoFacts:
    """Theano installs, the configuration Theano would read (THEANO_FLAGS over .theanorc) and Keras's backend."""

    installs: List[TheanoInstall] = field(default_factory=list)
    flags: Optional[str] = None  # THEANO_FLAGS as set, None when unset
    rc_files: List[str] = field(default_factory=list)  # the files Theano reads, in order (later ones win)
    rc_found: List[str] = field(default_factory=list)  # those that exist
    settings: Dict[str, Dict[str, str]] = field(default_factory=dict)  # key -> {value, from}: what is set
    problems: List[str] = field(default_factory=list)  # rc files Theano could not parse either
    keras: List[Dict[str, str]] = field(default_factory=list)  # {version, location, backend, backend_from}
