"""``viddiff audit --benchmark vidpair-halluc``: single-video and pair-aware answering side by side.

The same questions are answered twice: about the video alone (the paper's protocol), and with the other video
of the pair shown beside it (beyond the paper). Does seeing what differs help the model, or does it start
answering about the wrong video? The table puts every number of both runs in one row each, with the change.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from viddiff.benchmarks.vidpair.scoring import VidPairMetrics
from viddiff.eval.tables import md_table, pct, signed_pct

Getter = Callable[[VidPairMetrics], Optional[float]]


def _b(attr: str) -> Getter:
    return lambda m: getattr(m.overall.binary, attr) if m.overall.binary else None


def _m(attr: str) -> Getter:
    return lambda m: getattr(m.overall.mcq, attr) if m.overall.mcq else None


def _c(attr: str) -> Getter:
    return lambda m: getattr(m.consistency, attr).value


SIGNED = {"binary Pct_Diff (signed)", "yes share difference"}
ROWS: list[tuple[str, str, Getter]] = [
    ("release", "binary question-pair accuracy", _b("question_pair_acc")),
    ("release", "binary video-pair accuracy", _b("video_pair_acc")),
    ("release", "binary weighted accuracy (wAcc)", _b("weighted_acc")),
    ("release", "binary FP rate (FP / valid answers)", _b("fp_rate")),
    ("release", "binary Pct_Diff (signed)", _b("pct_diff")),
    ("release", "MCQ F1 (= exact-match accuracy)", _m("f1")),
    ("release", "MCQ pair accuracy", _m("pair_acc")),
    ("ours", "binary accuracy, missing/invalid = wrong", lambda m: m.strict_accuracy["binary"].value if "binary" in m.strict_accuracy else None),
    ("ours", "open-ended score (our judge)", lambda m: m.overall.open.mean if m.overall.open else None),
    ("ours", "answer flips where the truth does", _c("answer_flip_rate")),
    ("ours", "answer steady where the truth is", _c("steady_rate")),
    ("ours", "right on both videos of the pair", _c("pair_accuracy")),
    ("ours", "yes share difference", lambda m: m.consistency.yes_share_diff),
    ("ours", "false yes rate (truth no)", _c("false_yes_rate")),
    ("ours", "false yes rate on the adversarial video", _c("adversarial_false_yes_rate")),
]


def compare_answering(single: VidPairMetrics, pair_aware: VidPairMetrics) -> tuple[dict[str, Any], str]:
    """The ``metrics.json`` payload and ``report.md`` of the comparison."""
    rows = []
    payload = []
    for source, name, get in ROWS:
        a, b = get(single), get(pair_aware)
        delta = None if a is None or b is None else b - a
        payload.append({"source": source, "metric": name, "single_video": a, "pair_aware": b, "change": delta})
        show = signed_pct if name in SIGNED else pct
        rows.append([source, name, show(a), show(b), signed_pct(delta)])
    head = ["source", "metric (x100)", "single video (paper)", "pair-aware (beyond the paper)", "change"]
    counts = (
        f"single video: {sum(single.invalid_answers.values())} invalid, {sum(single.no_response.values())} without an answer; "
        f"pair-aware: {sum(pair_aware.invalid_answers.values())} invalid, {sum(pair_aware.no_response.values())} without an answer"
    )
    text = "\n".join(
        [
            "# VidPair-Halluc: single-video vs pair-aware answering",
            "",
            "The same questions, answered about the video alone (the paper's protocol) and with the other video of "
            "its pair shown beside it, labelled (beyond the paper). `release` rows are the release's definitions, "
            "`ours` are not in the paper.",
            "",
            md_table(head, rows),
            "",
            f"- {counts}",
            f"- binary scorer: {single.binary_scorer}",
        ]
    ) + "\n"
    summary = {
        "benchmark": single.benchmark,
        "binary_scorer": single.binary_scorer,
        "rows": payload,
        "single_video": single.model_dump(mode="json", exclude={"records"}),
        "pair_aware": pair_aware.model_dump(mode="json", exclude={"records"}),
    }
    return summary, text
