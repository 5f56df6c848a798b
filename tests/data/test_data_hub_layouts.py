"""Every published VidDiffBench revision loads: each repo layout served over the Hub's HTTP API, and as a local copy.

The layouts (``viddiff.testing.hub_layouts``) hold our own rows in the
published file layouts and column sets; ``viddiff.testing.fake_hf`` serves
them to the real ``huggingface_hub`` client over real sockets.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from viddiff.cli import main
from viddiff.config import DataConfig
from viddiff.data.hub import default_video_root
from viddiff.data.dataset import Dataset
from viddiff.data.viddiffbench import find_data_files, load_dataset
from viddiff.errors import DatasetError
from viddiff.testing.fake_hf import FakeHubServer
from viddiff.testing.hub_layouts import FIRST_REVISION, FIXTURE, LAYOUTS

PARQUET = "data/test-00000-of-00001.parquet"


def hub_config(repo: str, env: dict[str, str], **fields: object) -> DataConfig:
    return DataConfig(dataset="hf", hf_repo=repo, hf_cache_dir=env["HF_HUB_CACHE"], **fields)


def assert_fixture_rows(dataset: Dataset, repo: str) -> None:
    """The loaded samples are exactly the fixture's, with every field taken from where this revision keeps it."""
    first = repo == FIRST_REVISION
    assert [s.sample_key for s in dataset] == [f.key for f in FIXTURE]
    for sample, expected in zip(dataset, FIXTURE):
        assert (sample.split, sample.domain) == (expected.split, expected.domain)
        assert sample.n_differences_open == (expected.n_diff_file if first else expected.n_diff_column)
        assert sample.labels == expected.labels
        assert sample.sample_hash == expected.sample_hash
        assert sample.action == expected.action and sample.source_dataset
        frames = sample.retrieval_frames
        assert (frames.keyframes if frames else {}) == expected.keyframes  # one-sided keys left out
        assert [Path(v.path).relative_to(dataset.root).as_posix() for v in sample.videos] == [
            expected.video_path("a"),
            expected.video_path("b"),
        ]
        assert all(v.fps_original == 8.0 and v.frames_trim == (1, 11) for v in sample.videos)


@pytest.mark.parametrize("repo", LAYOUTS)
def test_each_layout_loads_from_the_hub(repo: str, fake_hub: FakeHubServer, hub_env: dict[str, str]) -> None:
    dataset = load_dataset(hub_config(repo, hub_env))

    assert_fixture_rows(dataset, repo)
    commit = fake_hub.commit(repo)
    assert dataset.source == f"hf:{repo}@{commit}" and dataset.revision == commit
    assert dataset.root == default_video_root(repo) == Path(hub_env["XDG_DATA_HOME"]) / "viddiff" / "videos" / repo.replace("/", "--")
    # rows and side files only: the video archives are never part of a load
    assert fake_hub.file_requests("data/videos_fitness.zip") == []
    assert len(fake_hub.file_requests(PARQUET)) == 1


@pytest.mark.parametrize("repo", LAYOUTS)
def test_eval_scores_each_layout_from_the_hub(
    repo: str, fake_hub: FakeHubServer, hub_env: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``viddiff eval --dataset hf`` (the command that stopped at "several dataset files" on the first revision)."""
    predictions = tmp_path / "predictions.json"
    predictions.write_text(json.dumps([{k: v for k, v in s.labels.items() if v in ("a", "b")} for s in FIXTURE]))
    args = ["-q", "eval", "--predictions", str(predictions), "--mode", "closed", "--dataset", "hf",
            "--set", f"data.hf_repo={repo}", "--set", f"data.hf_cache_dir={hub_env['HF_HUB_CACHE']}",
            "--output", str(tmp_path / "eval")]
    assert main(args) == 0, capsys.readouterr().err
    metrics = json.loads((tmp_path / "eval" / "metrics.json").read_text())
    assert metrics["counts"]["counted"] == sum(v in ("a", "b") for s in FIXTURE for v in s.labels.values())
    assert metrics["metrics"]["overall"]["accuracy"] == 1.0
    assert metrics["dataset"]["source"] == f"hf:{repo}@{fake_hub.commit(repo)}"


@pytest.mark.parametrize("repo", LAYOUTS)
def test_each_layout_loads_as_a_local_copy(repo: str, layout_dirs: dict[str, Path]) -> None:
    folder = layout_dirs[repo]
    assert find_data_files(folder) == [folder / PARQUET]  # side files and scripts are not rows
    as_dir = load_dataset(DataConfig(dataset=str(folder)))
    assert_fixture_rows(as_dir, repo)
    assert as_dir.root == folder and as_dir.data_dir == folder
    # the parquet file on its own still finds the side files at the repo root
    as_file = load_dataset(DataConfig(dataset=str(folder / PARQUET)))
    assert [s.model_dump(exclude={"videos"}) for s in as_file] == [s.model_dump(exclude={"videos"}) for s in as_dir]


def test_first_revision_split_filter_uses_the_lookup(fake_hub: FakeHubServer, hub_env: dict[str, str]) -> None:
    easy = load_dataset(hub_config(FIRST_REVISION, hub_env), ["easy"])
    assert [s.sample_key for s in easy] == [f.key for f in FIXTURE if f.split == "easy"]
    assert {s.domain for s in easy} == {"fitness"}


@pytest.fixture
def first_copy(layout_dirs: dict[str, Path], tmp_path: Path) -> Path:
    return shutil.copytree(layout_dirs[FIRST_REVISION], tmp_path / "copy")


def test_first_revision_without_the_split_lookup_says_which_file(first_copy: Path) -> None:
    (first_copy / "lookup_action_to_split.json").unlink()
    with pytest.raises(DatasetError) as err:
        load_dataset(DataConfig(dataset=str(first_copy)))
    msg = str(err.value)
    assert "row 0 (sample_key 'f0-0001')" in msg and "'split'" in msg and "'fitness' is a domain" in msg
    assert "lookup_action_to_split.json" in msg and str(first_copy) in msg


def test_first_revision_without_n_differences_scores_closed_and_refuses_open_naming_column_and_file(
    first_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 22: N_diff is open mode's only; a copy without n_differences.json loads and scores closed mode,
    and open mode is refused up front (before any model call), naming the column and the file."""
    (first_copy / "n_differences.json").unlink()
    dataset = load_dataset(DataConfig(dataset=str(first_copy)))
    assert [s.sample_key for s in dataset] == [f.key for f in FIXTURE]
    predictions = tmp_path / "predictions.json"
    predictions.write_text(json.dumps([{k: v for k, v in s.labels.items() if v in ("a", "b")} for s in FIXTURE]))
    common = ["-q", "eval", "--predictions", str(predictions), "--dataset", str(first_copy), "--output", str(tmp_path / "e")]
    assert main([*common, "--mode", "closed"]) == 0, capsys.readouterr().err
    assert json.loads((tmp_path / "e" / "metrics.json").read_text())["metrics"]["overall"]["accuracy"] == 1.0
    capsys.readouterr()
    for args in (
        [*common, "--mode", "open"],
        ["-q", "run", "--dataset", str(first_copy), "--mode", "open", "--output", str(tmp_path / "run")],
    ):
        assert main(args) == 2
        msg = capsys.readouterr().err.strip()
        assert msg.startswith("viddiff: error: open mode needs N_diff, and ") and "\n" not in msg
        assert "row 0 (sample_key 'f0-0001')" in msg and "'n_differences_open_prediction': missing" in msg
        assert "n_differences.json" in msg and f"{len(FIXTURE)} rows" in msg and "closed mode does not use it" in msg
    assert not (tmp_path / "run").exists()


def test_unknown_repo_and_revision_are_one_line_errors(fake_hub: FakeHubServer, hub_env: dict[str, str]) -> None:
    with pytest.raises(DatasetError, match=r"could not get dataset 'nobody/Nothing'.*RepositoryNotFoundError"):
        load_dataset(hub_config("nobody/Nothing", hub_env))
    with pytest.raises(DatasetError, match=r"\(revision v9\).*RevisionNotFoundError"):
        load_dataset(hub_config(FIRST_REVISION, hub_env, hf_revision="v9"))


def test_a_revision_pinned_by_commit_loads(fake_hub: FakeHubServer, hub_env: dict[str, str]) -> None:
    commit = fake_hub.commit(FIRST_REVISION)
    dataset = load_dataset(hub_config(FIRST_REVISION, hub_env, hf_revision=commit))
    assert dataset.revision == commit and len(dataset) == len(FIXTURE)
