"""In the native child (child.py and its sibling op modules): loading a library by path, the speculative note of
which file it loaded, and the plain integer calls the version ops make. Standard library only."""
import ctypes
import json
import os


def load(path):
    mode = getattr(os, "RTLD_LOCAL", 0) | getattr(os, "RTLD_NOW", 2)
    return ctypes.CDLL(path, mode=mode)


def loaded_from(lib):
    """The real path of the file a dlopen handle loaded (glibc's dlinfo RTLD_DI_LINKMAP); None when unknown."""
    class LinkMap(ctypes.Structure):
        _fields_ = [("l_addr", ctypes.c_void_p), ("l_name", ctypes.c_char_p)]

    try:
        dlinfo = ctypes.CDLL(None).dlinfo
    except (OSError, AttributeError):
        return None
    entry = ctypes.POINTER(LinkMap)()
    if dlinfo(ctypes.c_void_p(lib._handle), 2, ctypes.byref(entry)) != 0 or not entry or not entry.contents.l_name:
        return None
    return os.path.realpath(entry.contents.l_name.decode("utf-8", "surrogateescape"))


NOTES = []  # type: list  # in a worker: (task id, output fd) for note_loaded


def note_loaded(task, lib):
    """A speculative task (native/session.py) says which file it loaded as soon as it has it, in a line of its own
    before any call that may hang or crash, so that a probe's task naming that file takes its answer either way."""
    if task.get("early") and NOTES:
        index, out_fd = NOTES[0]
        data = (json.dumps({"task": index, "loaded_from": loaded_from(lib)}) + "\n").encode()
        while data:
            data = data[os.write(out_fd, data):]


def int_call(lib, name, restype=ctypes.c_size_t):
    fn = getattr(lib, name)
    fn.restype = restype
    fn.argtypes = []
    return int(fn())


def out_int_call(lib, name):
    """Call ``int name(int *out)`` and return (status, value)."""
    fn = getattr(lib, name)
    fn.restype = ctypes.c_int
    out = ctypes.c_int(0)
    fn.argtypes = [ctypes.POINTER(ctypes.c_int)]
    rc = fn(ctypes.byref(out))
    return int(rc), int(out.value)
