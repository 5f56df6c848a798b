"""ViDiC-1K (video difference captioning, dual yes/no checklist) as a benchmark plug-in.

A method writes a free-text account of how two videos are alike and how they differ (``describe`` mode);
a text-only judge answers every checklist question from that text alone. Everything ViDiC-specific lives in
this package: the checklist loader (``data``), the synthetic fixture (``synthetic``), the response formats
(``responses``), the judge prompts and scorer (``prompts``, ``scoring``) and the report (``report``).
Its config section is ``vidic``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Sequence

from viddiff.benchmarks.base import Benchmark, Table
from viddiff.benchmarks.vidic.data import CATEGORY_NAMES, VidicDataset, load_vidic, overlap_with_viddiffbench
from viddiff.benchmarks.vidic.report import (
    CHECKLIST_FILE,
    format_vidic_table,
    subset_rows,
    title,
    write_vidic_report,
)
from viddiff.benchmarks.vidic.scoring import VidicMetrics, evaluate_vidic
from viddiff.config import Config, DataConfig, ModelCallConfig, VidicConfig
from viddiff.data.dataset import Dataset
from viddiff.eval.tables import pct
from viddiff.schema import Mode, Sample, SampleResult


class ViDiC(Benchmark):
    name = "vidic"
    title = "ViDiC-1K"
    modes = ("describe",)
    has_splits = False
    records_file = CHECKLIST_FILE
    predictions_help = (
        'ViDiC-1K: responses, as `viddiff run` writes them ([{"id", "response"}]), {id: text}, or a ViDiC-1K '
        "repository response list"
    )

    def load(self, cfg: Config, splits: Optional[Sequence[str]] = None, *, fetch_videos: bool = True) -> VidicDataset:
        return load_vidic(
            cfg.data, cfg.vidic, splits, fetch_videos=fetch_videos,
            default_n_differences=cfg.proposer.describe_n_differences,
        )

    def video_advice(self, sample: Sample, dataset: Dataset, cfg: Config) -> str:
        root, repo = dataset.root, cfg.vidic.hf_repo
        if sample.source_dataset == "synthetic":
            return f"re-generate the synthetic ViDiC benchmark with `viddiff data synth --benchmark vidic --out {root}`"
        return (
            f"ViDiC-1K videos are in the Hugging Face dataset repo {repo} (licence CC-BY-NC-SA-4.0: downloaded at "
            "run time, never shipped with viddiff): run with --dataset hf to download the checklist and the videos it "
            f"needs, or download the repo with `hf download {repo} --repo-type dataset --local-dir DIR` and pass "
            "--set data.video_root=DIR (checklist video paths are relative to the repo root)"
        )

    def check_notes(self, dataset: Dataset) -> list[str]:
        overlap = overlap_with_viddiffbench(dataset)
        listing = f": {', '.join(overlap)}" if overlap else ""
        return [f"{len(overlap)} of {len(dataset)} pairs overlap VidDiffBench{listing}"]

    def download(self, cfg: Config, splits: Optional[Sequence[str]], domains: Sequence[str], keep_archives: bool) -> int:
        from viddiff.errors import DownloadError

        raise DownloadError(
            "ViDiC-1K videos are fetched on demand: `viddiff run --benchmark vidic --dataset hf` downloads the videos "
            "of the selected pairs"
        )

    def write_synthetic(self, out: Path, pairs: int, seed: int) -> list[str]:
        from viddiff.benchmarks.vidic.synthetic import write_synthetic_vidic

        path = write_synthetic_vidic(out, pairs=pairs, seed=seed)
        dataset = load_vidic(DataConfig(benchmark=self.name, dataset=str(path)), VidicConfig())
        items = [q for checklist in dataset.checklists.values() for q in checklist]
        n_diff = sum(q.kind == "difference" for q in items)
        categories = ", ".join(CATEGORY_NAMES[c] for c in CATEGORY_NAMES if any(q.category == c for q in items))
        return [
            f"wrote {path}",
            f"{len(dataset)} pairs ({2 * len(dataset)} videos), {len(items)} checklist questions "
            f"({n_diff} difference, {len(items) - n_diff} similarity); categories: {categories}; "
            f"use it with --benchmark {self.name} --dataset {path.parent}",
        ]

    def predictions(
        self, dataset: Dataset, results: dict[str, SampleResult], mode: Mode, failed: frozenset[str]
    ) -> list[dict[str, str]]:
        """``[{"id": sample_key, "response": text}]`` in dataset order ("" when the sample failed)."""
        return [
            {"id": s.sample_key, "response": (results[s.sample_key].description or "") if s.sample_key in results else ""}
            for s in dataset
        ]

    def score(self, dataset: Dataset, predictions: Any, mode: Mode, cfg: Config, client: Any = None) -> VidicMetrics:
        return evaluate_vidic(dataset, predictions, cfg, client)  # type: ignore[arg-type]

    def write_report(
        self,
        out_dir: Path,
        metrics: VidicMetrics,  # type: ignore[override]
        *,
        cfg: Config,
        dataset_source: str,
        dataset_revision: Optional[str],
        failed_samples: Sequence[str] = (),
    ) -> None:
        write_vidic_report(
            out_dir, metrics, cfg=cfg, dataset_source=dataset_source, dataset_revision=dataset_revision,
            failed_samples=failed_samples,
        )

    def incomplete_scores(self, metrics: VidicMetrics, metrics_file: Path) -> str:  # type: ignore[override]
        if not metrics.judge_failures:
            return ""
        samples = {failure.index for failure in metrics.judge_failures}
        n = len(metrics.judge_failures)
        return (
            f"the scores are incomplete: the judge's answers stayed invalid for {n} "
            f"checklist item{'s' if n != 1 else ''} in {len(samples)} of {metrics.n_samples} samples (counted wrong); see judge_failures "
            f"in {metrics_file}, then score again with more re-asks (--set eval.max_reasks=N) or another judge "
            "(--set vidic.judge.model=...)"
        )

    def format_table(self, metrics: VidicMetrics) -> str:  # type: ignore[override]
        return format_vidic_table(metrics)

    def report_tables(self, metrics: VidicMetrics) -> list[Table]:  # type: ignore[override]
        return [(title(metrics), *subset_rows(metrics))]

    def headline(self, metrics: VidicMetrics) -> str:  # type: ignore[override]
        return f"checklist accuracy {pct(metrics.overall.avg.accuracy)}% over {metrics.n_items} items ({metrics.n_samples} pairs)"

    def judge_calls(self, cfg: Config, mode: Mode) -> list[tuple[str, ModelCallConfig]]:
        return [("judge", cfg.vidic.judge)]


VIDIC = ViDiC()
