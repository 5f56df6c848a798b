"""The package's import graph and its layers: what ``tests/test_layers.py`` holds the code to.

Every ``import`` / ``from ... import`` between ``viddiff`` modules counts, at any depth: a function-level
(lazy) import is still a dependency, and so is one under ``if TYPE_CHECKING:`` (a type a module needs is
a module it depends on). ``from pkg import sub`` where ``sub`` is a submodule counts as a dependency on
``pkg.sub`` only. Strings naming modules (``"module:attr"`` entries of :mod:`viddiff.plugins`, the lazy
table of ``viddiff/__init__.py``) are not imports.

The layers, bottom first: a module may import its own wing and the wings of its layer or below, never
above (stages never import runs; runs never import commands). The stages (proposer, localizer,
differencer, pose) never import one another: methods compose them.
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path
from typing import Iterator

LAYERS: tuple[tuple[str, ...], ...] = (
    ("viddiff", "errors", "console", "plugins", "templates", "schema", "config", "store", "cache"),
    ("video", "backends"),
    ("proposer", "localizer", "differencer", "pose", "data"),
    ("eval", "methods"),
    ("benchmarks",),
    ("report",),
    ("runs",),
    ("audit",),
    ("api", "commands", "cli", "serve", "testing"),
)
"""Wings by layer; a wing is a top-level module or sub-package of ``viddiff`` (``viddiff`` = its ``__init__``)."""

STAGES = ("proposer", "localizer", "differencer", "pose")
MAX_TOP_LEVEL_MODULES = 12


def modules(package_dir: Path) -> dict[str, Path]:
    """Dotted module name → file, for every ``.py`` file under ``package_dir`` (the ``viddiff`` folder)."""
    found = {}
    for path in sorted(package_dir.rglob("*.py")):
        name = ".".join(path.relative_to(package_dir.parent).with_suffix("").parts)
        found[name.removesuffix(".__init__")] = path
    return found


def import_graph(mods: dict[str, Path], *, type_checking: bool = True) -> dict[str, set[str]]:
    """Module → the package modules it imports (``type_checking=False`` leaves ``if TYPE_CHECKING:`` out)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in _nodes(ast.parse(path.read_text()), type_checking):
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


def _nodes(tree: ast.AST, type_checking: bool) -> Iterator[ast.AST]:
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not type_checking and isinstance(child, ast.If) and _is_type_checking(child.test):
                stack.extend(child.orelse)
                continue
            stack.append(child)


def _is_type_checking(test: ast.expr) -> bool:
    return getattr(test, "id", getattr(test, "attr", None)) == "TYPE_CHECKING"


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

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for v in nodes:
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return found


def wing(module: str) -> str:
    """``viddiff.runs.pipeline`` → ``runs``; ``viddiff`` → ``viddiff``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def layer_of(wing_name: str) -> int:
    for level, wings in enumerate(LAYERS):
        if wing_name in wings:
            return level
    raise KeyError(f"wing {wing_name!r} is in no layer of viddiff.testing.imports.LAYERS: add it")


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    """Each import that goes up a layer, or from one stage into another, as ``a -> b (why)``."""
    found = []
    for source, targets in sorted(graph.items()):
        for target in sorted(targets):
            ws, wt = wing(source), wing(target)
            if ws == wt:
                continue
            if layer_of(wt) > layer_of(ws):
                found.append(f"{source} -> {target} (layer {layer_of(ws)} imports layer {layer_of(wt)})")
            elif ws in STAGES and wt in STAGES:
                found.append(f"{source} -> {target} (a stage imports another stage)")
    return found


def top_level_modules(mods: dict[str, Path]) -> list[str]:
    """Modules directly in the package (``__init__`` counted), sub-packages left out."""
    return sorted(name for name, path in mods.items() if name.count(".") == 1 and path.name != "__init__.py") + [
        "viddiff"
    ]
