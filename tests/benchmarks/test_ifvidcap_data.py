"""IF-VidCap loading: the repository layout, the Hub's table layout over a local Hub server, response files,
and clear errors for files that do not line up."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from viddiff import benchmarks
from viddiff.benchmarks.ifvidcap.data import CHECKLIST_FILE, PROMPT_FILE, load_ifvidcap
from viddiff.benchmarks.ifvidcap.responses import load_responses
from viddiff.benchmarks.ifvidcap.synthetic import write_synthetic_ifvidcap
from viddiff.config import Config, DataConfig, IfvidcapConfig
from viddiff.errors import DatasetError, PredictionFormatError
from viddiff.testing.fake_hf import FakeHubServer

REPO = "NJU-LINK/IF-VidCap"


@pytest.fixture(scope="module")
def layout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ifvidcap")
    write_synthetic_ifvidcap(out, videos=2, seed=4)
    return out


def _load(dataset: str, **data: object):
    return load_ifvidcap(DataConfig(benchmark="ifvidcap", dataset=dataset, **data), IfvidcapConfig(), "SYSTEM")


def test_repository_layout_gives_one_caption_sample_per_instruction(layout: Path) -> None:
    dataset = _load(str(layout))
    prompts = json.loads((layout / PROMPT_FILE).read_text())
    assert [s.sample_key for s in dataset] == [f"{v}/{p['prompt_id']}" for v, ps in prompts.items() for p in ps]
    first = dataset[0]
    assert first.task is not None and first.task.prompt == prompts["clip_001"][0]["generated_prompt"]
    assert first.task.system_prompt == "SYSTEM" and first.task.fps == 2.0 and first.domain == "ifvidcap"
    assert first.videos[0].path == str(layout / "video/preprocessed/clip/001.mp4") and Path(first.videos[0].path).is_file()
    ins = dataset.instructions["clip_001/03"]
    assert [r.constraint_id for r in ins.checklist.rules] == ["json_object", "keyword"]
    assert [len(g.check_items) for g in ins.checklist.groups] == [1, 0]  # the first video's empty group
    assert dataset.instructions["clip_001/04"].checklist.rules == []
    assert _load(str(layout / PROMPT_FILE)).source == dataset.source  # the prompt file itself works too
    assert [s.sample_key for s in _load(str(layout), limit=3)] == ["clip_001/01", "clip_001/02", "clip_001/03"]


def test_the_benchmark_system_prompt_names_the_frame_rate(layout: Path) -> None:
    cfg = Config().with_overrides([f"data.dataset={layout}", "data.benchmark=ifvidcap", "ifvidcap.fps=1"])
    sample = benchmarks.of(cfg).load(cfg)[0]
    assert "1 frames per second" in sample.task.system_prompt and sample.task.fps == 1.0


def _copy(layout: Path, tmp_path: Path) -> Path:
    out = tmp_path / "copy"
    shutil.copytree(layout, out)
    return out


def test_checklists_must_line_up_with_the_prompts(layout: Path, tmp_path: Path) -> None:
    out = _copy(layout, tmp_path)
    checklists = json.loads((out / CHECKLIST_FILE).read_text())
    checklists["clip_002"].pop()
    (out / CHECKLIST_FILE).write_text(json.dumps(checklists))
    with pytest.raises(DatasetError, match=r"video 'clip_002' has 3 checklists for 4 prompts; they are matched by position"):
        _load(str(out))
    checklists = json.loads((layout / CHECKLIST_FILE).read_text())
    checklists["clip_001"][0]["checklist"]["ruled_based_check"][0]["constraint_id"] = "bullet_list"
    (out / CHECKLIST_FILE).write_text(json.dumps(checklists))
    with pytest.raises(DatasetError, match=r"clip_001.*rule rule-001: unknown constraint_id 'bullet_list'"):
        _load(str(out))


def _hub_layout(layout: Path, out: Path, *, shuffle: bool = False) -> Path:
    """The Hub's shape: the annotations, the videos, and the checklists as a parquet table (no checklist.json)."""
    shutil.copytree(layout, out)
    checklists = json.loads((out / CHECKLIST_FILE).read_text())
    prompts = json.loads((out / PROMPT_FILE).read_text())
    (out / CHECKLIST_FILE).unlink()
    rows = [
        {"video": f"video/preprocessed/clip/{v.split('_')[1]}.mp4", "instruction": p["generated_prompt"],
         "checklist": json.dumps(c["checklist"])}
        for v in prompts for p, c in zip(prompts[v], checklists[v])
    ]
    if shuffle:
        rows[0], rows[1] = rows[1], rows[0]
    (out / "data").mkdir()
    pq.write_table(pa.Table.from_pylist(rows), out / "data/test-00000-of-00001.parquet")
    return out


def test_the_hub_table_layout_is_zipped_with_the_prompts_and_checked(layout: Path, tmp_path: Path) -> None:
    local = _load(str(layout))
    table = _load(str(_hub_layout(layout, tmp_path / "hub")))
    assert [s.sample_key for s in table] == [s.sample_key for s in local]
    assert table.instructions == local.instructions
    with pytest.raises(DatasetError, match=r"row 0: its instruction .* out of prompt.json order"):
        _load(str(_hub_layout(layout, tmp_path / "shuffled", shuffle=True)))


def test_loading_from_a_local_hub_server_downloads_only_the_selected_videos(
    layout: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _hub_layout(layout, tmp_path / "repo")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    with FakeHubServer({REPO: {"main": folder}}) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        dataset = _load("hf", hf_cache_dir=str(tmp_path / "cache"), limit=2)
        assert dataset.source == f"hf:{REPO}@{hub.commit(REPO)}"
        assert [s.sample_key for s in dataset] == ["clip_001/01", "clip_001/02"]
        assert Path(dataset[0].videos[0].path).is_file()
        fetched = {r.path.rsplit("/", 1)[-1] for r in hub.requests if r.path.endswith(".mp4")}
        assert fetched == {"001.mp4"}  # the second video is not in the selection
        annotations_only = _load("hf", hf_cache_dir=str(tmp_path / "cache2"))
        assert len(annotations_only) == 8


def test_responses_in_the_benchmark_layout(layout: Path) -> None:
    dataset = _load(str(layout), limit=5)
    file = {
        "clip_001": [{"field": "x", "prompt_id": f"0{k}", "response": f"r{k}"} for k in (4, 3, 2, 1)],
        "clip_002": [{"response": "by position"}],
        "clip_999": [{"prompt_id": "01", "response": "not in the selection"}],
    }
    got = load_responses(file, dataset)
    assert load_responses({**file, "clip_002": [{"response": None}]}, dataset) == {  # null: unanswered
        k: v for k, v in got.items() if k != "clip_002/01"
    }
    assert got == {"clip_001/01": "r1", "clip_001/02": "r2", "clip_001/03": "r3", "clip_001/04": "r4", "clip_002/01": "by position"}
    with pytest.raises(PredictionFormatError, match=r"(?s)2 problem\(s\).*response must be a string.*a second response"):
        load_responses({"clip_001": [{"prompt_id": "01", "response": 7}, {"prompt_id": "02", "response": "a"},
                                     {"prompt_id": "02", "response": "b"}]}, dataset)
    with pytest.raises(PredictionFormatError, match="top level is a list"):
        load_responses([], dataset)


def test_malformed_files_name_the_place_instead_of_a_traceback(layout: Path, tmp_path: Path) -> None:
    out = _copy(layout, tmp_path / "prompts")
    prompts = json.loads((out / PROMPT_FILE).read_text())
    first = next(iter(prompts))
    prompts[first][0]["constraints_used"] = 5
    (out / PROMPT_FILE).write_text(json.dumps(prompts))
    with pytest.raises(DatasetError, match=rf"video '{first}' prompt 0: constraints_used must be a list, got int"):
        _load(str(out))

    table = _hub_layout(layout, tmp_path / "hub")
    rows = pq.read_table(next((table / "data").glob("*.parquet"))).to_pylist()
    for parquet in (table / "data").glob("*.parquet"):
        parquet.unlink()
    (table / "data" / "test.jsonl").write_text("5\n" + "".join(json.dumps(r) + "\n" for r in rows[1:]))
    with pytest.raises(DatasetError, match=r"row 0: expected an object with a 'checklist' column"):
        _load(str(table))
