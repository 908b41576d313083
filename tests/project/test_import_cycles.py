"""No import circle among the package's modules: each import, at the top of a module or inside a function (where a
circle hides, since it only fails when that function runs first), under TYPE_CHECKING too, is an arrow read from the
syntax tree; a circle is a strongly connected set of more than one module. The child scripts' bare-name imports of
their siblings (native/, smoke/, bench/) count as arrows as well. grimp, which lint-imports builds its graph with,
is asked the same question."""
from __future__ import annotations

import ast
import sys
from pathlib import Path
from typing import Dict, List, Optional, Set

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "cudnn_doctor"


def _modules() -> Dict[str, Path]:
    """Dotted name -> file, for every module of the package (a package by its __init__.py)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(REPO).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _resolve(modules: Dict[str, Path], name: str) -> Optional[str]:
    """The module an import of ``name`` runs last: the longest prefix of it that is a module of the package."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        if ".".join(parts[:end]) in modules:
            return ".".join(parts[:end])
    return None


def imports_of(modules: Dict[str, Path], name: str) -> Set[str]:
    """The package's modules ``name`` imports anywhere in its file."""
    path = modules[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: Set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                sibling = package + "." + alias.name
                if top == "cudnn_doctor":
                    out.add(_resolve(modules, alias.name) or "")
                elif sibling in modules:  # a child script's bare-name import of a sibling
                    out.add(sibling)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            elif (node.module or "").split(".")[0] == "cudnn_doctor":
                target = node.module or ""
            elif node.module and package + "." + node.module in modules:
                target = package + "." + node.module
            else:
                continue
            for alias in node.names:  # `from . import x` imports the module x where there is one
                out.add(_resolve(modules, target + "." + alias.name) or _resolve(modules, target) or "")
    out.discard("")
    out.discard(name)
    return out


def circles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """The strongly connected sets of more than one module (Tarjan's algorithm, without recursion)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    found: List[List[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def _described(graph: Dict[str, Set[str]], group: List[str]) -> str:
    members = set(group)
    return "; ".join("%s -> %s" % (a, ", ".join(sorted(graph[a] & members))) for a in group)


def test_the_cycle_finder_finds_a_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert circles(graph) == [["a", "b", "c"]]


def test_no_import_circle_counting_imports_inside_functions():
    modules = _modules()
    graph = {name: imports_of(modules, name) for name in modules}
    assert sum(len(v) for v in graph.values()) > 500  # the walk reads the package's imports
    found = circles(graph)
    assert found == [], "\n".join(_described(graph, group) for group in found)


def test_grimp_sees_no_circle_either():
    import grimp

    sys.path.insert(0, str(REPO))
    try:
        graph = grimp.build_graph("cudnn_doctor", cache_dir=None)
    finally:
        sys.path.remove(str(REPO))
    edges = {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    found = circles(edges)
    assert found == [], "\n".join(_described(edges, group) for group in found)
