"""The package's import graph: cycles, imports that go up a layer, and module / function sizes.

The graph and the layers are :mod:`viddiff.testing.imports` (``tests/test_layers.py`` holds the code to them);
this prints them, with ``if TYPE_CHECKING:`` imports counted or, with ``--runtime``, left out. Also the
largest modules and the longest functions.

Usage: python bench/import_graph.py [--runtime] [ROOT]
"""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

from viddiff.testing.imports import cycles, import_graph, layer_violations, modules, top_level_modules


def function_sizes(mods: dict[str, Path]) -> list[tuple[int, str]]:
    sizes = []
    for name, path in mods.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                sizes.append((node.end_lineno - node.lineno + 1, f"{name}.{node.name}"))
    return sorted(sizes, reverse=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", nargs="?", default=str(Path(__file__).resolve().parents[1]))
    parser.add_argument("--runtime", action="store_true", help="leave out imports under `if TYPE_CHECKING:`")
    args = parser.parse_args()
    mods = modules(Path(args.root) / "viddiff")
    graph = import_graph(mods, type_checking=not args.runtime)
    found = cycles(graph, list(mods))
    print(f"{len(mods)} modules, {sum(len(v) for v in graph.values())} imports between them")
    print(f"top-level modules: {len(top_level_modules(mods))}")
    print(f"import cycles: {len(found)}")
    for component in found:
        print("  " + " <-> ".join(component))
    upward = layer_violations(graph)
    print(f"imports against the layers: {len(upward)}")
    for line in upward:
        print("  " + line)
    lines = sorted(((len(p.read_text().splitlines()), n) for n, p in mods.items()), reverse=True)
    print("largest modules (lines): " + ", ".join(f"{n} {c}" for c, n in lines[:5]))
    print("longest functions (lines): " + ", ".join(f"{n} {c}" for c, n in function_sizes(mods)[:5]))


if __name__ == "__main__":
    main()
