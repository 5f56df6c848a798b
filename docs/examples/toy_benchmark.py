"""A benchmark plug-in in one file: pairs of videos, one statement each, "is it more true of A or of B?".

The data is ``toy.json``, a list of rows::

    {"id": "p0", "action": "barbell back squat", "statement": "the squat is deeper", "answer": "a",
     "videos": [{"path": "videos/p0_a.mp4"}, {"path": "videos/p0_b.mp4"}]}

(paths relative to the file; a ``videos`` entry may also give ``fps_original`` and ``frames_trim`` as in
VidDiffBench). The task is closed mode; a predictions file is ``{"<id>": "a" | "b" | "c" | null}``; the
score is accuracy with its exact 95% interval. ``viddiff run/eval/baseline/data --benchmark toy`` work
once it is registered: by ``viddiff.benchmarks.register(TOY)`` in Python, or for the command line by an
entry point ``toy = toy_benchmark:TOY`` in the group ``viddiff.benchmarks`` of an installed package.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional, Sequence

from pydantic import BaseModel

from viddiff.benchmarks.base import Benchmark, Table
from viddiff.config import Config
from viddiff.data.dataset import Dataset
from viddiff.errors import DatasetError, PredictionFormatError
from viddiff.eval.csv_cells import write_records_csv
from viddiff.eval.report import make_output_dir, write_scored
from viddiff.eval.stats import Accuracy, accuracy
from viddiff.eval.tables import md_table, pct, text_table
from viddiff.schema import Difference, Mode, Sample, SampleResult, VideoRef

ROWS_FILE = "toy.json"
KEY = "0"
"""Each sample's one statement, under this difference key."""


class ToyRecord(BaseModel):
    sample_key: str
    statement: str
    answer: str
    prediction: Optional[str]
    correct: bool


class ToyMetrics(BaseModel):
    n_samples: int
    overall: Accuracy
    records: list[ToyRecord]


class ToyBenchmark(Benchmark):
    name = "toy"
    title = "Toy pairs"
    modes = ("closed",)
    has_splits = False
    records_file = "items.csv"
    predictions_help = 'toy: {"<id>": "a"|"b"|"c"|null}'

    def load(self, cfg: Config, splits: Optional[Sequence[str]] = None, *, fetch_videos: bool = True) -> Dataset:
        if splits:
            raise DatasetError("the toy benchmark has no splits; drop --split")
        given = Path(cfg.data.dataset)
        file = given / ROWS_FILE if given.is_dir() else given
        if not file.is_file():
            raise DatasetError(f"no {ROWS_FILE} at {given}; write one with `viddiff data synth --benchmark toy`")
        samples = [self._sample(row, file.parent) for row in json.loads(file.read_text())]
        return Dataset(samples=samples, source=str(file), revision=None, root=file.parent, benchmark=self.name)

    @staticmethod
    def _sample(row: dict[str, Any], root: Path) -> Sample:
        videos = tuple(VideoRef(**{**v, "path": str(root / v["path"])}) for v in row["videos"])
        statement = Difference(key=KEY, name=row["statement"], description=row["statement"], num_frames="gt_1")
        return Sample(
            sample_key=row["id"], action="toy", action_name=row["action"], action_description=row["action"],
            split="all", domain="toy", videos=videos, differences={KEY: statement}, labels={KEY: row["answer"]},
        )

    def write_synthetic(self, out: Path, pairs: int, seed: int) -> list[str]:
        """viddiff's own synthetic videos, each pair with its first a/b-labelled difference as the statement."""
        from viddiff.data.synthetic import write_synthetic_benchmark

        rows = []
        for line in write_synthetic_benchmark(out, pairs=pairs, seed=seed).read_text().splitlines():
            source = json.loads(line)
            labels, annotated = json.loads(source["differences_gt"]), json.loads(source["differences_annotated"])
            key = next((k for k, letter in labels.items() if letter in ("a", "b")), None)
            if key is not None:
                rows.append(
                    {"id": source["sample_key"], "action": source["action_description"],
                     "statement": annotated[key]["description"], "answer": labels[key],
                     "videos": json.loads(source["videos"])}
                )
        (out / ROWS_FILE).write_text(json.dumps(rows, indent=1))
        return [f"wrote {out / ROWS_FILE}: {len(rows)} pairs; use it with --benchmark toy --dataset {out}"]

    def predictions(
        self, dataset: Dataset, results: dict[str, SampleResult], mode: Mode, failed: frozenset[str]
    ) -> dict[str, Optional[str]]:
        letters = {key: {p.key: p.prediction for p in r.predictions}.get(KEY) for key, r in results.items()}
        return {s.sample_key: letters.get(s.sample_key) for s in dataset}

    def score(self, dataset: Dataset, predictions: Any, mode: Mode, cfg: Config, client: Any = None) -> ToyMetrics:
        if isinstance(predictions, (str, Path)):
            predictions = json.loads(Path(predictions).read_text())
        if not isinstance(predictions, dict):
            raise PredictionFormatError('toy predictions are one object {"<id>": "a"|"b"|"c"|null}')
        records = []
        for sample in dataset:
            prediction, answer = predictions.get(sample.sample_key), sample.labels[KEY]
            if prediction not in ("a", "b", "c", None):
                raise PredictionFormatError(f"{sample.sample_key}: prediction {prediction!r} is not a, b, c or null")
            records.append(
                ToyRecord(sample_key=sample.sample_key, statement=sample.differences[KEY].description,
                          answer=answer, prediction=prediction, correct=prediction == answer)
            )
        return ToyMetrics(
            n_samples=len(dataset), overall=accuracy(sum(r.correct for r in records), len(records)), records=records
        )

    def write_report(
        self,
        out_dir: Path,
        metrics: ToyMetrics,  # type: ignore[override]
        *,
        cfg: Config,
        dataset_source: str,
        dataset_revision: Optional[str],
        failed_samples: Sequence[str] = (),
    ) -> None:
        make_output_dir(out_dir)
        write_records_csv(Path(out_dir) / self.records_file, list(ToyRecord.model_fields),
                          (r.model_dump() for r in metrics.records))
        summary = {"benchmark": self.name, "dataset": dataset_source, "counts": {"samples": metrics.n_samples},
                   "metrics": metrics.model_dump(exclude={"records"})}
        markdown = f"# {self.title}\n\n" + md_table(*self._table(metrics)) + "\n"
        write_scored(out_dir, summary, markdown, metrics.n_samples, failed_samples)

    def format_table(self, metrics: ToyMetrics) -> str:  # type: ignore[override]
        return text_table(*self._table(metrics)) + "\n"

    def report_tables(self, metrics: ToyMetrics) -> list[Table]:  # type: ignore[override]
        return [(self.title, *self._table(metrics))]

    @staticmethod
    def _table(metrics: ToyMetrics) -> tuple[list[str], list[list[str]]]:
        a = metrics.overall
        interval = "-" if a.ci_low is None else f"[{pct(a.ci_low)}, {pct(a.ci_high)}]"
        return ["pairs", "correct", "acc %", "95% CI"], [[str(a.n), str(a.correct), pct(a.accuracy), interval]]


TOY = ToyBenchmark()
