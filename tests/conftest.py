"""Fixtures shared by the end-to-end tests: a small synthetic benchmark and a scripted fake model server."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Callable, Iterator

import pytest

from viddiff.data.synthetic import write_synthetic_benchmark
from viddiff.testing import offline_overrides
from viddiff.testing.fake_openai import FakeOpenAIServer
from viddiff.testing.responders import ScriptedModel

DOCS_EXAMPLES = Path(__file__).resolve().parents[1] / "docs" / "examples"
"""The worked examples of docs/extending.md, which tests import and run."""


@pytest.fixture(scope="session")
def synth_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three pairs: an image-directory video, a trimmed video, a plain pair; two actions, two splits."""
    out = tmp_path_factory.mktemp("synth-e2e")
    write_synthetic_benchmark(out, pairs=3, seed=5)
    return out


@pytest.fixture(scope="session")
def scripted_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(ScriptedModel()) as server:
        yield server


@pytest.fixture
def offline_sets(tmp_path: Path, scripted_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """``--set`` arguments for an offline run with a fresh cache in this test's tmp dir."""
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")
    args: list[str] = []
    for item in offline_overrides(scripted_server.base_url, str(tmp_path / "cache.sqlite")):
        args += ["--set", item]
    return args


@pytest.fixture
def copy_dataset(synth_dir: Path, tmp_path: Path):
    """``copy_dataset(edit, name)``: the synthetic benchmark's rows (absolute video paths) written to
    ``tmp_path/name`` after ``edit(rows)`` changed them in place; returns the directory. The videos are
    hard links inside the new folder, so the rows pass the loader's path containment."""
    import json
    import os
    import shutil

    def make(edit=None, name: str = "dataset") -> Path:
        out = tmp_path / name
        shutil.copytree(synth_dir / "videos", out / "videos", copy_function=os.link)
        rows = [json.loads(line) for line in (synth_dir / "dataset.jsonl").read_text().splitlines()]
        for row in rows:
            row["videos"] = json.dumps([{**v, "path": str(out / v["path"])} for v in json.loads(row["videos"])])
        if edit is not None:
            edit(rows)
        (out / "dataset.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        return out

    return make


def _import_docs_example(name: str) -> ModuleType:
    module_name = f"viddiff_docs_{name}"
    if module_name not in sys.modules:
        spec = importlib.util.spec_from_file_location(module_name, DOCS_EXAMPLES / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
    return sys.modules[module_name]


@pytest.fixture(scope="session")
def docs_example() -> Callable[[str], ModuleType]:
    """``docs_example(name)``: ``docs/examples/<name>.py`` imported once per process (importing an example
    may register a plug-in, which must happen once)."""
    return _import_docs_example
