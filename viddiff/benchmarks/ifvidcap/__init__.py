"""IF-VidCap (instruction-following video captioning, NJU-LINK) as a benchmark plug-in.

A model captions one video under an instruction with format and content constraints (``caption`` mode:
the LMM baseline, with the benchmark's system prompt and frame rate); a judge extracts the spans each
format constraint is about, deterministic checks decide them (``rules``), and the judge answers the
content questions from the caption alone (``scoring``). Metrics: ISR and CSR (micro as released, macro as
the paper's Eq. 1), overall, rule-based and open-ended (``metrics``). Config section: ``ifvidcap``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Sequence

from viddiff.benchmarks.base import Benchmark, CheckLine, Table
from viddiff.benchmarks.ifvidcap import report
from viddiff.benchmarks.ifvidcap.data import IfvidcapDataset, load_ifvidcap
from viddiff.benchmarks.ifvidcap.prompts import caption_system, ifvidcap_templates
from viddiff.benchmarks.ifvidcap.responses import responses_file
from viddiff.benchmarks.ifvidcap.scoring import IfvidcapMetrics, evaluate_ifvidcap
from viddiff.config import Config, DataConfig, IfvidcapConfig, ModelCallConfig
from viddiff.data.dataset import Dataset
from viddiff.errors import DownloadError
from viddiff.schema import Mode, Sample, SampleResult


class IFVidCap(Benchmark):
    name = "ifvidcap"
    title = "IF-VidCap"
    modes = ("caption",)
    default_method = "baseline"
    has_splits = False
    records_file = report.RECORDS_FILE
    predictions_help = 'IF-VidCap: {"<video_id>": [{"field", "prompt_id", "response"}, ...]} (the benchmark\'s layout)'

    def load(self, cfg: Config, splits: Optional[Sequence[str]] = None, *, fetch_videos: bool = True) -> IfvidcapDataset:
        system = caption_system(ifvidcap_templates(cfg.ifvidcap.prompt_files.model_dump()), cfg.ifvidcap.fps)
        return load_ifvidcap(cfg.data, cfg.ifvidcap, system, splits, fetch_videos=fetch_videos)

    def video_advice(self, sample: Sample, dataset: Dataset, cfg: Config) -> str:
        return (
            f"IF-VidCap videos are in the Hugging Face dataset {cfg.ifvidcap.hf_repo}: run with --dataset hf to "
            "download those of the selection, or place each at the processed_path of annotation/video_meta_info.json "
            "(or set data.video_root to the folder that holds them)"
        )

    def download(self, cfg: Config, splits: Optional[Sequence[str]], domains: Sequence[str], keep_archives: bool) -> int:
        raise DownloadError("IF-VidCap videos are fetched on demand: `viddiff run --benchmark ifvidcap --dataset hf`")

    def write_synthetic(self, out: Path, pairs: int, seed: int) -> list[str]:
        from viddiff.benchmarks.ifvidcap.synthetic import write_synthetic_ifvidcap

        path = write_synthetic_ifvidcap(out, videos=pairs, seed=seed)
        dataset = load_ifvidcap(DataConfig(benchmark=self.name, dataset=str(out)), IfvidcapConfig(), "synthetic")
        n_rules = sum(len(i.checklist.rules) for i in dataset.instructions.values())
        n_groups = sum(len(i.checklist.groups) for i in dataset.instructions.values())
        return [
            f"wrote {path}",
            f"{len({i.video_id for i in dataset.instructions.values()})} videos, {len(dataset)} instructions, "
            f"{n_rules} rule items, {n_groups} open-ended groups; use it with --benchmark {self.name} --dataset {out}",
        ]

    def predictions(
        self, dataset: Dataset, results: dict[str, SampleResult], mode: Mode, failed: frozenset[str]
    ) -> dict[str, list[dict[str, str]]]:
        """The benchmark's own layout; a failed sample's response is ``""`` (scored: nothing satisfied)."""
        texts = {s.sample_key: (results[s.sample_key].response or "") if s.sample_key in results else "" for s in dataset}
        return responses_file(dataset, texts)  # type: ignore[arg-type]

    def score(self, dataset: Dataset, predictions: Any, mode: Mode, cfg: Config, client: Any = None) -> IfvidcapMetrics:
        return evaluate_ifvidcap(dataset, predictions, cfg, client)  # type: ignore[arg-type]

    def write_report(self, out_dir: Path, metrics: IfvidcapMetrics, **kwargs: Any) -> None:  # type: ignore[override]
        report.write_report(out_dir, metrics, **kwargs)

    def format_table(self, metrics: IfvidcapMetrics) -> str:  # type: ignore[override]
        return report.format_table(metrics)

    def report_tables(self, metrics: IfvidcapMetrics) -> list[Table]:  # type: ignore[override]
        return [(report.title(metrics), *report.score_rows(metrics))]

    def headline(self, metrics: IfvidcapMetrics) -> str:  # type: ignore[override]
        return report.headline(metrics)

    def sample_checks(self, metrics: IfvidcapMetrics, sample_key: str) -> list[CheckLine]:  # type: ignore[override]
        outcome = next((o for o in metrics.outcomes if o.sample_key == sample_key), None)
        if outcome is None:
            return []
        lines = []
        for r in outcome.rules:
            detail = r.error or "; ".join(
                [f"checked on {len(r.spans)} span(s)"]
                + (["not found verbatim in the response"] if r.verbatim is False else [])
                + (["previous item's spans (shared budget spent)"] if r.stale else [])
            )
            lines.append(CheckLine(label=f"{r.constraint_id}: {r.description}", passed=r.passed, detail=detail))
        for g in outcome.groups:
            answers = "; ".join(f"{i.question} → {i.answer or '–'} (expected {i.correct_answer})" for i in g.items)
            lines.append(
                CheckLine(label=f"open-ended: {g.check_content}", passed=g.passed, detail=answers or "no questions: never passes")
            )
        return lines

    def sample_score(self, metrics: IfvidcapMetrics, sample_key: str) -> Optional[str]:  # type: ignore[override]
        outcome = next((o for o in metrics.outcomes if o.sample_key == sample_key), None)
        if outcome is None:
            return None
        satisfied, total = outcome.satisfied()
        return f"{satisfied} of {total} constraints"

    def judge_calls(self, cfg: Config, mode: Mode) -> list[tuple[str, ModelCallConfig]]:
        return [("judge", cfg.ifvidcap.judge)]


IFVIDCAP = IFVidCap()
