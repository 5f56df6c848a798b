"""VidDiffBench (the paper's benchmark) as a plug-in: closed accuracy and open recall@N_diff.

The pieces live where every benchmark can reuse them: the row loader in ``viddiff.data.viddiffbench``,
the synthetic generator in ``viddiff.data.synthetic``, the archive download in ``viddiff.data.download``,
the scorers and report in ``viddiff.eval``. This object ties them to the commands.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Sequence

from viddiff.benchmarks.base import Benchmark, Table
from viddiff.config import Config, DataConfig, ModelCallConfig
from viddiff.data.dataset import Dataset
from viddiff.data.sources import check_advice
from viddiff.eval import report
from viddiff.eval.closed import ClosedMetrics
from viddiff.eval.open import OpenMetrics
from viddiff.eval.runner import evaluate
from viddiff.errors import DatasetError
from viddiff.eval.tables import pct
from viddiff.schema import Mode, Sample, SampleResult

Metrics = ClosedMetrics | OpenMetrics


class VidDiffBench(Benchmark):
    name = "viddiffbench"
    title = "VidDiffBench"
    modes = ("closed", "open")
    records_file = report.DIFFERENCES_FILE
    predictions_help = (
        "VidDiffBench: the official predictions JSON, a list aligned with the dataset order (closed: "
        '{key: "a"|"b"|"c"|null}; open: {key: {"description", "prediction"}})'
    )

    def load(self, cfg: Config, splits: Optional[Sequence[str]] = None, *, fetch_videos: bool = True) -> Dataset:
        from viddiff.data.viddiffbench import load_dataset

        return load_dataset(cfg.data, splits=splits)

    def video_advice(self, sample: Sample, dataset: Dataset, cfg: Config) -> str:
        """Where a sample's videos come from: the HF zips, their licensed owners, or the synthetic generator."""
        if sample.source_dataset == "synthetic":
            return f"re-generate the synthetic benchmark with `viddiff data synth --out {dataset.root}`"
        return check_advice(sample.domain, cfg.data.hf_repo, dataset.root) or super().video_advice(sample, dataset, cfg)

    def download(self, cfg: Config, splits: Optional[Sequence[str]], domains: Sequence[str], keep_archives: bool) -> int:
        from viddiff.data.download import download_videos

        return download_videos(cfg, self.load(cfg, splits, fetch_videos=False), domains, keep_archives)

    def write_synthetic(self, out: Path, pairs: int, seed: int) -> list[str]:
        from viddiff.data.synthetic import write_synthetic_benchmark
        from viddiff.data.viddiffbench import load_dataset

        path = write_synthetic_benchmark(out, pairs=pairs, seed=seed)
        dataset = load_dataset(DataConfig(dataset=str(path)))
        actions = sorted({(s.action, s.action_name) for s in dataset})
        per_action = ", ".join(f"{name} ({sum(s.action == a for s in dataset)})" for a, name in actions)
        labelled = sum(len(s.closed_differences()) for s in dataset)
        return [
            f"wrote {path}",
            f"{len(dataset)} pairs ({2 * len(dataset)} videos, {labelled} a/b differences); actions: {per_action}; "
            f"splits: {', '.join(sorted({s.split for s in dataset}))}; use it with --dataset {path.parent}",
        ]

    def predictions(
        self, dataset: Dataset, results: dict[str, SampleResult], mode: Mode, failed: frozenset[str]
    ) -> list[dict[str, Any]]:
        """Official format, aligned with dataset order.

        Closed: ``{key: "a"|"b"|"c"|null}`` (null = no valid answer, scored wrong); a ``failed`` sample has
        null for each of its ``a``/``b`` differences. Open: only differences predicted ``a``/``b`` are
        claims; ``c`` and invalid ones are left out.
        """
        out: list[dict[str, Any]] = []
        for sample in dataset:
            result = results.get(sample.sample_key)
            if result is None:
                failed_closed = mode == "closed" and sample.sample_key in failed
                out.append({d.key: None for d in sample.closed_differences()} if failed_closed else {})
            elif mode == "closed":
                out.append({p.key: p.prediction for p in result.predictions})
            else:
                out.append(
                    {
                        p.key: {"description": p.description, "prediction": p.prediction}
                        for p in result.predictions
                        if p.prediction in ("a", "b")
                    }
                )
        return out

    def check_selection(self, dataset: Dataset, mode: Mode) -> None:
        if mode == "open" and dataset.missing_n_diff:
            raise DatasetError(
                f"open mode needs N_diff, and {dataset.missing_n_diff} (closed mode does not use it)"
            )

    def score(self, dataset: Dataset, predictions: Any, mode: Mode, cfg: Config, client: Any = None) -> Metrics:
        self.check_selection(dataset, mode)
        return evaluate(dataset.samples, predictions, mode, cfg, client)

    def write_report(
        self,
        out_dir: Path,
        metrics: Metrics,  # type: ignore[override]
        *,
        cfg: Config,
        dataset_source: str,
        dataset_revision: Optional[str],
        failed_samples: Sequence[str] = (),
    ) -> None:
        report.write_report(
            out_dir, metrics, cfg=cfg, dataset_source=dataset_source, dataset_revision=dataset_revision,
            failed_samples=failed_samples,
        )

    def incomplete_scores(self, metrics: Metrics, metrics_file: Path) -> str:  # type: ignore[override]
        if isinstance(metrics, ClosedMetrics) or not metrics.judge_issues:
            return ""
        samples = {issue.index for issue in metrics.judge_issues}
        keys = {(issue.index, key) for issue in metrics.judge_issues for key in issue.gt_keys}
        return (
            f"the scores are incomplete: the judge's answers stayed invalid for {len(samples)} of {metrics.n_samples} "
            f"samples ({len(keys)} ground-truth differences could not be judged and count as not found); see "
            f"judge_issues in {metrics_file}, then score again with more re-asks (--set eval.max_reasks=N) or "
            "another judge (--set eval.judge.model=...)"
        )

    def format_table(self, metrics: Metrics) -> str:  # type: ignore[override]
        return report.format_table(metrics)

    def report_tables(self, metrics: Metrics) -> list[Table]:  # type: ignore[override]
        return [
            (report.title(metrics), *report.split_rows(metrics)),
            ("By action", *report.action_rows(metrics)),
        ]

    def headline(self, metrics: Metrics) -> str:  # type: ignore[override]
        if isinstance(metrics, ClosedMetrics):
            return f"closed accuracy {pct(metrics.overall.accuracy)}% over {metrics.overall.n} differences (chance 50%)"
        return f"open recall@N_diff {pct(metrics.overall.recall)}% over {metrics.overall.n} annotated differences"

    def judge_calls(self, cfg: Config, mode: Mode) -> list[tuple[str, ModelCallConfig]]:
        return [("judge", cfg.eval.judge), ("opposite check", cfg.eval.flip)] if mode == "open" else []


VIDDIFFBENCH = VidDiffBench()
