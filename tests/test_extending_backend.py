"""docs/extending.md (Adding a backend): its two worked examples are the files tests import and run, end to end.

- ``docs/examples/toy_embedder.py`` is picked by ``localizer.clip.backend`` (Python, and the CLI through an
  entry point) and localises a real comparison;
- ``docs/examples/function_chat.py`` serves every model call of a comparison and of open-mode judging,
  with no HTTP server involved.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from viddiff.api import VidDiff
from viddiff.config import DataConfig, load_config
from viddiff.data.viddiffbench import load_dataset
from viddiff.eval.runner import evaluate
from viddiff.testing.fake_openai import request_from_messages
from viddiff.testing.responders import ScriptedModel

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "docs" / "examples"


def scripted_generate(messages: list[dict]) -> str:
    """viddiff's scripted stand-in model, called in-process as a non-OpenAI backend would call its SDK."""
    return ScriptedModel()(request_from_messages(messages))


@pytest.fixture
def pair(synth_dir: Path) -> tuple[str, str]:
    sample = load_dataset(DataConfig(dataset=str(synth_dir)))[2]
    return sample.videos[0].path, sample.videos[1].path


def test_the_toy_embedder_is_chosen_by_config_and_localises_a_comparison(docs_example, pair, offline_sets) -> None:
    toy = docs_example("toy_embedder")
    config = load_config(None, [*offline_sets[1::2], "localizer.clip.backend=toy_grid"])

    async def go():
        vd = VidDiff(config)
        try:
            return vd, await vd.acompare(*pair, action="barbell back squat", differences=["the squat is deeper"])
        finally:
            await vd.aclose()

    vd, result = asyncio.run(go())
    assert isinstance(vd.embedder, toy.GridColourEmbedder)
    (difference,) = result.differences
    assert difference.prediction in ("a", "b", "c") and difference.keyframes_a and difference.keyframes_b
    stats = vd.clip_stats()
    assert stats["image_forward"] > 0 and stats["text_forward"] > 0


def test_the_toy_embedder_is_chosen_from_the_cli_through_its_entry_point(pair, offline_sets, tmp_path: Path) -> None:
    """An installed plug-in needs no import: its entry point makes the name valid in --set."""
    info = tmp_path / "viddiff_toy_grid-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: viddiff-toy-grid\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[viddiff.embedders]\ntoy_grid = toy_embedder:make_grid_colour_embedder\n")
    code = (
        "import sys, viddiff.cli; code = viddiff.cli.main(sys.argv[1:]); "
        "print('open_clip loaded:', 'open_clip' in sys.modules); sys.exit(code)"
    )
    args = [*pair, "--action", "squat", "--difference", "the squat is deeper", "--json", *offline_sets]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(EXAMPLES), str(ROOT)])}
    proc = subprocess.run(
        [sys.executable, "-c", code, "compare", *args, "--set", "localizer.clip.backend=toy_grid"],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out, loaded = proc.stdout.rsplit("\n", 2)[:2]
    assert json.loads(out)["differences"][0]["prediction"] in ("a", "b", "c")
    assert loaded == "open_clip loaded: False"


def test_the_function_chat_serves_a_comparison_and_the_open_judge(
    docs_example, pair, offline_sets, synth_dir, scripted_server
) -> None:
    chat_module = docs_example("function_chat")
    chat = chat_module.FunctionChat(scripted_generate)
    config = load_config(None, offline_sets[1::2])
    served_before = len(scripted_server.requests)

    async def compare():
        vd = VidDiff(config, client=chat)
        try:
            return await vd.acompare(*pair, action="barbell back squat", n_differences=3)
        finally:
            await vd.aclose()

    result = asyncio.run(compare())
    assert result.mode == "open" and 1 <= len(result.differences) <= 3
    assert {"proposer", "differencer"} <= set(chat.usage.by_stage())

    samples = load_dataset(DataConfig(dataset=str(synth_dir)))
    predictions = [  # each labelled difference restated as a prediction, at most N_diff of them
        {key: {"description": s.differences[key].description, "prediction": letter} for key, letter in labelled}
        for s in samples
        for labelled in [[(k, v) for k, v in s.labels.items() if v in ("a", "b")][: s.n_differences_open]]
    ]
    metrics = evaluate(samples, predictions, "open", config, client=chat)
    assert metrics.overall.n > 0 and metrics.judge_issues == []
    assert set(metrics.usage) and set(metrics.usage) <= set(chat.usage.by_stage())
    assert len(scripted_server.requests) == served_before  # no HTTP: every answer came from the function
