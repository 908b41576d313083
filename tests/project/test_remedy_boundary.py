"""Fix text is written only in remedies/, and tables are read only in knowledge/: checked on the source's syntax tree.

import-linter checks which modules import which; it cannot see *what* is imported or passed. These checks can:
- outside remedies/ no module builds a Fix (``Fix(...)``) or imports the text primitives remedies compose fixes
  from (``run``, ``say``, ``advice``, ...), so a rule can only pick a named builder such as ``header_fix``;
- no module hands a remedies builder (called by name or through its module) a sentence or a command (a string
  literal with a space in it): the words of a fix belong to its builder, where tests/remedies can run and check them;
- outside knowledge/ nobody reads a compat table raw (``.table(...)``, ``.data[...]``), and probes, rules and
  remedies never load the knowledge base themselves: it is handed to them.
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Iterator, List, Set, Tuple

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "cudnn_doctor"

# The pieces remedies/ composes fixes from: text templates, shell quoting, sequencing. Only remedies/ may use them.
PRIMITIVES = {"run", "say", "advice", "or_else", "then", "noted", "stated", "capitalized", "q", "qs",
              "command_fix", "line", "sh_quote", "powershell_quote", "ps_quote", "in_folder",
              "folder_arg", "export_path_line", "prepend_ld_path", "ld_library_path_without", "add_dll_directory",
              "path_add", "path_remove"}


def _modules(*parts: str) -> List[Path]:
    base = PACKAGE.joinpath(*parts)
    return sorted(base.rglob("*.py")) if base.is_dir() else [base]


def _name(path: Path) -> str:
    return str(path.relative_to(PACKAGE.parent))


def _tree(path: Path) -> ast.AST:
    return ast.parse(path.read_text(), filename=str(path))


def _outside(folder: str) -> List[Path]:
    inside = PACKAGE / folder
    return [p for p in _modules() if inside not in p.parents]


def _remedy_imports(tree: ast.AST) -> Iterator[Tuple[str, int]]:
    """(name, line) of every name imported from cudnn_doctor.remedies (any of its modules)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and (
                node.module == "remedies" or node.module.startswith("remedies.")
                or ".remedies" in "." + node.module):
            for alias in node.names:
                yield alias.name, node.lineno


@pytest.mark.parametrize("path", _outside("remedies"), ids=_name)
def test_no_module_outside_remedies_imports_a_text_primitive(path: Path):
    bad = ["%d imports %s" % (line, name) for name, line in _remedy_imports(_tree(path)) if name in PRIMITIVES]
    assert not bad, "%s composes fix text itself; call a named remedies/ builder instead:\n%s" % (
        _name(path), "\n".join(bad))


def test_no_module_outside_remedies_builds_a_fix():
    allowed = {PACKAGE / "model.py"}  # where Fix is defined
    bad = []
    for path in _outside("remedies"):
        if path in allowed:
            continue
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "Fix":
                bad.append("%s:%d" % (_name(path), node.lineno))
    assert not bad, "Fix built outside remedies/:\n" + "\n".join(bad)


def _sentences(node: ast.AST) -> Iterator[ast.AST]:
    """String literals with a space in them (words or a command), anywhere inside ``node``."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and " " in sub.value.strip():
            yield sub
        elif isinstance(sub, ast.JoinedStr):
            yield sub


def _callee_names(call: ast.Call) -> Set[str]:
    """The names a call goes through: ``f(...)`` -> {f}; ``mod.f(...)`` -> {mod, f}."""
    func = call.func
    if isinstance(func, ast.Name):
        return {func.id}
    if isinstance(func, ast.Attribute):
        return {func.attr} | ({func.value.id} if isinstance(func.value, ast.Name) else set())
    return set()


@pytest.mark.parametrize("path", _outside("remedies"), ids=_name)
def test_no_module_hands_remedies_words(path: Path):
    """Rules, explain, bench, install, smoke, diagnose...: a remedies builder (or module) is given values only."""
    tree = _tree(path)
    builders: Set[str] = {name for name, _ in _remedy_imports(tree)}
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _callee_names(node) & builders:
            for arg in list(node.args) + [k.value for k in node.keywords]:
                for lit in _sentences(arg):
                    bad.append("%d: %s(...) is given %s" % (lit.lineno, ast.unparse(node.func),
                                                            ast.unparse(lit)[:70]))
    assert not bad, "%s writes fix words itself; move them into a remedies/ builder:\n%s" % (
        _name(path), "\n".join(bad))


def _refusal_fixes(tree: ast.AST) -> Iterator[Tuple[int, ast.AST]]:
    """(line, argument) of the fix handed to every ``Refusal(what, why, fix, code)``: third positional or ``fix=``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "Refusal":
            given = node.args[2:3] + [k.value for k in node.keywords if k.arg == "fix"]
            for arg in given:
                yield node.lineno, arg


@pytest.mark.parametrize("path", _modules("install"), ids=_name)
def test_installer_hands_refusals_no_words(path: Path):
    bad = ["%d: Refusal(...) is given %s" % (line, ast.unparse(lit)[:70])
           for line, arg in _refusal_fixes(_tree(path)) for lit in _sentences(arg)]
    assert not bad, "%s writes a refusal's fix itself; build it with a remedies/ builder (remedies/install*.py):\n%s" \
        % (_name(path), "\n".join(bad))


def _raw_table_reads(tree: ast.AST) -> Iterator[int]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "table":
            yield node.lineno
        # compat.data[...], ctx.compat.data[...], self.compat.data[...]: the facade's raw dict, however reached.
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "data":
            owner = node.value.value
            if (isinstance(owner, ast.Name) and owner.id == "compat") or \
                    (isinstance(owner, ast.Attribute) and owner.attr == "compat"):
                yield node.lineno


def test_no_raw_table_read_outside_knowledge():
    bad = ["%s:%d" % (_name(p), line) for p in _outside("knowledge") for line in _raw_table_reads(_tree(p))]
    assert not bad, "compat tables read past the knowledge facade:\n" + "\n".join(bad)


@pytest.mark.parametrize("folder", ["probes", "rules", "remedies"])
def test_knowledge_is_handed_in_not_loaded(folder: str):
    bad = []
    for path in _modules(folder):
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == \
                    "load_compat":
                bad.append("%s:%d" % (_name(path), node.lineno))
    assert not bad, "%s/ loads the knowledge base itself instead of using the one handed in:\n%s" % (
        folder, "\n".join(bad))
