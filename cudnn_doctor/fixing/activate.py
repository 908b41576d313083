"""Where new shells of an environment get fix's variables, as text (pure): a marked block at the end of a venv's
bin/activate that saves each variable and applies the fix's lines, and one inside its `deactivate` that puts the old
values back; for conda, the activate.d and deactivate.d scripts. A user's shell rc file gets them only when asked
(`fix --rc FILE`): a marked block at its end."""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from .plan import variable_names

BEGIN = "# >>> cudnn-doctor >>>"
END = "# <<< cudnn-doctor <<<"
_DEACTIVATE = "deactivate () {"
CONDA_SCRIPT = "cudnn-doctor.sh"  # etc/conda/activate.d/ and deactivate.d/ of the environment


def _saved(name: str) -> Tuple[str, str]:
    return "_CUDNN_DOCTOR_OLD_%s" % name, "_CUDNN_DOCTOR_OLD_%s_SET" % name


def save_lines(names: Sequence[str]) -> List[str]:
    out = []
    for name in names:
        value, was = _saved(name)
        out.append('if [ -n "${%s+x}" ]; then %s="$%s"; %s=1; else %s=0; fi'
                   % (name, value, name, was, was))
    return out


def restore_lines(names: Sequence[str], indent: str = "") -> List[str]:
    """Put each variable back as it was before activation (unset where it was unset); nothing when not activated."""
    out = []
    for name in names:
        value, was = _saved(name)
        out += ['if [ -n "${%s:-}" ]; then' % was,
                '    if [ "$%s" = 1 ]; then %s="$%s"; export %s; else unset %s; fi' % (was, name, value, name, name),
                '    unset %s %s' % (value, was),
                'fi']
    return [indent + line for line in out]


def block_lines(text: str) -> List[str]:
    """The fix lines already in a cudnn-doctor block (a venv activate's end block, or an rc file's), to keep them when
    adding."""
    start, end = _last_block(text.splitlines())
    if start is None or end is None:
        return []
    # the saves (a venv's block) and the comment (an rc file's block) are written again by whoever writes the block
    return [line for line in text.splitlines()[start + 1:end] if not line.startswith(("if [ -n \"${", "#"))]


def _last_block(lines: Sequence[str]) -> Tuple[Optional[int], Optional[int]]:
    starts = [i for i, line in enumerate(lines) if line.strip() == BEGIN]
    if not starts:
        return None, None
    start = starts[-1]
    end = next((i for i in range(start, len(lines)) if lines[i].strip() == END), None)
    return start, end


def without_blocks(text: str) -> str:
    """The activate script with every cudnn-doctor block taken out."""
    out, inside = [], False
    for line in text.splitlines(keepends=True):
        if line.strip() == BEGIN:
            inside = True
        elif line.strip() == END and inside:
            inside = False
        elif not inside:
            out.append(line)
    return "".join(out)


def venv_activate(text: str, lines: Sequence[str]) -> Optional[str]:
    """bin/activate with the fix's variable lines (and any an earlier fix wrote) in a marked block at its end and
    the restore in a marked block at the top of `deactivate`; None when the script has no `deactivate ()`."""
    kept = [line for line in block_lines(text) if line not in lines] + list(lines)
    names = variable_names(kept)
    base = without_blocks(text)
    if _DEACTIVATE not in base:
        return None
    restore = "\n".join(["    " + BEGIN, *restore_lines(names, "    "), "    " + END]) + "\n"
    at = base.index(_DEACTIVATE) + len(_DEACTIVATE) + 1  # after the line that opens the function
    if not base.endswith("\n"):
        base += "\n"
    body = base[:at] + restore + base[at:]
    return body + "\n".join([BEGIN, *save_lines(names), *kept, END]) + "\n"


def conda_scripts(lines: Sequence[str]) -> Tuple[str, str]:
    """(activate.d script, deactivate.d script) for a conda environment."""
    names = variable_names(lines)
    head = "# written by cudnn-doctor fix; `cudnn-doctor fix --undo` removes it\n"
    activate = head + "\n".join([*save_lines(names), *lines]) + "\n"
    deactivate = head + "\n".join(restore_lines(names)) + "\n"
    return activate, deactivate


def rc_text(text: str, lines: Sequence[str]) -> str:
    """A shell rc file with the fix's variable lines (and any an earlier fix wrote there) in a marked block at its
    end, where they run after the user's own settings."""
    kept = [line for line in block_lines(text) if line not in lines] + list(lines)
    base = without_blocks(text)
    if base and not base.endswith("\n"):
        base += "\n"
    return base + "\n".join([BEGIN, "# written by `cudnn-doctor fix --rc`; `cudnn-doctor fix --undo` takes it out",
                             *kept, END]) + "\n"


def shell_line(lines: Sequence[str]) -> str:
    """The fix's variables as one line to `eval` in the current shell."""
    return "; ".join(lines)
