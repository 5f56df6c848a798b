"""VidCapBench (key-information video captioning for text-to-video, ACL Findings 2025) as a benchmark plug-in.

A model captions each video (``caption`` mode: the LMM baseline with ``vidcapbench.prompt``); a model
answers each of the video's questions from the caption alone and a judge grades the answers
(``scoring``); Accuracy, Precision, Coverage and Conciseness overall and per dimension, averaged over judge
runs. Config section: ``vidcapbench``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Sequence

from viddiff.benchmarks.base import Benchmark, CheckLine, Table
from viddiff.benchmarks.vidcapbench import report
from viddiff.benchmarks.vidcapbench.captions import captions_file
from viddiff.benchmarks.vidcapbench.data import VidcapbenchDataset, load_vidcapbench
from viddiff.benchmarks.vidcapbench.prompts import GRADE_NAMES
from viddiff.benchmarks.vidcapbench.scoring import VidcapbenchMetrics, evaluate_vidcapbench
from viddiff.config import Config, DataConfig, ModelCallConfig, VidcapbenchConfig
from viddiff.data.dataset import Dataset
from viddiff.errors import DownloadError
from viddiff.schema import Mode, Sample, SampleResult


class VidCapBench(Benchmark):
    name = "vidcapbench"
    title = "VidCapBench"
    modes = ("caption",)
    default_method = "baseline"
    has_splits = False
    records_file = report.RECORDS_FILE
    predictions_help = (
        'VidCapBench: captions, one {"question", "video" or "video_dir", "model_generation"} per video (JSONL or a JSON list)'
    )

    def load(self, cfg: Config, splits: Optional[Sequence[str]] = None, *, fetch_videos: bool = True) -> VidcapbenchDataset:
        return load_vidcapbench(cfg.data, cfg.vidcapbench, splits, fetch_videos=fetch_videos)

    def video_advice(self, sample: Sample, dataset: Dataset, cfg: Config) -> str:
        return (
            f"VidCapBench videos are in the Hugging Face dataset {cfg.vidcapbench.hf_repo}: run with --dataset hf to "
            "download those of the selection, or put the file in a videos/ folder beside the QA file (or set "
            "data.video_root to the folder that holds them)"
        )

    def download(self, cfg: Config, splits: Optional[Sequence[str]], domains: Sequence[str], keep_archives: bool) -> int:
        raise DownloadError("VidCapBench videos are fetched on demand: `viddiff run --benchmark vidcapbench --dataset hf`")

    def write_synthetic(self, out: Path, pairs: int, seed: int) -> list[str]:
        from viddiff.benchmarks.vidcapbench.synthetic import write_synthetic_vidcapbench

        path = write_synthetic_vidcapbench(out, videos=pairs, seed=seed)
        dataset = load_vidcapbench(DataConfig(benchmark=self.name, dataset=str(path)), VidcapbenchConfig())
        n_qa = sum(len(q) for q in dataset.qa.values())
        return [
            f"wrote {path}",
            f"{len(dataset)} videos, {n_qa} QA pairs; use it with --benchmark {self.name} --dataset {Path(out)}",
        ]

    def predictions(
        self, dataset: Dataset, results: dict[str, SampleResult], mode: Mode, failed: frozenset[str]
    ) -> list[dict[str, str]]:
        """The published caption layout, in dataset order; a failed sample's caption is ``""``."""
        texts = {s.sample_key: (results[s.sample_key].response or "") if s.sample_key in results else "" for s in dataset}
        return captions_file(dataset, texts)  # type: ignore[arg-type]

    def score(self, dataset: Dataset, predictions: Any, mode: Mode, cfg: Config, client: Any = None) -> VidcapbenchMetrics:
        return evaluate_vidcapbench(dataset, predictions, cfg, client)  # type: ignore[arg-type]

    def write_report(self, out_dir: Path, metrics: VidcapbenchMetrics, **kwargs: Any) -> None:  # type: ignore[override]
        report.write_report(out_dir, metrics, **kwargs)

    def format_table(self, metrics: VidcapbenchMetrics) -> str:  # type: ignore[override]
        return report.format_table(metrics)

    def report_tables(self, metrics: VidcapbenchMetrics) -> list[Table]:  # type: ignore[override]
        return [(report.title(metrics), *report.score_rows(metrics))]

    def headline(self, metrics: VidcapbenchMetrics) -> str:  # type: ignore[override]
        return report.headline(metrics)

    def sample_checks(self, metrics: VidcapbenchMetrics, sample_key: str) -> list[CheckLine]:  # type: ignore[override]
        """The first judge run's grade of each question (the page shows one run; ``qa.csv`` has them all)."""
        lines = []
        for r in metrics.records:
            if r.sample_key != sample_key or r.run != 0:
                continue
            verdict = None if r.grade is None else r.grade == "A"
            grade = f"{r.grade} ({GRADE_NAMES[r.grade]})" if r.grade else "no grade"
            lines.append(
                CheckLine(
                    label=f"{r.dimension} / {r.sub_category}: {r.question}", passed=verdict,
                    detail=f"{grade}; expected “{r.answer}”; answered from the caption: “{r.prediction}”",
                )
            )
        return lines

    def sample_score(self, metrics: VidcapbenchMetrics, sample_key: str) -> Optional[str]:  # type: ignore[override]
        mine = [r for r in metrics.records if r.sample_key == sample_key and r.run == 0]
        if not mine:
            return "no QA pairs"
        counts = {g: sum(r.grade == g for r in mine) for g in "ABCD"}
        return " ".join(f"{g} {n}" for g, n in counts.items())

    def judge_calls(self, cfg: Config, mode: Mode) -> list[tuple[str, ModelCallConfig]]:
        return [("answerer", cfg.vidcapbench.answerer), ("grader", cfg.vidcapbench.grader)]


VIDCAPBENCH = VidCapBench()
