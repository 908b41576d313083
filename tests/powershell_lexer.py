"""Reading a PowerShell command as PowerShell would, with Pygments' PowerShell lexer (there is no pwsh here): its
single-quoted arguments decoded, and a failure where the lexer meets what PowerShell would not read."""
from __future__ import annotations

from typing import List

from pygments.lexers import PowerShellLexer
from pygments.token import Error, String

ENDS_AN_ARGUMENT = " ),;"
STARTS_AN_ARGUMENT = " (,+"


def quoted_arguments(command: str) -> List[str]:
    """The single-quoted strings of a PowerShell command that stand as whole arguments, as PowerShell reads them;
    fails where the lexer meets what PowerShell would not read (an unbalanced quote, say)."""
    tokens = list(PowerShellLexer().get_tokens_unprocessed(command))
    bad = [value for _, kind, value in tokens if kind in Error]
    assert not bad, "PowerShell would not read %r: %r" % (command, bad)
    out = []
    for start, kind, value in tokens:
        if kind in String.Single:
            end = start + len(value)
            assert value[0] == value[-1] == "'", (command, value)
            # A quote glued to other characters would make one argument of both: each must stand alone.
            assert start == 0 or command[start - 1] in STARTS_AN_ARGUMENT, (command, value)
            assert end == len(command) or command[end] in ENDS_AN_ARGUMENT, (command, value)
            out.append(value[1:-1].replace("''", "'"))
    return out
