"""What ``proposer.calls: one`` changes in the proposals, on the synthetic benchmark.

Runs ``viddiff run`` over a generated synthetic benchmark twice per mode, with the paper's separate
proposer calls and with the one structured call, against the local scripted model (fresh cache each,
every call made; the server reports no usage, so tokens are counted from the requests sent), and
compares the two runs sample by sample: proposer calls and tokens, stages and retrieval strings, links,
keyframes and verdicts.

What this can and cannot show: the scripted model answers both forms from the same script (same stages,
same differences, same links), and its refinement answer drops each stage's first string, so the
differences measured here are the protocol's own (calls, tokens, the refinement step that one call
leaves out, and what that does to the localisation), not the quality of a real model's one-call answer,
which needs a real model to measure.

Usage: python bench/proposer_calls.py [--pairs 12] [--seed 3]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import tempfile
from pathlib import Path
from statistics import mean

from viddiff.cli import main as viddiff_main
from viddiff.data.synthetic import write_synthetic_benchmark
from viddiff.testing import offline_overrides
from viddiff.testing.fake_openai import FakeOpenAIServer
from viddiff.testing.responders import ScriptedModel

MODES = ("closed", "open")
CALLS = ("separate", "one")


def run(dataset: Path, out: Path, mode: str, calls: str, base_url: str) -> dict[str, dict]:
    """One ``viddiff run``; its samples by key, plus the metrics under ``"_metrics"``."""
    sets = offline_overrides(base_url, str(out.with_suffix(".sqlite"))) + [f"proposer.calls={calls}"]
    args = ["-q", "run", "--dataset", str(dataset), "--mode", mode, "--output", str(out)]
    with contextlib.redirect_stdout(io.StringIO()):
        code = viddiff_main(args + [x for s in sets for x in ("--set", s)])
    if code != 0:
        raise SystemExit(f"viddiff run {mode} proposer.calls={calls} failed with exit code {code}")
    samples = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    return {s["sample_key"]: s for s in samples} | {"_metrics": json.loads((out / "metrics.json").read_text())}


def per_sample(samples: dict[str, dict], stage: str, field: str) -> float:
    return mean(s["usage"].get(stage, {}).get(field, 0) for k, s in samples.items() if k != "_metrics")


def compare(separate: dict[str, dict], one: dict[str, dict]) -> dict[str, float]:
    """Shares over all differences of all samples: same links, same keyframes, same verdict."""
    same_links = same_keyframes = same_verdict = total = 0
    strings = {"separate": [], "one": []}
    stages = {"separate": [], "one": []}
    for key, a in separate.items():
        if key == "_metrics":
            continue
        b = one[key]
        for name, sample in (("separate", a), ("one", b)):
            stages[name].append(len(sample["proposal"]["stages"]))
            strings[name] += [len(s["retrieval_strings"]) for s in sample["proposal"]["stages"]]
        kf_a = {k["key"]: k for k in a["keyframes"]}
        kf_b = {k["key"]: k for k in b["keyframes"]}
        verdicts_b = {p["key"]: p["prediction"] for p in b["predictions"]}
        for p in a["predictions"]:
            total += 1
            same_links += a["proposal"]["links"][p["key"]] == b["proposal"]["links"].get(p["key"])
            same_keyframes += kf_a[p["key"]] == kf_b.get(p["key"])
            same_verdict += p["prediction"] == verdicts_b.get(p["key"])
    return {
        "stages separate": mean(stages["separate"]),
        "stages one": mean(stages["one"]),
        "strings separate": mean(strings["separate"]),
        "strings one": mean(strings["one"]),
        "same links": same_links / total,
        "same keyframes": same_keyframes / total,
        "same verdict": same_verdict / total,
        "differences": total,
    }


def score(metrics: dict, mode: str) -> str:
    overall = metrics["metrics"]["overall"]
    return f"accuracy {overall['accuracy']:.3f}" if mode == "closed" else f"recall {overall['recall']:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=12)
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "dummy")
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(ScriptedModel(), report_usage=False) as server:
        root = Path(tmp)
        write_synthetic_benchmark(root / "data", pairs=args.pairs, seed=args.seed)
        print(f"{args.pairs} synthetic pairs (seed {args.seed}), scripted model, random-weight tiny CLIP")
        for mode in MODES:
            runs = {calls: run(root / "data", root / f"{mode}-{calls}", mode, calls, server.base_url) for calls in CALLS}
            shares = compare(runs["separate"], runs["one"])
            print(f"\n{mode} mode ({shares['differences']} differences)")
            for calls in CALLS:
                samples = runs[calls]
                print(
                    f"  proposer.calls={calls:<9} proposer calls/sample {per_sample(samples, 'proposer', 'calls'):.2f}, "
                    f"prompt tokens/sample {per_sample(samples, 'proposer', 'prompt_tokens'):.0f}, "
                    f"completion tokens/sample {per_sample(samples, 'proposer', 'completion_tokens'):.0f}, "
                    f"stages {shares[f'stages {calls}']:.2f}, strings/stage {shares[f'strings {calls}']:.2f}, "
                    f"{score(samples['_metrics'], mode)}"
                )
            print(
                f"  one vs separate: same links {shares['same links']:.1%}, same keyframes "
                f"{shares['same keyframes']:.1%}, same verdict {shares['same verdict']:.1%}"
            )


if __name__ == "__main__":
    main()
