"""Fixes for Theano's configuration: a new THEANO_FLAGS (which beats every .theanorc), the .theanorc edit that
keeps it, and the cuDNN Theano can use."""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence

from ..model import Fix
from ..model_theano import TheanoFacts
from ..readers.theano_config import parse_flags
from .acting import at, sudo
from .shell import advice, or_else, prepend_ld_path, q, run, say


def _flag_value(value: str) -> str:
    """A value as THEANO_FLAGS must spell it: Theano splits on ',' with shlex, so quote values that hold one."""
    if any(c in value for c in ',"\'\\ #'):  # shlex: '#' would start a comment
        return '"%s"' % value.replace("\\", "\\\\").replace('"', '\\"')
    return value


def _double_quoted(text: str) -> str:
    """Text safe inside a POSIX shell's double quotes."""
    return "".join("\\" + c if c in '"$`\\' else c for c in text)


def theano_flags_line(theano: TheanoFacts, changes: Dict[str, Optional[str]]) -> str:
    """The shell line that applies `changes` (None drops a key) to THEANO_FLAGS. New values are appended to what
    the shell already has (Theano keeps the last value of a key), so several fixes compose in one shell; dropping
    a key rewrites the whole value from what the check saw."""
    pairs = ",".join("%s=%s" % (k, _flag_value(v)) for k, v in changes.items() if v is not None)
    flags, _ = parse_flags(theano.flags or "")
    if pairs and not any(v is None and k in flags for k, v in changes.items()):  # a key set only in a file
        if "!" in pairs:  # interactive bash expands ! inside double quotes: keep the new part single-quoted
            return 'export THEANO_FLAGS="${THEANO_FLAGS:+$THEANO_FLAGS,}"%s' % q(pairs)
        return 'export THEANO_FLAGS="${THEANO_FLAGS:+$THEANO_FLAGS,}%s"' % _double_quoted(pairs)
    for key, value in changes.items():
        if value is None:
            flags.pop(key, None)
        else:
            flags[key] = value  # a key already set keeps its place
    if not flags:
        return "unset THEANO_FLAGS"
    return "export THEANO_FLAGS=%s" % q(",".join("%s=%s" % (k, _flag_value(v)) for k, v in flags.items()))


def _rc_words(theano: TheanoFacts, changes: Dict[str, Optional[str]]) -> str:
    """Where the same change goes to last: the rc file a key came from (or the first file Theano reads)."""
    parts: List[str] = []
    for key, value in changes.items():
        section, _, option = key.rpartition(".")
        section = section or "global"
        where = theano.settings.get(key, {}).get("from")
        if where in (None, "THEANO_FLAGS"):
            where = theano.rc_found[-1] if theano.rc_found else (theano.rc_files or ["~/.theanorc"])[0]
        if value is None:
            parts.append("remove `%s` from [%s] in %s" % (option, section, where))
        else:
            parts.append("set `%s = %s` under [%s] in %s" % (option, value, section, where))
    return "; ".join(parts)


def theano_setting_fix(theano: TheanoFacts, changes: Dict[str, Optional[str]], why: str = "",
                       extra: Sequence[str] = ()) -> Fix:
    """Change Theano settings for this shell through THEANO_FLAGS, with the .theanorc edit that keeps them;
    `extra` commands run after it (e.g. the LD_LIBRARY_PATH a release without a run path needs)."""
    line = theano_flags_line(theano, changes)
    keep = "to keep it, %s%s" % (_rc_words(theano, changes),
                                 " (then drop it from THEANO_FLAGS)" if theano.flags else "")
    commands = [line] + list(extra)
    return run(*commands, text="%s%s   (THEANO_FLAGS beats .theanorc; %s)" % (" && ".join(commands), why, keep),
               manual=keep)


def theano_dev_link_fix(folder: str, soname_file: str) -> Fix:
    """Theano links its cuDNN ops with `-lcudnn`: the unversioned libcudnn.so must exist in dnn.library_path."""
    return run(sudo("ln -s %s %s" % (q(soname_file), q(at(folder.rstrip("/") + "/libcudnn.so")))))


def theano_without_cudnn(theano: TheanoFacts) -> Fix:
    """Run Theano without cuDNN (slower convolutions, but it runs)."""
    return run(theano_flags_line(theano, {"dnn.enabled": "False"}))


def theano_cudnn_choice(theano: TheanoFacts, include: Optional[str], library: Optional[str],
                        install: Optional[Fix], fallback: Fix, what: str, loader_misses: bool = False) -> Fix:
    """Point Theano at a cuDNN it accepts that the machine already has (adding the folder to LD_LIBRARY_PATH where
    the loader would not find it at run time), else install one, else run without."""
    if library:
        changes: Dict[str, Optional[str]] = {"dnn.library_path": library}
        if include:
            changes["dnn.include_path"] = include
        main = theano_setting_fix(theano, changes, "   (%s)" % what if what else "",
                                  [prepend_ld_path(library)] if loader_misses else [])
        return or_else(main, fallback, "%s; or run without cuDNN: %s")
    if install is not None and not install.commands:  # nothing to install: running without cuDNN is the command
        return say("%s; until then, run without cuDNN: %s", install, fallback)
    if install is not None:
        return or_else(install, fallback, "%s; or run without cuDNN: %s")
    return fallback


def theano_device_fix(theano: TheanoFacts, key: str, device: str) -> Fix:
    """device=gpuN (the old back-end) becomes device=cudaN (the gpuarray back-end, which needs pygpu)."""
    return theano_setting_fix(theano, {key: "cuda" + device[3:]},
                              "   (the gpuarray back-end imports pygpu, libgpuarray's Python module)")


def theano_accepted_copy_fix(theano: TheanoFacts, include: Optional[str], library: str, version: str,
                             theano_version: str, loader_misses: bool) -> Fix:
    """Point Theano at a cuDNN copy on this machine that its release accepts, else run without cuDNN."""
    return theano_cudnn_choice(theano, include, library, None, theano_without_cudnn(theano),
                               "cuDNN %s, which Theano %s accepts" % (version, theano_version), loader_misses)


def theano_install_cudnn_fix(theano: TheanoFacts, install: Fix) -> Fix:
    """Install a cuDNN Theano accepts (`install`), else run without cuDNN."""
    return theano_cudnn_choice(theano, None, None, install, theano_without_cudnn(theano), "")


def theano_no_cudnn_build_fix(theano: TheanoFacts, theano_version: str, backend: str, supports: str,
                              cuda: Optional[str]) -> Fix:
    """No cuDNN build Theano accepts exists for this CUDA: say so, and run without cuDNN."""
    return theano_install_cudnn_fix(theano, advice(
        "Theano %s's %s back-end accepts cuDNN %s, and compat knows no such build for CUDA %s" % (
            theano_version, backend, supports, cuda or "(none found)")))


def theano_quiet_cudnn_advice(theano_version: str, current: Optional[str], low: str, high: str,
                              cuda: Optional[str]) -> Fix:
    """Theano only warns about this cuDNN and no release it does not warn about has a build here: which to use."""
    return advice("Theano %s runs with cuDNN %s and only warns; if its cuDNN ops misbehave, use a cuDNN from %s to "
                  "below %s (compat knows no such build for CUDA %s)" % (theano_version, current, low, high,
                                                                         cuda or "(none found)"))


def theano_header_fix(theano: TheanoFacts, folder: str, version: str) -> Fix:
    """dnn.include_path at the folder holding the header of the cuDNN release Theano links."""
    return theano_setting_fix(theano, {"dnn.include_path": folder}, "   (cuDNN %s's header)" % version)


def theano_loaded_header_fix(theano: TheanoFacts, folder: str, version: str) -> Fix:
    """dnn.include_path at the header of the cuDNN Theano loads, so header and library are one release."""
    return theano_setting_fix(theano, {"dnn.include_path": folder},
                              "   (the header of the cuDNN %s it loads)" % version)


def theano_header_library_fix(theano: TheanoFacts, folder: str, header_version: str) -> Fix:
    """dnn.library_path at the library of the release Theano's header says, so header and library are one release."""
    return theano_setting_fix(theano, {"dnn.library_path": folder},
                              "   (the library of the cuDNN %s header)" % header_version)


def theano_one_release_fix() -> Fix:
    return advice("set dnn.include_path and dnn.library_path to the include and lib64 folders of one cuDNN release")


def theano_dnn_path_fix(theano: TheanoFacts, key: str, folder: Optional[str]) -> Fix:
    """A dnn.*_path that holds no cuDNN: point it at a folder that does, else drop it (Theano's default applies)."""
    if folder:
        return theano_setting_fix(theano, {key: folder})
    return theano_setting_fix(theano, {key: None}, "   (Theano then uses its default)")


def theano_config_syntax_fix(problem: str) -> Fix:
    """Correct the configuration Theano cannot parse: an rc file (an INI file), or THEANO_FLAGS' quotes."""
    if problem.startswith("THEANO_FLAGS"):
        return advice("balance the quotes in THEANO_FLAGS")
    return advice("correct %s (an INI file: [section] headers, key = value lines)" % problem.split(": ")[0])
