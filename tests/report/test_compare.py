"""`viddiff compare --report / --save-visuals`: the page read back with an HTML parser, real videos, real HTTP."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from urllib.parse import unquote

import pytest

from viddiff.report.media import MIN_LONG_SIDE
from viddiff.testing.report_pages import (
    EVIL_RATIONALE,
    EVIL_STAGE,
    assert_escaped,
    assert_self_contained,
    decode_data_image,
    read_page,
)
from viddiff.video import probe_video

ACTION = "<b>barbell</b> back squat & friends"
VERDICT_CLASS = {"a": "a", "b": "b", "c": "similar", None: "invalid"}


def _compare(pair, sets, *extra) -> list[str]:
    return ["compare", str(pair[0]), str(pair[1]), "--action", ACTION, *sets, *extra]


def test_report_shows_every_difference_with_its_verdict_keyframes_and_times(webm_pair, hostile_sets, tmp_path, cli):
    page = tmp_path / "out" / "report.html"
    rc, out, err = cli(_compare(webm_pair, hostile_sets, "--n-differences", "4", "--json", "--report", str(page)))
    assert rc == 0, err
    result = json.loads(out)  # stdout stays pure JSON: the report line goes to stderr
    assert f"report written to {page}" in err
    doc = read_page(page)

    articles = doc.find_all("article", cls="difference")
    assert len(articles) == len(result["differences"]) > 0
    for article, diff in zip(articles, result["differences"]):
        assert article.attrs["data-key"] == diff["key"]
        assert article.find("h3", cls="statement").text() == diff["description"]
        assert article.attrs["data-verdict"] == VERDICT_CLASS[diff["prediction"]]
        assert article.find("span", cls="verdict").text().startswith(("More true of video", "Similar", "No valid"))
        assert EVIL_RATIONALE in article.find("blockquote", cls="rationale").text()
        for side in "ab":
            images = [f.find("img") for f in article.find_all("figure", cls=f"kf-{side}")]
            assert [float(i.attrs["data-time"]) for i in images] == pytest.approx(diff[f"times_{side}"], abs=1e-6)
            assert [int(i.attrs["data-frame"]) for i in images] == diff[f"keyframes_{side}"]
            for img in images:
                decoded = decode_data_image(img.attrs["src"])
                assert decoded.size[0] > 0 and decoded.size[1] > 0
                assert max(int(img.attrs["width"]), int(img.attrs["height"])) >= MIN_LONG_SIDE >= 360
        chips = [c.text() for c in article.find_all("span", cls="chip")]
        assert chips == diff["stages"] and all(c.startswith(EVIL_STAGE) for c in chips)

    assert_self_contained(doc, page)
    assert_escaped(doc)
    assert ACTION in doc.find("h1").text() and ACTION in doc.find("title").text()

    banner = doc.find(id="stand-in-banner").text()
    assert "scripted stand-in server" in banner and "random weights" in banner

    for label, video in zip("ab", webm_pair):
        player = doc.find("video", id=f"video-{label}")
        assert (page.parent / unquote(player.attrs["src"])).resolve() == video.resolve()
        info = probe_video(video)
        row = doc.find("tr", id=f"facts-{label}").text()
        assert f"{info.n_frames / info.fps:.2f} s" in row and video.name in row


def test_a_slower_performance_is_a_longer_bar_on_the_shared_axis(webm_pair, hostile_sets, tmp_path, cli):
    page = tmp_path / "r.html"
    assert cli(_compare(webm_pair, hostile_sets, "--n-differences", "2", "--report", str(page)))[0] == 0
    doc = read_page(page)
    svg = doc.find("svg", cls="timeline")
    widths = {}
    for label in "ab":
        track = svg.find("g", id=f"track-{label}")
        bar = track.find("rect", cls="bar-bg")
        widths[label] = float(bar.attrs["width"])
        segments = track.find_all("g", cls="segment")
        starts = [float(s.attrs["data-start"]) for s in segments]
        ends = [float(s.attrs["data-end"]) for s in segments]
        assert starts[0] == 0 and starts[1:] == pytest.approx(ends[:-1])  # stages tile the clip in order
    assert widths["b"] / widths["a"] == pytest.approx(2.0, rel=0.02)  # B is the same squat at half speed
    ticks = [t.text() for t in svg.find_all("text", cls="tick-label")]
    assert ticks[0] == "0 s" and all(t.endswith(" s") for t in ticks)


def test_embed_videos_puts_the_files_in_the_page(webm_pair, hostile_sets, tmp_path, cli):
    page = tmp_path / "embedded.html"
    argv = _compare(webm_pair, hostile_sets, "--difference", "the squat is deeper", "--report", str(page), "--report-embed-videos")
    assert cli(argv)[0] == 0
    doc = read_page(page)
    for label, video in zip("ab", webm_pair):
        src = doc.find("video", id=f"video-{label}").attrs["src"]
        head, _, payload = src.partition(",")
        assert head == "data:video/webm;base64"
        assert base64.b64decode(payload) == video.read_bytes()
    assert_self_contained(doc, page)


@pytest.mark.parametrize("case", ["directory", "input video", "embed without report"])
def test_bad_report_destinations_fail_before_any_model_call(case, webm_pair, hostile_sets, hostile_server, tmp_path, cli):
    before = webm_pair[0].read_bytes()
    flags = {
        "directory": ["--report", str(tmp_path)],
        "input video": ["--report", str(webm_pair[0])],
        "embed without report": ["--report-embed-videos"],
    }[case]
    requests = len(hostile_server.requests)
    rc, _, err = cli(_compare(webm_pair, hostile_sets, "--difference", "the squat is deeper", *flags))
    assert rc == 2
    expected = {"directory": "is a directory", "input video": "is one of the input videos", "embed without report": "needs --report"}
    assert expected[case] in err and len(err.strip().splitlines()) == 1
    assert len(hostile_server.requests) == requests
    assert webm_pair[0].read_bytes() == before


def test_save_visuals_on_compare_writes_figures(webm_pair, hostile_sets, tmp_path, cli):
    target = tmp_path / "figs"
    rc, _, err = cli(_compare(webm_pair, hostile_sets, "--n-differences", "2", "--save-visuals", str(target)))
    assert rc == 0, err
    names = sorted(p.name for p in (target / "compare").iterdir())
    assert "segmentation.png" in names and any(n.startswith("keyframes_") for n in names)


def test_set_run_save_visuals_is_honoured_by_compare(webm_pair, hostile_sets, tmp_path, monkeypatch, cli):
    """Before, compare never read run.save_visuals: --set run.save_visuals=true silently did nothing."""
    monkeypatch.chdir(tmp_path)
    argv = _compare(webm_pair, hostile_sets, "--n-differences", "2", "--set", "run.save_visuals=true")
    assert cli(argv)[0] == 0
    assert (tmp_path / "visuals" / "compare" / "segmentation.png").is_file()
    argv += ["--set", f"run.output_dir={tmp_path / 'elsewhere'}"]
    assert cli(argv)[0] == 0
    assert (tmp_path / "elsewhere" / "visuals" / "compare" / "segmentation.png").is_file()


def test_describe_report_shows_the_description_and_whole_video_differences(webm_pair, hostile_sets, tmp_path, cli):
    page = tmp_path / "describe.html"
    argv = ["compare", str(webm_pair[0]), str(webm_pair[1]), "--describe", "--n-differences", "7", *hostile_sets]
    rc, out, err = cli([*argv, "--report", str(page)])
    assert rc == 0, err
    doc = read_page(page)
    assert doc.find("pre", cls="description").text().strip() == out.strip()
    articles = doc.find_all("article", cls="difference")
    assert len(articles) == 7
    global_ones = [a for a in articles if "visible throughout" in a.find("p", cls="meta").text()]
    assert global_ones and all(not a.find_all("span", cls="chip") for a in global_ones)
    assert_escaped(doc)


def test_compare_help_says_the_report_links_the_videos() -> None:
    """It called the report self-contained, though the videos are linked unless --report-embed-videos."""
    text = subprocess.run([sys.executable, "-m", "viddiff.cli", "compare", "--help"], capture_output=True, text=True, check=True).stdout
    flat = " ".join(text.split())
    assert "self-contained" not in flat
    assert "the videos linked from where they are" in flat and "--report-embed-videos" in flat
