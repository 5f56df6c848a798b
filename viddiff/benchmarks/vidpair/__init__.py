"""VidPair-Halluc (video hallucination on background-controlled pairs) as a benchmark plug-in (``vidpair-halluc``).

A method answers each question about one video (``qa`` mode): yes/no, multiple choice (one or more letters),
or open-ended. Scores are the release's: binary question-pair, video-pair and weighted accuracy, FP rate and
yes-percentage difference; multiple-choice "F1" (exact-match accuracy); per aspect, spatial/temporal and
overall. Everything VidPair-specific lives in this package: the layout and field detection (``layout``),
the loader (``data``), the task wording and our open-ended judge prompt (``prompts``), the release's answer
readings (``answers``), its scorers (``binary``, ``mcq``), our judge (``judge``), our pair-consistency numbers
(``consistency``), the predictions file (``responses``), the scores (``scoring``), the report (``report``),
the synthetic fixture (``synthetic``) and the single vs pair-aware comparison (``audit``). Config: ``vidpair``.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any, Optional, Sequence

from viddiff.benchmarks.base import Benchmark, TaskVerdict, Table
from viddiff.benchmarks.vidpair.data import BENCHMARK, VidPairDataset, load_vidpair
from viddiff.benchmarks.vidpair.layout import METADATA_FILE
from viddiff.benchmarks.vidpair.report import (
    QUESTIONS_FILE,
    format_vidpair_table,
    ours_rows,
    release_rows,
    title,
    write_vidpair_report,
)
from viddiff.benchmarks.vidpair.scoring import VidPairMetrics, evaluate_vidpair
from viddiff.config import Config, ModelCallConfig
from viddiff.data.dataset import Dataset
from viddiff.errors import DatasetError
from viddiff.eval.tables import pct
from viddiff.schema import Mode, Sample, SampleResult

_OUTCOMES = {
    "scored": "scored",
    "invalid": "invalid answer: left out, as the release leaves it out",
    "no_response": "no answer: left out",
    "entry_skipped": "its entry is skipped, as the release skips it",
    "judged": "graded by our open-ended judge (ours, not the paper's)",
    "judge_failed": "our judge failed: left out",
    "no_reference": "no reference answer: not scored",
    "not_judged": "open answers not judged",
}


class VidPairHalluc(Benchmark):
    name = BENCHMARK
    title = "VidPair-Halluc"
    modes = ("qa",)
    default_method = "baseline"
    has_splits = False
    records_file = QUESTIONS_FILE
    predictions_help = (
        'VidPair-Halluc: answers, as `viddiff run` writes them ([{"id", "response"}] in dataset order, response '
        "null when there is none), or {id: text}"
    )
    pair_aware_override = "vidpair.pair_aware=true"
    report_pages = "group"

    def load(self, cfg: Config, splits: Optional[Sequence[str]] = None, *, fetch_videos: bool = True) -> VidPairDataset:
        if splits:
            raise DatasetError(
                f"VidPair-Halluc has no splits (got --split {', '.join(splits)}); choose question types with "
                "--set vidpair.question_types=[binary], and fewer pairs with --limit"
            )
        return load_vidpair(cfg, fetch_videos=fetch_videos)

    def video_advice(self, sample: Sample, dataset: Dataset, cfg: Config) -> str:
        if sample.source_dataset == "synthetic":
            return f"re-generate it with `viddiff data synth --benchmark {self.name} --out {dataset.data_dir}`"
        return (
            f"the videos are in the Hugging Face dataset {cfg.vidpair.hf_repo} under VidPair-Halluc/: run with "
            "--dataset hf to download those of the selected questions, or download the repo and pass --dataset DIR"
        )

    def check_notes(self, dataset: Dataset) -> list[str]:
        if not isinstance(dataset, VidPairDataset):
            return []
        lines = [f"{len(dataset)} questions, {len(dataset.pairs)} pairs in pairs/pairs.json"]
        metadata = dataset.data_dir / METADATA_FILE if dataset.data_dir else None
        if metadata is not None and metadata.is_file():
            with metadata.open(encoding="utf-8", newline="") as handle:
                reader = csv.DictReader(handle)
                count = sum(1 for _ in reader)
            lines.append(f"{METADATA_FILE}: {count} rows; columns {', '.join(reader.fieldnames or [])} (not used for scoring)")
        for file, roles in dataset.fields_used.items():
            lines.append(f"{file}: " + "; ".join(f"{role} <- {how}" for role, how in roles.items()))
        return lines + dataset.assumptions

    def write_synthetic(self, out: Path, pairs: int, seed: int) -> list[str]:
        from viddiff.benchmarks.vidpair.synthetic import write_synthetic_vidpair

        root = write_synthetic_vidpair(out, pairs=pairs, seed=seed)
        cfg = Config().with_overrides([f"data.benchmark={self.name}", f"data.dataset={root}"])
        dataset = load_vidpair(cfg)
        kinds = {q.question_type for q in dataset.questions.values()}
        return [
            f"wrote {root}",
            f"{len(dataset.pairs)} pairs ({2 * len(dataset.pairs)} videos), {len(dataset)} questions "
            f"({', '.join(sorted(kinds))}); use it with --benchmark {self.name} --dataset {root}",
        ]

    def predictions(
        self, dataset: Dataset, results: dict[str, SampleResult], mode: Mode, failed: frozenset[str]
    ) -> list[dict[str, Optional[str]]]:
        """``[{"id", "response"}]`` in dataset order; ``null`` for a question without an answer (failed sample)."""
        return [{"id": s.sample_key, "response": results[s.sample_key].response if s.sample_key in results else None} for s in dataset]

    def score(self, dataset: Dataset, predictions: Any, mode: Mode, cfg: Config, client: Any = None) -> VidPairMetrics:
        if not isinstance(dataset, VidPairDataset):
            raise DatasetError("VidPair-Halluc scores need the dataset as its loader returns it")
        return evaluate_vidpair(dataset, predictions, cfg, client)

    def write_report(
        self, out_dir: Path, metrics: VidPairMetrics, *, cfg: Config, dataset_source: str,  # type: ignore[override]
        dataset_revision: Optional[str], failed_samples: Sequence[str] = (),
    ) -> None:
        write_vidpair_report(
            out_dir, metrics, cfg=cfg, dataset_source=dataset_source, dataset_revision=dataset_revision,
            failed_samples=failed_samples,
        )

    def incomplete_scores(self, metrics: VidPairMetrics, metrics_file: Path) -> str:  # type: ignore[override]
        n = len(metrics.judge_failures)
        if not n:
            return ""
        return (
            f"the scores are incomplete: the judge's answers stayed invalid for {n} open-ended question"
            f"{'s' if n != 1 else ''} (left out of our open-ended score); see judge_failures in {metrics_file}, then "
            "score again with more re-asks (--set eval.max_reasks=N) or another judge (--set vidpair.judge.model=...)"
        )

    def format_table(self, metrics: VidPairMetrics) -> str:  # type: ignore[override]
        return format_vidpair_table(metrics)

    def report_tables(self, metrics: VidPairMetrics) -> list[Table]:  # type: ignore[override]
        return [(title(metrics), *release_rows(metrics)), ("Ours, not in the paper", *ours_rows(metrics))]

    def headline(self, metrics: VidPairMetrics) -> str:  # type: ignore[override]
        b, m = metrics.overall.binary, metrics.overall.mcq
        parts = [f"{metrics.n_samples} questions"]
        if b:
            parts.append(f"binary wAcc {pct(b.weighted_acc)}")
        if m:
            parts.append(f"MCQ F1 {pct(m.f1)}")
        return "; ".join(parts) + f" (scorer {metrics.binary_scorer})"

    def judge_calls(self, cfg: Config, mode: Mode) -> list[tuple[str, ModelCallConfig]]:
        return [("open-ended judge (ours)", cfg.vidpair.judge)] if cfg.vidpair.judge_open else []

    def task_verdicts(self, metrics: VidPairMetrics) -> dict[str, TaskVerdict]:  # type: ignore[override]
        return {
            r.sample_key: TaskVerdict(
                question=r.question, role=r.role, expected=r.expected, reading=r.reading, correct=r.correct,
                outcome=_OUTCOMES[r.status] + (f" ({r.note})" if r.note else "") + (f"; fragile reading ({r.fragile})" if r.fragile else ""),
            )
            for r in metrics.records
        }

    def pair_audit(self, single: dict[str, Any], pair_aware: dict[str, Any]) -> tuple[dict[str, Any], str]:
        from viddiff.benchmarks.vidpair.audit import compare_answering

        return compare_answering(VidPairMetrics.model_validate(single), VidPairMetrics.model_validate(pair_aware))


VIDPAIR = VidPairHalluc()
