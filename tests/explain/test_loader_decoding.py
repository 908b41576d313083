"""Loader messages decode into their parts whatever the names in them: ld.so's wordings are filled with drawn
library names, symbols and version nodes and read back; Windows codes decode by number and by message."""
from __future__ import annotations

from hypothesis import given, strategies as st

from cudnn_doctor.explain.decode_loader import decode_loader, decode_windows
from hermetic import shipped_compat

COMPAT = shipped_compat()
stem = st.from_regex(r"lib[a-z][a-zA-Z_]{1,12}", fullmatch=True)
soname = st.builds(lambda s, v: "%s.so.%s" % (s, v), stem,
                   st.from_regex(r"[0-9]{1,2}(\.[0-9]{1,2}){0,2}", fullmatch=True))
symbol = st.from_regex(r"[_a-zA-Z][_a-zA-Z0-9]{2,30}", fullmatch=True)
folder = st.sampled_from(["", "/usr/lib/x86_64-linux-gnu/", "/opt/conda/lib/python3.10/site-packages/nvidia/cu/lib/"])


@given(folder, soname)
def test_cannot_open(where, lib):
    [f] = decode_loader("ImportError: %s%s: cannot open shared object file: No such file or directory" % (where, lib))
    assert (f.kind, f.library) == ("missing", lib)


def test_a_folder_the_text_cuts_short_is_never_kept_as_its_tail():
    """A review of round 31: "~/cuda-8.0/lib64/libnvrtc.so" kept "/cuda-8.0/lib64", a path with a space kept "lib",
    and the fix then took a folder off LD_LIBRARY_PATH that is not on it."""
    for text in ("~/cuda-8.0/lib64/libnvrtc.so: undefined symbol: nvrtcGetCUBIN",
                 "/home/me/my env/lib/libnvrtc.so: undefined symbol: nvrtcGetCUBIN",
                 "envs/py39/lib/libnvrtc.so.11.2: undefined symbol: nvrtcGetCUBIN"):
        [f] = decode_loader(text)
        assert (f.symbol, f.folder) == ("nvrtcGetCUBIN", ""), text


@given(soname, folder, soname, st.sampled_from([
    "Could not load library %s. Error: %s%s: cannot open shared object file: No such file or directory",
    "Could not load dynamic library '%s'; dlerror: %s%s: cannot open shared object file: No such file or directory"]))
def test_a_wrapper_naming_another_librarys_failure_says_what_is_missing_and_who_needs_it(found, where, needed, words):
    """jax-16625: "Could not load library libcudnn_ops_infer.so.8. Error: libcublas.so.11: cannot open ...": the
    sub-library was found; the library it needs is the one missing."""
    failures = decode_loader(words % (found, where, needed))
    if found == needed:  # the loader's words about the library itself
        assert [(f.kind, f.library, f.caller) for f in failures] == [("missing", found, "")]
    else:
        assert [(f.kind, f.library, f.caller) for f in failures] == [("missing", needed, found)]


@given(folder, soname, symbol, soname)
def test_undefined_symbol_with_its_version_node(where, caller, sym, node):
    [f] = decode_loader("ImportError: %s%s: undefined symbol: %s, version %s" % (where, caller, sym, node))
    assert (f.kind, f.caller, f.symbol, f.node) == ("undefined-symbol", caller, sym, node)
    assert f.folder == where.rstrip("/")  # the caller's folder, where the text gives it (fresh2's CUDA 8.0 libnvrtc)


@given(soname, symbol, soname)
def test_symbol_version_not_defined(caller, sym, node):
    [f] = decode_loader("OSError: /x/%s: symbol %s version %s not defined in file %s with link time reference"
                        % (caller, sym, node, node))
    assert (f.kind, f.symbol, f.node, f.library) == ("node-not-defined", sym, node, node)


@given(st.from_regex(r"GLIBCXX_3\.4\.[0-9]{1,2}", fullmatch=True), soname)
def test_version_not_found_names_the_node_and_who_needs_it(node, caller):
    [f] = decode_loader("/lib/x86_64-linux-gnu/libstdc++.so.6: version `%s' not found (required by /opt/%s)"
                        % (node, caller))
    assert (f.kind, f.library, f.node, f.caller) == ("version-not-found", "libstdc++.so.6", node, "/opt/" + caller)


@given(soname)
def test_wrong_elf_class(lib):
    [f] = decode_loader("error while loading shared libraries: %s: wrong ELF class: ELFCLASS32" % lib)
    assert (f.kind, f.library) == ("wrong-elf-class", lib)


@given(st.sampled_from([126, 127, 193, 1455]), st.sampled_from(["cudnn64_8.dll", "cublas64_11.dll", "c10_cuda.dll"]))
def test_windows_codes_by_number(code, dll):
    [w] = decode_windows('OSError: [WinError %d] Error loading "C:\\x\\%s"' % (code, dll), COMPAT)
    assert (w.code, w.dll) == (code, dll)


def test_windows_codes_by_their_system_message():
    for row in COMPAT.windows_loader_errors():
        [w] = decode_windows("Error: %s." % row["message"], COMPAT)
        assert w.code == row["code"]
