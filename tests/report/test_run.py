"""`viddiff run --report` and `run.save_visuals`: pages checked against samples.jsonl and the scores."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path
from urllib.parse import unquote

import pytest

from viddiff.config import DataConfig
from viddiff.data.viddiffbench import load_dataset
from viddiff.store import ResultsStore
from viddiff.testing import offline_overrides
from viddiff.testing.fake_openai import ChatRequest, FakeOpenAIServer
from viddiff.testing.responders import ScriptedModel, _after
from viddiff.testing.report_pages import assert_escaped, assert_self_contained, decode_data_image, read_page
from viddiff.video import probe_video


def _run(cli, synth_dir: Path, out: Path, sets: list[str], *extra: str, mode: str = "closed") -> int:
    rc, _, err = cli(["-q", "run", "--dataset", str(synth_dir), "--mode", mode, "--output", str(out), *sets, *extra])
    assert rc == 0, err
    return rc


def _pages(out: Path) -> dict[str, Path]:
    """Sample key -> its page, found through the index's links."""
    index = read_page(out / "report" / "index.html")
    links = {}
    for row in index.find("section", id="samples").find_all("tr")[1:]:
        for anchor in row.find_all("a"):  # failed samples have no page, hence no link
            links[anchor.text()] = out / "report" / unquote(anchor.attrs["href"])
    return links


def test_run_report_pages_agree_with_samples_jsonl_and_scores(cli, synth_dir, hostile_sets, tmp_path):
    out = tmp_path / "run"
    _run(cli, synth_dir, out, hostile_sets, "--report")
    dataset = load_dataset(DataConfig(dataset=str(synth_dir)))
    results = ResultsStore(out).load()
    with (out / "differences.csv").open() as fh:
        scored = {(r["sample_key"], r["key"]): r for r in csv.DictReader(fh)}
    metrics = json.loads((out / "metrics.json").read_text())["metrics"]

    index = read_page(out / "report" / "index.html")
    assert f"{100 * metrics['overall']['accuracy']:.1f}%" in index.find("p", cls="action").text()
    assert_self_contained(index, out / "report" / "index.html")
    pages = _pages(out)
    assert set(pages) == {s.sample_key for s in dataset}

    for sample in dataset:
        page = pages[sample.sample_key]
        doc = read_page(page)
        result = results[sample.sample_key]
        assert_self_contained(doc, page)
        assert_escaped(doc)
        articles = {a.attrs["data-key"]: a for a in doc.find_all("article", cls="difference")}
        assert list(articles) == [p.key for p in result.predictions]  # every difference, in order
        for kf in result.keyframes:
            article = articles[kf.key]
            for side, frames in (("a", kf.a), ("b", kf.b)):
                images = [f.find("img") for f in article.find_all("figure", cls=f"kf-{side}")]
                assert [float(i.attrs["data-time"]) for i in images] == pytest.approx(frames.times_s)
                assert [int(i.attrs["data-frame"]) for i in images] == frames.frame_indices
                assert all(decode_data_image(i.attrs["src"]).size for i in images)
        for key, article in articles.items():
            row = scored[(sample.sample_key, key)]
            truth = article.find("p", cls="truth")
            expected = "none" if row["counted"] != "True" else row["correct"].lower()
            assert truth.attrs["data-correct"] == expected
        _check_timeline(doc, sample, result)


def _check_timeline(doc, sample, result) -> None:
    """Stage bars in seconds = sampled frame indices of samples.jsonl on each clip's own clock."""
    svg = doc.find("svg", cls="timeline")
    for label, ref, seg in zip("ab", sample.videos, result.segmentations):
        info = probe_video(ref.path, fps_original=ref.fps_original)
        start = (ref.frames_trim or (0, None))[0] or 0
        end = (ref.frames_trim or (None, None))[1] or info.n_frames
        track = svg.find("g", id=f"track-{label}")
        segments = track.find_all("g", cls="segment")
        assert len(segments) == len(seg.spans)
        for element, (first, _) in zip(segments, seg.spans):
            expected = (seg.frame_indices[first] - start) / info.fps
            assert float(element.attrs["data-start"]) == pytest.approx(expected, abs=1e-3)
        assert float(segments[-1].attrs["data-end"]) == pytest.approx((end - start) / info.fps, abs=1e-3)


def test_run_report_players_follow_trims_and_image_directories(cli, synth_dir, hostile_sets, tmp_path):
    out = tmp_path / "run"
    _run(cli, synth_dir, out, hostile_sets, "--report")
    dataset = {s.sample_key: s for s in load_dataset(DataConfig(dataset=str(synth_dir)))}
    pages = _pages(out)
    for key, sample in dataset.items():
        doc = read_page(pages[key])
        for label, ref in zip("ab", sample.videos):
            if Path(ref.path).is_dir():  # frames as images: nothing to play, seek buttons leave that side alone
                assert not doc.find_all("video", id=f"video-{label}")
                assert "directory of frame images" in doc.find("div", id=f"video-{label}-missing").text()
                assert all(b.attrs[f"data-seek-{label}"] == "" for b in doc.find_all("button", cls="seek"))
                continue
            player = doc.find("video", id=f"video-{label}")
            assert (pages[key].parent / unquote(player.attrs["src"])).resolve() == Path(ref.path).resolve()
            offset = ((ref.frames_trim or (0,))[0] or 0) / probe_video(ref.path).fps
            assert float(player.attrs["data-offset"]) == pytest.approx(offset)
            for article in doc.find_all("article", cls="difference"):
                for row in article.find_all("div", cls="kf-row"):
                    time = float(row.find("figure", cls=f"kf-{label}").find("img").attrs["data-time"])
                    seek = float(row.find("button", cls="seek").attrs[f"data-seek-{label}"])
                    assert seek == pytest.approx(offset + time, abs=1e-3)  # file time = trim start + clip time
    assert any(ref.frames_trim for s in dataset.values() for ref in s.videos)  # the fixture has a trimmed video
    assert any(Path(ref.path).is_dir() for s in dataset.values() for ref in s.videos)  # ... and an image directory


class AlternateJudge(ScriptedModel):
    """Matches every other ground-truth difference to a prediction, so pages show matched and missed ones."""

    def _answer_MatchAnswer(self, req: ChatRequest) -> dict:
        gt = _after(req.text, "G (ground truth):")
        pred = list(_after(req.text, "P (predicted):"))
        return {
            "matches": {
                key: pred[i // 2] if i % 2 == 0 and i // 2 < len(pred) else None for i, key in enumerate(gt)
            }
        }


def test_open_run_report_shows_matches_and_missed_ground_truth(cli, synth_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")
    out = tmp_path / "run"
    with FakeOpenAIServer(AlternateJudge()) as server:
        sets = [a for item in offline_overrides(server.base_url, str(tmp_path / "c.sqlite")) for a in ("--set", item)]
        _run(cli, synth_dir, out, sets, "--report", mode="open")
    with (out / "differences.csv").open() as fh:
        records = list(csv.DictReader(fh))
    assert any(r["pred_key"] for r in records) and any(not r["pred_key"] and r["counted"] == "True" for r in records)
    pages = _pages(out)
    for key, page in pages.items():
        doc = read_page(page)
        mine = [r for r in records if r["sample_key"] == key]
        for record in mine:
            if record["pred_key"]:
                article = doc.find("article", cls="difference", data_key=record["pred_key"])
                truths = [t.text() for t in article.find_all("p", cls="truth")]
                assert any(record["description"] in t for t in truths)
        missed = [r for r in mine if not r["pred_key"] and r["counted"] == "True"]
        shown = [row.find_all("td")[1].text() for row in doc.find("section", id="missed").find_all("tr")[1:]] if missed else []
        assert shown == [r["description"] for r in missed]


def test_resume_with_report_covers_samples_from_the_first_session(cli, synth_dir, offline_sets, tmp_path, scripted_server):
    """--report is not part of the config, so a finished run can get its report by resuming."""
    out = tmp_path / "run"
    _run(cli, synth_dir, out, offline_sets)
    assert not (out / "report").exists()
    requests = len(scripted_server.requests)
    _run(cli, synth_dir, out, offline_sets, "--resume", "--report")
    assert len(scripted_server.requests) == requests  # nothing re-run
    assert set(_pages(out)) == set(ResultsStore(out).load())


def test_set_run_save_visuals_draws_every_finished_sample(cli, synth_dir, offline_sets, tmp_path):
    out = tmp_path / "run"
    _run(cli, synth_dir, out, offline_sets, "--split", "easy", "--set", "run.save_visuals=true")
    keys = set(ResultsStore(out).load())
    drawn = {p.name for p in (out / "visuals").iterdir()}
    assert drawn == keys
    # Figures are drawn at the end from samples.jsonl: a resumed run redraws samples finished earlier.
    shutil.rmtree(out / "visuals")
    _run(cli, synth_dir, out, offline_sets, "--split", "easy", "--set", "run.save_visuals=true", "--resume")
    assert {p.name for p in (out / "visuals").iterdir()} == keys


def test_swapped_run_report_shows_the_videos_in_the_order_judged(cli, synth_dir, offline_sets, tmp_path):
    out = tmp_path / "run"
    _run(cli, synth_dir, out, offline_sets, "--split", "medium", "--report", "--swap-videos")
    sample = load_dataset(DataConfig(dataset=str(synth_dir)), splits=["medium"])[0]
    doc = read_page(_pages(out)[sample.sample_key])
    assert doc.find("tr", id="facts-a").find("span", cls="file").attrs["title"] == sample.videos[1].path


def test_vidic_run_report_lists_scores_and_descriptions(cli, tmp_path, offline_sets):
    from viddiff.benchmarks.vidic.synthetic import write_synthetic_vidic

    data = tmp_path / "vidic"
    write_synthetic_vidic(data, pairs=2, seed=2)
    out = tmp_path / "run"
    rc, _, err = cli(["-q", "run", "--benchmark", "vidic", "--dataset", str(data), "--output", str(out), "--report", *offline_sets])
    assert rc == 0, err
    index = read_page(out / "report" / "index.html")
    metrics = json.loads((out / "metrics.json").read_text())["metrics"]
    first_row = [td.text() for td in index.find("table", cls="metrics").find_all("tr")[1].find_all("td")]
    assert first_row[0] == "all" and first_row[3] == f"{100 * metrics['overall']['avg']['accuracy']:.1f}"
    results = ResultsStore(out).load()
    for key, page in _pages(out).items():
        doc = read_page(page)
        assert doc.find("h1").text() == f"sample {key}"  # ViDiC-1K has no action name (it read "0 ·")
        assert doc.find("pre", cls="description").text() == results[key].description
        assert len(doc.find_all("article", cls="difference")) == len(results[key].predictions)


def test_baseline_with_save_visuals_says_there_is_nothing_to_draw(cli, synth_dir, offline_sets, tmp_path, caplog):
    out = tmp_path / "baseline"
    argv = ["baseline", "--model", "gpt-4o", "--dataset", str(synth_dir), "--split", "easy", "--mode", "closed",
            "--output", str(out), "--set", "run.save_visuals=true", *offline_sets]
    rc, _, err = cli(argv)
    assert rc == 0, err
    assert not (out / "visuals").exists()
    assert "no stage segmentation" in caplog.text


def test_failed_samples_are_listed_without_a_page(cli, synth_dir, offline_sets, tmp_path):
    data = tmp_path / "data"
    shutil.copytree(synth_dir, data)
    (data / "videos" / "pair_0002_a.mp4").write_bytes(b"not a video")
    out = tmp_path / "run"
    rc, _, _ = cli(["-q", "run", "--dataset", str(data), "--mode", "closed", "--output", str(out), "--report", *offline_sets])
    assert rc == 1
    rows = {r.find_all("td")[0].text(): r for r in read_page(out / "report" / "index.html").find("section", id="samples").find_all("tr")[1:]}
    assert not rows["pair_0002"].find_all("a") and "failed" in rows["pair_0002"].text()
    assert set(_pages(out)) == {"pair_0000", "pair_0001"}


def test_report_never_contains_the_api_key(cli, synth_dir, offline_sets, tmp_path, monkeypatch):
    secret = "sk-viddiff-report-secret-0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    out = tmp_path / "run"
    _run(cli, synth_dir, out, offline_sets, "--split", "easy", "--report", "--set", "run.save_visuals=true")
    written = [p for p in (out / "report").rglob("*") if p.is_file()]
    assert written and not [p for p in written if secret.encode() in p.read_bytes()]


@pytest.mark.parametrize(
    ("method", "roles"),
    [("baseline", ["baseline"]), ("viddiff", ["proposer", "differencer", "CLIP"])],
)
def test_the_report_names_the_models_of_the_method_that_ran(cli, synth_dir, offline_sets, tmp_path, method, roles):
    """A baseline run sends frames to one chat model and embeds nothing: its report must not list (or flag as
    stand-ins) the VidDiff method's proposer, differencer and CLIP."""
    out = tmp_path / method
    _run(cli, synth_dir, out, offline_sets, "--method", method, "--split", "easy", "--report")
    for page in [out / "report" / "index.html", *_pages(out).values()]:
        doc = read_page(page)
        listed = [dt.text() for dt in doc.find("dl", cls="kv").find_all("dt")]
        assert listed[: listed.index("model calls")] == roles, page.name
        banner = doc.find("div", id="stand-in-banner")
        assert banner is not None and ("CLIP" in banner.text()) == ("CLIP" in roles), page.name
