"""Theano's configuration as Theano reads it: THEANO_FLAGS (comma-separated key=value) and the .theanorc files."""
from __future__ import annotations

import configparser
import shlex
from typing import Dict, List, Optional, Sequence, Tuple

Setting = Tuple[str, str]  # (value, where it came from)


def parse_flags(text: str) -> Tuple[Dict[str, str], Optional[str]]:
    """THEANO_FLAGS split the way theano/configparser.py splits it (shlex, posix quoting, ',' as the only
    separator; a key without '=' is ignored; the last value of a key wins). Returns (flags, error)."""
    lexer = shlex.shlex(text, posix=True)
    lexer.whitespace = ","
    lexer.whitespace_split = True
    out: Dict[str, str] = {}
    try:
        for pair in lexer:
            pair = pair.strip()
            if "=" in pair:
                key, value = pair.split("=", 1)
                out[key] = value
    except ValueError as exc:  # an unbalanced quote: Theano's own import fails the same way
        return out, "THEANO_FLAGS cannot be split: %s" % exc
    return out, None


def expand_user(path: str, home: str) -> str:
    """os.path.expanduser for the inspected machine: '~' is its HOME, '~name' that user's home folder."""
    if not path.startswith("~"):
        return path
    head, sep, rest = path[1:].partition("/")
    base = home if not head else ("/root" if head == "root" else "/home/" + head)
    return base.rstrip("/") + (sep + rest if sep else "") if base else path


def rc_files(theanorc: Optional[str], home: str, windows: bool = False, separator: str = ":") -> List[str]:
    """The files Theano reads, in order (later ones win): $THEANORC split on os.pathsep, else ~/.theanorc
    (and ~/.theanorc.txt on Windows)."""
    if theanorc is not None:
        return [expand_user(p, home) for p in theanorc.split(separator)]
    files = [expand_user("~/.theanorc", home)]
    if windows:
        files.append(expand_user("~/.theanorc.txt", home))
    return files


def _key(section: str, option: str) -> str:
    return option if section == "global" else "%s.%s" % (section, option)


def parse_rc(files: Sequence[Tuple[str, str]], defaults: Optional[Dict[str, str]] = None
             ) -> Tuple[Dict[str, Setting], List[str]]:
    """Settings of the rc files (path, text), later files winning, as 'section.option' keys ('global' options
    bare). Values are interpolated with Theano's defaults (USER, TMPDIR, ...), else kept raw, as Theano does.
    Returns (settings, problems): a file Python's configparser rejects makes `import theano` fail."""
    settings: Dict[str, Setting] = {}
    problems: List[str] = []
    for path, text in files:
        parser = configparser.ConfigParser(defaults=dict(defaults or {}))
        raw = configparser.RawConfigParser()
        try:
            parser.read_string(text, source=path)
            raw.read_string(text, source=path)
        except configparser.Error as exc:
            said = " ".join(str(exc).split())  # configparser quotes the offending line, which may be huge
            problems.append("%s: %s" % (path, said if len(said) <= 200 else said[:197] + "..."))
            continue
        for section in parser.sections():
            for option in raw.options(section):
                try:
                    value = parser.get(section, option)
                except (configparser.InterpolationError, ValueError):
                    value = raw.get(section, option)
                settings[_key(section, option)] = (value, path)
    return settings, problems


def effective(flags: Dict[str, str], rc: Dict[str, Setting], key: str) -> Optional[Setting]:
    """A key's value as Theano looks it up: THEANO_FLAGS first, then the rc files."""
    if key in flags:
        return flags[key], "THEANO_FLAGS"
    return rc.get(key)
