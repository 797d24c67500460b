"""No module imports another in a circle, at any level: the core's and every built-in's modules, imports inside
functions included, read from the source (nothing is imported to find them).

Two kinds of edge are not counted: an import under `if TYPE_CHECKING:` (never run: it names types for
annotations), and a module's import of a package it lives in (Python runs a package's `__init__` before any of its
modules, whatever is written).
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.source_imports import import_statements

ROOT = Path(__file__).resolve().parent.parent


def _modules() -> dict[str, Path]:
    roots = {"gateway": ROOT / "gateway"}
    roots |= {p.name: p for p in sorted((ROOT / "plugins").iterdir()) if (p / "__init__.py").exists()}
    found = {}
    for package, root in roots.items():
        for file in root.rglob("*.py"):
            parts = [package, *file.relative_to(root).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = file
    return found


def _graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    def known(name: str) -> str:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name

    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, file in modules.items():
        package = name.split(".") if file.name == "__init__.py" else name.split(".")[:-1]
        tree = ast.parse(file.read_text(encoding="utf-8"))
        for node in import_statements(tree, type_checking=False):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    base = ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else []))
                targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
            for target in map(known, targets):
                if target and target != name and not name.startswith(target + "."):
                    graph[name].add(target)
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected parts of more than one module (Tarjan's algorithm, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                part = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    part.append(member)
                    if member == node:
                        break
                if len(part) > 1:
                    circles.append(sorted(part))
    return circles


def test_no_module_imports_another_in_a_circle() -> None:
    graph = _graph(_modules())
    circles = _circles(graph)
    described = [" <-> ".join(part) + ": " + "; ".join(
        f"{m} imports {', '.join(sorted(graph[m] & set(part)))}" for m in part) for part in circles]
    assert not circles, "modules importing each other:\n" + "\n".join(described)


def test_the_check_sees_a_circle_when_there_is_one() -> None:
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


def test_every_import_statement_is_found_but_those_for_type_checking() -> None:
    source = """
import a
if TYPE_CHECKING:
    import hidden
    if other:
        import hidden_too
else:
    import b
try:
    import c
except ImportError:
    from . import d
else:
    import e
finally:
    import f
class K:
    def method(self):
        with open("x"):
            for _ in ():
                while True:
                    import g
            else:
                import h
async def run():
    async with x:
        async for _ in y:
            from i import j
match z:
    case 1:
        import k
handler = lambda: __import__("not_a_statement")
"""
    found = [node.names[0].name if isinstance(node, ast.Import) else node.module or "."
             for node in import_statements(ast.parse(source), type_checking=False)]
    assert sorted(found) == [".", "a", "b", "c", "e", "f", "g", "h", "i", "k"]
    every = list(import_statements(ast.parse(source)))
    assert len(every) == len(found) + 2
