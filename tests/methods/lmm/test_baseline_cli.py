"""``viddiff baseline`` end to end on the synthetic benchmark against the fake OpenAI-compatible server."""

from __future__ import annotations

import io
import json
import re
import threading
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest
import yaml

from viddiff.methods.lmm.budget import budget_stride
from viddiff.schema import Sample
from viddiff.testing.fake_openai import ChatRequest, FakeOpenAIServer
from viddiff.testing.responders import ScriptedModel
from viddiff.video import VideoFrames

LABEL = re.compile(r"Video ([AB]) \((\d+) frames at ([\d.]+) fps\):")
JPEG_TOLERANCE = 2.5
"""Mean absolute grey-level error allowed between a sent JPEG and the frame it should be (measured ≤ 1.1)."""


def _samples_jsonl(out: Path) -> dict[str, dict]:
    rows = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    return {row["sample_key"]: row for row in rows}


def _labels(req: ChatRequest) -> dict[str, tuple[int, float]]:
    """``{"A": (n_frames, fps), "B": ...}`` as the request text states them."""
    return {m.group(1): (int(m.group(2)), float(m.group(3))) for m in LABEL.finditer(req.text)}


def _grey(images: list[np.ndarray]) -> np.ndarray:
    return np.stack([np.asarray(img, dtype=np.float64).mean(axis=-1) for img in images])


def _frame_errors(req: ChatRequest, expected: np.ndarray) -> np.ndarray:
    """Per position: mean |grey difference| between the first ``len(expected)`` sent images and ``expected``."""
    sent = _grey([np.asarray(p.image.convert("RGB")) for p in req.images[: len(expected)]])
    return np.abs(sent - _grey(list(expected))).mean(axis=(1, 2))


def _baseline_requests(server: FakeOpenAIServer) -> list[ChatRequest]:
    return [r for r in server.requests if (r.json_schema or {}).get("title") in ("ClosedAnswer", "OpenAnswer")]


def _by_counts(
    domain_frames: dict[str, tuple[VideoFrames, VideoFrames]], stride_for=lambda n_a, n_b: 1
) -> dict[tuple[int, int], tuple[str, np.ndarray, np.ndarray, int]]:
    """Requests are matched to samples by the frame counts their text states; the counts must be unique."""
    table = {}
    for key, (a, b) in domain_frames.items():
        stride = stride_for(len(a.frames), len(b.frames))
        fa, fb = a.frames[::stride], b.frames[::stride]
        table[(len(fa), len(fb))] = (key, fa, fb, stride)
    assert len(table) == len(domain_frames), "synthetic samples must differ in frame counts for this test"
    return table


def _check_requests(requests: list[ChatRequest], table: dict, domain_frames: dict) -> set[str]:
    """Every request: image count = A + B at the expected fps, text labels agree, A's frames first then B's."""
    seen = set()
    for req in requests:
        labels = _labels(req)
        (n_a, fps_a), (n_b, fps_b) = labels["A"], labels["B"]
        key, fa, fb, stride = table[(n_a, n_b)]
        a, b = domain_frames[key]
        assert len(req.images) == n_a + n_b
        assert fps_a == pytest.approx(a.fps / stride, rel=5e-3) and fps_b == pytest.approx(b.fps / stride, rel=5e-3)
        assert f"The first {n_a} images are the frames of video A and the following {n_b} images" in req.text
        assert req.text.index("Video A (") < req.text.index("Video B (")
        errors = _frame_errors(req, np.concatenate([fa, fb]))
        assert errors.max() < JPEG_TOLERANCE, f"{key}: sent images are not A's frames then B's ({errors.round(2)})"
        # B's frames in A's place must be detectable, or the check above proves nothing.
        assert _frame_errors(req, fb[: min(n_a, n_b)]).max() > JPEG_TOLERANCE
        seen.add(key)
    return seen


def test_closed_end_to_end_images_order_and_cache(run_baseline, domain_frames, baseline_samples: list[Sample]) -> None:
    with FakeOpenAIServer(ScriptedModel()) as server:
        rc, out = run_baseline(server, "closed")
        assert rc == 0, server.responder_errors
        requests = _baseline_requests(server)
        assert len(requests) == len(server.requests) == len(baseline_samples)
        assert _check_requests(requests, _by_counts(domain_frames), domain_frames) == set(domain_frames)

        predictions = json.loads((out / "predictions.json").read_text())
        metrics = json.loads((out / "metrics.json").read_text())
        rows = _samples_jsonl(out)
        for sample, pred in zip(baseline_samples, predictions):
            # Closed input is the a/b-labelled differences only, answered with a or b each.
            assert list(pred) == [d.key for d in sample.closed_differences()]
            assert set(pred.values()) <= {"a", "b"}
            row = rows[sample.sample_key]
            a, b = domain_frames[sample.sample_key]
            assert row["method"] == "lmm:fake-vlm"
            assert row["usage"]["baseline"]["calls"] == 1
            assert row["usage"]["baseline"]["images"] == len(a.frames) + len(b.frames)
            assert not any("frame budget" in note for note in row["notes"])
        assert metrics["counts"]["counted"] == sum(len(s.closed_differences()) for s in baseline_samples)
        assert metrics["metrics"]["overall"]["n"] == metrics["counts"]["counted"]
        saved = yaml.safe_load((out / "config.yaml").read_text())["baseline"]
        assert (saved["model"], saved["max_images"]) == ("fake-vlm", 150)

        before = len(server.requests)
        rc, again = run_baseline(server, "closed", output="again")
        assert rc == 0
        assert len(server.requests) == before, "a repeated run must be served from the cache"
        assert json.loads((again / "predictions.json").read_text()) == predictions

        # A killed run resumes: kept lines stay as they are, the missing samples are redone once each.
        lines = (again / "samples.jsonl").read_text().splitlines()
        (again / "samples.jsonl").write_text(lines[0] + "\n")
        rc, _ = run_baseline(server, "closed", "--resume", output="again")
        assert rc == 0
        resumed = (again / "samples.jsonl").read_text().splitlines()
        assert resumed[0] == lines[0] and sorted(resumed) == sorted(lines)
        assert json.loads((again / "predictions.json").read_text()) == predictions


def test_small_budget_downsamples_both_videos_and_records_fps(run_baseline, domain_frames) -> None:
    budget = 10
    with FakeOpenAIServer(ScriptedModel()) as server:
        rc, out = run_baseline(server, "closed", "--set", f"baseline.max_images={budget}")
        assert rc == 0, server.responder_errors
        requests = _baseline_requests(server)
        assert requests and all(len(r.images) <= budget for r in requests)
        table = _by_counts(domain_frames, lambda n_a, n_b: budget_stride(n_a, n_b, budget))
        assert _check_requests(requests, table, domain_frames) == set(domain_frames)

    rows = _samples_jsonl(out)
    for key, (a, b) in domain_frames.items():
        stride = budget_stride(len(a.frames), len(b.frames), budget)
        assert stride > 1  # every synthetic pair exceeds 10 frames at the domain fps
        notes = " | ".join(rows[key]["notes"])
        fps = re.search(r"effective fps A ([\d.]+), B ([\d.]+)", notes)
        assert float(fps.group(1)) == pytest.approx(a.fps / stride, rel=1e-3)
        assert float(fps.group(2)) == pytest.approx(b.fps / stride, rel=1e-3)
        assert f"thinned by stride {stride}" in notes and "max_images=10" in notes


def test_open_end_to_end_is_scored(run_baseline, domain_frames, baseline_samples: list[Sample]) -> None:
    with FakeOpenAIServer(ScriptedModel()) as server:
        rc, out = run_baseline(server, "open")
        assert rc == 0, server.responder_errors
        requests = _baseline_requests(server)
        assert len(requests) == len(baseline_samples)
        _check_requests(requests, _by_counts(domain_frames), domain_frames)
        for req in requests:
            n_diff = int(re.search(r"at most (\d+) differences", req.text).group(1))
            assert n_diff in {s.n_differences_open for s in baseline_samples}
        metrics = json.loads((out / "metrics.json").read_text())
        predictions = json.loads((out / "predictions.json").read_text())
        for sample, pred in zip(baseline_samples, predictions):
            assert 0 < len(pred) <= sample.n_differences_open
            assert all(item["prediction"] in ("a", "b") and item["description"] for item in pred.values())
        assert metrics["mode"] == "open"
        assert metrics["counts"]["counted"] == sum(len(s.closed_differences()) for s in baseline_samples)
        assert metrics["counts"]["predictions"] == sum(len(p) for p in predictions)
        judged = len(server.requests) - len(requests)
        assert judged >= len(baseline_samples)  # one judge call per sample at least

        before = len(server.requests)
        rc, _ = run_baseline(server, "open", output="again")
        assert rc == 0 and len(server.requests) == before


class _DropKeyOnFirstAsk:
    """Closed answers miss their first key unless the request is already a re-ask."""

    def __init__(self) -> None:
        self.model = ScriptedModel()
        self.dropped: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, req: ChatRequest) -> str:
        answer = json.loads(self.model(req))
        is_reask = any(m.get("role") == "assistant" for m in req.messages)
        if (req.json_schema or {}).get("title") == "ClosedAnswer" and not is_reask:
            key = next(iter(answer))
            with self._lock:
                self.dropped.append(key)
            del answer[key]
        return json.dumps(answer)


def test_closed_answer_missing_a_key_is_reasked(run_baseline, baseline_samples: list[Sample]) -> None:
    responder = _DropKeyOnFirstAsk()
    with FakeOpenAIServer(responder) as server:
        rc, out = run_baseline(server, "closed")
        assert rc == 0, server.responder_errors
        reasks = [r for r in server.requests if any(m.get("role") == "assistant" for m in r.messages)]
        assert len(server.requests) == 2 * len(baseline_samples) and len(reasks) == len(baseline_samples)
        for req in reasks:
            complaint = req.messages[-1]["content"]
            assert "not valid" in complaint and re.search(r'\b\d+: Field required', complaint)
    predictions = json.loads((out / "predictions.json").read_text())
    for sample, pred in zip(baseline_samples, predictions):
        assert list(pred) == [d.key for d in sample.closed_differences()]
    assert all(row["usage"]["baseline"]["calls"] == 2 for row in _samples_jsonl(out).values())


class _TooManyDifferences:
    """Open answers with two more differences than N_diff allows."""

    def __init__(self) -> None:
        self.model = ScriptedModel()

    def __call__(self, req: ChatRequest) -> str:
        answer = json.loads(self.model(req))
        if (req.json_schema or {}).get("title") == "OpenAnswer":
            n = len(answer["differences"])
            extra = [{"description": f"extra property {i} is wider", "prediction": "b"} for i in range(2)]
            answer["differences"] += extra
            assert len(answer["differences"]) == n + 2
        return json.dumps(answer)


def test_open_over_n_diff_is_left_to_the_eval_policy(run_baseline, baseline_samples: list[Sample], capsys) -> None:
    with FakeOpenAIServer(_TooManyDifferences()) as server:
        rc, out = run_baseline(server, "open")
        assert rc == 2
        assert "more predicted differences than N_diff" in capsys.readouterr().err
        rows = _samples_jsonl(out)
        for sample in baseline_samples:
            assert len(rows[sample.sample_key]["predictions"]) == sample.n_differences_open + 2  # not cut here
        assert not (out / "metrics.json").exists()

        rc, truncated = run_baseline(server, "open", "--set", "eval.n_diff_policy=truncate", output="truncated")
        assert rc == 0
        metrics = json.loads((truncated / "metrics.json").read_text())
        assert metrics["counts"]["truncated_samples"] == len(baseline_samples)


def _decode_mp4(data: bytes) -> tuple[np.ndarray, Fraction]:
    with av.open(io.BytesIO(data)) as container:
        stream = container.streams.video[0]
        frames = np.stack([f.to_ndarray(format="rgb24") for f in container.decode(stream)])
        return frames, stream.average_rate


def test_video_input_sends_two_videos_in_order(run_baseline, domain_frames) -> None:
    with FakeOpenAIServer(ScriptedModel()) as server:
        rc, out = run_baseline(server, "closed", "--set", "baseline.video_input=true")
        assert rc == 0, server.responder_errors
        requests = _baseline_requests(server)
        assert len(requests) == len(domain_frames)
        table = _by_counts(domain_frames)
        for req in requests:
            assert req.images == [] and [v.mime for v in req.videos] == ["video/mp4", "video/mp4"]
            labels = _labels(req)
            key, fa, fb, _ = table[(labels["A"][0], labels["B"][0])]
            a, _b = domain_frames[key]
            assert "first video A" in req.text
            for part, expected in zip(req.videos, (fa, fb)):
                frames, rate = _decode_mp4(part.data)
                assert len(frames) == len(expected)
                assert float(rate) == pytest.approx(a.fps)
                error = np.abs(_grey(list(frames)) - _grey(list(expected))).mean()
                assert error < 2 * JPEG_TOLERANCE
    assert json.loads((out / "metrics.json").read_text())["mode"] == "closed"


@pytest.mark.parametrize("config", ["configs/vllm-qwen2.5-vl.yaml", "configs/ollama-qwen2.5vl.yaml"])
def test_local_server_configs_run_with_their_own_endpoint_and_budget(
    config: str, run_baseline, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The documented local-server configs work end to end; only the baseline goes to the local endpoint."""
    from viddiff.config import load_config

    root = Path(__file__).resolve().parents[3]
    cfg = load_config(root / config)
    key_env = cfg.baseline.endpoint.api_key_env
    assert key_env != "OPENAI_API_KEY" and cfg.baseline.endpoint.base_url.startswith("http://localhost")
    monkeypatch.setenv(key_env, "local")
    with FakeOpenAIServer(ScriptedModel()) as server:
        rc, out = run_baseline(
            server, "closed", "--config", str(root / config), "--limit", "1",
            "--set", f"baseline.endpoint.base_url={server.base_url}",
        )
        assert rc == 0, server.responder_errors
        (req,) = server.requests
        assert req.api_key == "local" and 0 < len(req.images) <= cfg.baseline.max_images
        assert max(req.images[0].size) <= cfg.baseline.image.max_side
    saved = yaml.safe_load((out / "config.yaml").read_text())["baseline"]
    assert saved["max_images"] == cfg.baseline.max_images
