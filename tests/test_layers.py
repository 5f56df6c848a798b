"""The house holds its shape: no import circles (lazy and type-only imports included), no import up a layer,
no stage importing another, and a short top level (the layers are in ``viddiff.testing.imports``)."""

from __future__ import annotations

from pathlib import Path

import viddiff
from viddiff.testing.imports import (
    MAX_TOP_LEVEL_MODULES,
    cycles,
    import_graph,
    layer_of,
    layer_violations,
    modules,
    top_level_modules,
    wing,
)

PACKAGE = Path(viddiff.__file__).parent


def test_no_import_circles_even_through_lazy_or_type_only_imports() -> None:
    mods = modules(PACKAGE)
    assert cycles(import_graph(mods), list(mods)) == []


def test_no_module_imports_a_higher_layer_or_another_stage() -> None:
    assert layer_violations(import_graph(modules(PACKAGE))) == []


def test_every_wing_has_a_layer() -> None:
    for name in modules(PACKAGE):
        layer_of(wing(name))  # raises, naming the wing, when one is added without a place in the layers


def test_the_top_level_stays_short() -> None:
    top = top_level_modules(modules(PACKAGE))
    assert len(top) <= MAX_TOP_LEVEL_MODULES, top


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "viddiff"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_the_checks_catch_a_lazy_circle_an_upward_import_and_a_stage_to_stage_import(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "__init__.py": "",
        "config.py": "def check():\n    from viddiff.backends import clip\n",
        "backends/__init__.py": "",
        "backends/clip.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from viddiff.config import Config\n",
        "localizer/__init__.py": "",
        "localizer/scores.py": "from viddiff.runs import pipeline\nfrom viddiff.proposer import prompts\n",
        "proposer/__init__.py": "",
        "proposer/prompts.py": "",
        "runs/__init__.py": "",
        "runs/pipeline.py": "",
    })
    mods = modules(root)
    graph = import_graph(mods)
    assert cycles(graph, list(mods)) == [["viddiff.backends.clip", "viddiff.config"]]
    assert cycles(import_graph(mods, type_checking=False), list(mods)) == []
    assert layer_violations(graph) == [
        "viddiff.config -> viddiff.backends.clip (layer 0 imports layer 1)",
        "viddiff.localizer.scores -> viddiff.proposer.prompts (a stage imports another stage)",
        "viddiff.localizer.scores -> viddiff.runs.pipeline (layer 2 imports layer 6)",
    ]
