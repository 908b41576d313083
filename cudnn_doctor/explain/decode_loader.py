"""Dynamic-loader failures in a pasted text: Linux (cannot open, undefined symbol with its version node, version
`X' not found, wrong ELF class, no version information) and Windows loader codes (126, 127, 193, 1455)."""
from __future__ import annotations

import re
from typing import Dict, List

from ..knowledge import Compat
from .evidence import LoaderFailure, WindowsLoad

_SO = r"[\w.+-]+?\.so(?:\.\d+)*"
# Tried only where a path or name starts (the look-behind): from every position inside a long word it would be
# quadratic in the word's length.
_LIB = r"(?<![\w.+-])(?:[\w.+-]*/)?(" + _SO + ")"
_NAMED = r"lib[\w.+-]*?\.so(?:\.\d+)*"  # a library name where no folder precedes it
_PATTERNS = (
    ("permission", re.compile(_LIB + r": cannot open shared object file: Permission denied")),
    ("missing", re.compile(_LIB + r": cannot open shared object file")),
    ("missing", re.compile(r"Could not load (?:dynamic )?library '?(" + _NAMED + ")")),
    # TensorRT's "Unable to load library: libnvinfer_builder_resource.so.8.4.2" too
    ("missing", re.compile(r"(?:Unable to load|cannot load|Failed to load)\s+(?:library:?\s+)?'?(" + _NAMED + ")",
                           re.I)),
    ("missing", re.compile(r"failed to open (" + _NAMED + ")")),
    # people's own words around a name ("missing libcudnn.so.8 file", "libcudnn.so.8 is not found")
    ("missing", re.compile(r"\bmissing\s+(?:the\s+)?(?:file\s+)?'?(" + _NAMED + ")", re.I)),
    ("missing", re.compile(r"(?<![\w.+-])(" + _NAMED + r")'?\s+(?:is\s+|was\s+)?(?:not found|missing)\b", re.I)),
    ("wrong-elf-class", re.compile(_LIB + r": wrong ELF class")),
)
# The symbol bare or quoted, as reports retell it ('undefined symbol: "ncclCommWindowRegister"')
# the caller with its folder where the text gives a whole absolute one ("/usr/local/cuda/8.0/lib64/libnvrtc.so:
# undefined symbol"); a path cut short (~/..., one with a space, a relative one) keeps no folder, never its tail
_UNDEFINED = re.compile(r"(?<![\w.+-])(?:(?<![^\s'\"(:=])((?:/[\w.+-]+)+/)|[\w.+-]*/)?(" + _SO + r")" +
                        r":\s*undefined\s{1,4}symbol:\s*[\"'`]?(\w+)(?:,\s*version\s+([\w.+-]+))?|"
                        r"undefined\s{1,4}symbol(?::\s*[\"'`]?|\s+(?=\w*[A-Z_\d]))(\w+)(?:,\s*version\s+([\w.+-]+))?")
# "symbol X, version N not defined in file L", also retold without the symbol ("version L not defined in file L")
_NODE = re.compile(r"(?:symbol\s+(\w+),?\s+version\s+([\w.+-]+)|(?<![\w.+-])version\s+(lib[\w.+-]+\.so[\w.]*))"
                   r"\s+not defined in file\s+" + _LIB)
_VERSION = re.compile(_LIB + r":\s*version [`'‘]([\w.+-]+)['’] not found(?:\s*\(required by ([^)]+)\))?")
_NO_INFO = re.compile(_LIB + r":\s*no version information available(?:\s*\(required by ([^)]+)\))?")
_DLL = re.compile(r"[\w-]+(?:\.\w+)*?\.dll", re.I)
# quoted as PyTorch prints it, or retold without the quotes ("error loading fbgemm.dll", OneTrainer-487's title)
_TORCH_DLL = re.compile(r'Error loading (?:"[^"\n]{1,300}?|[\w.-]{1,100})\.dll', re.I)
_WIN_CODE = re.compile(r"(WinError|error(?: code)?|LoadLibrary\w*\s+failed with error)\s*:?\s*(126|127|193|1455)\b",
                       re.I)


# A wrapper's words around the loader's own: "Could not load library libcudnn_ops_infer.so.8. Error: libcublas.so.11:
# cannot open shared object file" (cuDNN), "Could not load dynamic library 'X'; dlerror: Y: cannot open ..."
# (TensorFlow). Where Y is not X, X was found and Y, a library X needs, is the one missing (jax-16625).
_WRAPPED = re.compile(r"(?:Could not|Unable to|Failed to) load (?:dynamic )?library:?\s+'?(" + _NAMED +
                      r")'?[.;:,]?\s+(?:Error|dlerror)\s*:\s*(?:[^\s:]{0,400}/)?(" + _SO + r"): cannot open shared object file",
                      re.I)


# The same words around an undefined symbol: "Failed to load library libonnxruntime_providers_tensorrt.so with error:
# .../libnvinfer_plugin.so.8: undefined symbol: ..." (onnxruntime#14802): the first library was found, and a library
# it loads lacks a symbol; the undefined symbol is the failure, not a missing file.
_WRAPPED_UNDEFINED = re.compile(r"(?:Could not|Unable to|Failed to) load (?:dynamic )?library:?\s+'?(" + _NAMED +
                                r")'?[.;:,]?\s+(?:with error|Error|dlerror)\s*:\s*(?:[^\s:]{0,400}/)?" + _SO +
                                r":\s*undefined\s{1,4}symbol", re.I)


def _found_but_needing(text: str) -> Dict[str, str]:
    """{library found: the library it needs that is missing}, where a wrapper's message says so."""
    return {m.group(1): m.group(2) for m in _WRAPPED.finditer(text) if m.group(1) != m.group(2)}


def decode_loader(text: str) -> List[LoaderFailure]:
    """Each loader failure once, in the order the kinds are listed above."""
    out: List[LoaderFailure] = []
    needing = _found_but_needing(text) if "rror" in text else {}
    callers = {needed: found for found, needed in needing.items()}
    taken = set(needing)  # found: not missing itself
    if "undefined" in text:
        taken.update(m.group(1) for m in _WRAPPED_UNDEFINED.finditer(text))
    for kind, pattern in _PATTERNS:
        for m in pattern.finditer(text):
            if m.group(1) not in taken:
                taken.add(m.group(1))
                out.append(LoaderFailure(kind, library=m.group(1), caller=callers.get(m.group(1), "")))
    for m in _UNDEFINED.finditer(text):
        folder, caller, symbol, node = m.group(1, 2, 3, 4) if m.group(3) else ("", "", m.group(5), m.group(6))
        out.append(LoaderFailure("undefined-symbol", library=node or "", symbol=symbol, node=node or "",
                                 caller=caller or "", folder=(folder or "").rstrip("/")))
    for m in _NODE.finditer(text):
        out.append(LoaderFailure("node-not-defined", library=m.group(4), symbol=m.group(1) or "",
                                 node=m.group(2) or m.group(3)))
    for m in _VERSION.finditer(text):
        out.append(LoaderFailure("version-not-found", library=m.group(1), node=m.group(2),
                                 caller=(m.group(3) or "").strip()))
    for m in _NO_INFO.finditer(text):
        out.append(LoaderFailure("no-version-info", library=m.group(1), caller=(m.group(2) or "").strip()))
    return out


def decode_windows(text: str, compat: Compat) -> List[WindowsLoad]:
    """Windows loader codes, by number ("[WinError 126]", "error code 193") or by their system message."""
    out: List[WindowsLoad] = []
    dlls = _DLL.findall(text)
    # PyTorch's own words for a DLL of torch\lib that will not load (torch/__init__.py: 'Error loading "PATH" or one
    # of its dependencies.', from WinError 126), often pasted cut short before "or one of its dependencies"
    # a bare "Error 127" is Windows' only beside a DLL: make's "*** [Makefile:219: x.o] Error 127" is a shell's
    # command not found (open-gpu-kernel-modules#805: g++ missing)
    numbers = {int(m.group(2)) for m in _WIN_CODE.finditer(text)
               if dlls or not m.group(1).lower().startswith("error")}
    said = text.lower()
    torch_dll = not numbers and "winerror" not in said and _TORCH_DLL.search(text) is not None and not any(
        row["message"].lower() in said for row in compat.windows_loader_errors())  # a WinError named decides
    for row in compat.windows_loader_errors():
        by_number = row["code"] in numbers or (torch_dll and row["code"] == 126)
        if (by_number or row["message"].lower() in text.lower()) and row["code"] not in [w.code for w in out]:
            out.append(WindowsLoad(row["code"], row["message"], dlls[0] if dlls else ""))
    return out
