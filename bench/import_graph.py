"""The package's import graph: cycles, upward imports, and module / function sizes.

Counts every ``import`` / ``from ... import`` between ``viddiff`` modules, at any
depth (lazy imports inside functions included, since they are still dependencies),
except those under ``if TYPE_CHECKING:``, which never run.
``from pkg import sub`` where ``sub`` is a submodule counts as a dependency on
``pkg.sub`` only. Prints the strongly connected components larger than one module
(import cycles), the largest modules and the longest functions.

Usage: python bench/import_graph.py [ROOT]
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path


def modules(root: Path) -> dict[str, Path]:
    found = {}
    for path in sorted((root / "viddiff").rglob("*.py")):
        name = ".".join(path.relative_to(root).with_suffix("").parts)
        found[name.removesuffix(".__init__")] = path
    return found


def import_graph(mods: dict[str, Path]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in _runtime_nodes(ast.parse(path.read_text())):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(parts + ([base] if base else []))
                subs = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in mods]
                targets = subs if len(subs) == len(node.names) else [base, *subs]
            graph[name].update(t for t in targets if t in mods and t != name)
    return graph


def _runtime_nodes(tree: ast.AST):
    """Every node except the bodies of ``if TYPE_CHECKING:`` blocks."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and getattr(child.test, "id", getattr(child.test, "attr", None)) == "TYPE_CHECKING":
                stack.extend(child.orelse)
                continue
            stack.append(child)


def cycles(graph: dict[str, set[str]], nodes: list[str]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for v in nodes:
        if v not in index:
            visit(v)
    return found


def function_sizes(mods: dict[str, Path]) -> list[tuple[int, str]]:
    sizes = []
    for name, path in mods.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                sizes.append((node.end_lineno - node.lineno + 1, f"{name}.{node.name}"))
    return sorted(sizes, reverse=True)


def main() -> None:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[1])
    mods = modules(root)
    graph = import_graph(mods)
    found = cycles(graph, list(mods))
    print(f"{len(mods)} modules, {sum(len(v) for v in graph.values())} imports between them")
    print(f"import cycles: {len(found)}")
    for component in found:
        print("  " + " <-> ".join(component))
    lines = sorted(((len(p.read_text().splitlines()), n) for n, p in mods.items()), reverse=True)
    print("largest modules (lines): " + ", ".join(f"{n} {c}" for c, n in lines[:5]))
    print("longest functions (lines): " + ", ".join(f"{n} {c}" for c, n in function_sizes(mods)[:5]))


if __name__ == "__main__":
    main()
