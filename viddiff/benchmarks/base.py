"""What a benchmark plug-in is: one object that loads, checks, fakes, formats, scores and reports its data.

Everything the commands do that depends on which benchmark is meant goes through these methods, so a new
benchmark is one module (a :class:`Benchmark` subclass registered in ``viddiff.benchmarks``) and no edit
anywhere else. The methods (VidDiff, the LMM baselines) only ever see ``Sample`` models and a mode, and
produce ``SampleResult`` models; how those become a predictions file and a score is the benchmark's job.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Optional, Sequence

from pydantic import BaseModel, ConfigDict

from viddiff.config import Config, ModelCallConfig
from viddiff.data.dataset import Dataset
from viddiff.errors import ConfigError, ViddiffError
from viddiff.schema import Mode, Sample, SampleResult

if TYPE_CHECKING:
    from viddiff.backends.chat import ChatModel

Table = tuple[str, list[str], list[list[str]]]
"""A score table: title, header, rows (as ``report.md`` and the HTML index show them)."""


class CheckLine(BaseModel):
    """One scored check of one sample (a constraint, a question), as a sample's HTML page lists it."""

    label: str
    passed: Optional[bool]
    """``None``: not scored."""
    detail: str = ""
class TaskVerdict(BaseModel):
    """How a single-video task's answer was scored, as the HTML report shows it beside the answer."""

    model_config = ConfigDict(extra="forbid")

    question: Optional[str] = None
    """The question or instruction as a reader wants it (without the benchmark's answering instructions)."""
    role: Optional[str] = None
    """What the task's video is to the benchmark (VidPair-Halluc: ``positive`` or ``adversarial``)."""
    expected: Optional[str] = None
    reading: Optional[str] = None
    """How the scorer read the answer (``yes``, ``AC``, ``7/10``)."""
    outcome: str = ""
    correct: Optional[bool] = None
    """``None`` when not scored right or wrong."""


class Benchmark(ABC):
    """A benchmark: its data, its task modes, its prediction format and its scorer."""

    name: ClassVar[str]
    """Registry name (``--benchmark NAME``, ``data.benchmark``)."""
    title: ClassVar[str]
    """Display name."""
    modes: ClassVar[tuple[Mode, ...]]
    """The task modes it scores, the default first."""
    default_method: ClassVar[str] = "viddiff"
    """The method ``viddiff run`` uses on it when ``--method`` is not given (one that can answer its modes)."""
    has_splits: ClassVar[bool] = True
    """Whether ``--split`` selects samples."""
    records_file: ClassVar[str]
    """The per-item CSV its report writes next to ``metrics.json``."""
    predictions_help: ClassVar[str]
    """What a predictions file looks like (``viddiff eval --help``)."""

    # ------------------------------------------------------------------ selection

    def resolve_mode(self, mode: Optional[str]) -> Mode:
        """The mode to run or score: the one given, if this benchmark has it; without one, its only mode."""
        if mode is None and len(self.modes) == 1:
            return self.modes[0]
        if mode in self.modes:
            return mode  # type: ignore[return-value]
        choices = " or ".join(f"--mode {m}" for m in self.modes)
        raise ConfigError(f"{self.title} needs {choices} (got {f'--mode {mode}' if mode else 'none'})")

    def output_stem(self, splits: Optional[Sequence[str]]) -> str:
        """Default results-directory stem for a selection."""
        if not self.has_splits:
            return self.name
        return "-".join(splits) if splits else "all"

    # ------------------------------------------------------------------ data

    @abstractmethod
    def load(self, cfg: Config, splits: Optional[Sequence[str]] = None, *, fetch_videos: bool = True) -> Dataset:
        """The selected samples. ``fetch_videos=False`` when only the annotations are needed (scoring)."""

    def video_advice(self, sample: Sample, dataset: Dataset, cfg: Config) -> str:
        """How to obtain a video of ``sample`` that is missing or unreadable (``viddiff data check``)."""
        return "place the video at the path shown, or set data.video_root to the directory that holds the videos"

    def check_notes(self, dataset: Dataset) -> list[str]:
        """Extra lines ``viddiff data check`` prints about the dataset."""
        return []

    def download(self, cfg: Config, splits: Optional[Sequence[str]], domains: Sequence[str], keep_archives: bool) -> int:
        """``viddiff data download``: fetch what can be fetched, say how to get the rest; the exit code."""
        raise ViddiffError(f"{self.title} has no video download; `viddiff data check` says where its videos go")

    @abstractmethod
    def write_synthetic(self, out: Path, pairs: int, seed: int) -> list[str]:
        """Write a synthetic fixture in this benchmark's format under ``out``, read it back with the real
        loader, and return the lines that summarise it."""

    def check_selection(self, dataset: Dataset, mode: Mode) -> None:
        """Refuse a selection that ``mode`` cannot use (annotations only that mode needs are missing), before
        any model call or scoring; the default accepts every selection."""

    # ------------------------------------------------------------------ predictions and scores

    @abstractmethod
    def predictions(
        self, dataset: Dataset, results: dict[str, SampleResult], mode: Mode, failed: frozenset[str]
    ) -> Any:
        """The predictions file (JSON-serialisable) for a run's results, in dataset order; ``failed`` samples
        have no result and must score as wrong."""

    @abstractmethod
    def score(
        self, dataset: Dataset, predictions: Any, mode: Mode, cfg: Config, client: Optional["ChatModel"] = None
    ) -> BaseModel:
        """Validate ``predictions`` (a path or the parsed object) and score them. A judge, where the
        protocol has one, uses ``client`` (else one built from ``cfg``)."""

    @abstractmethod
    def write_report(
        self,
        out_dir: Path,
        metrics: BaseModel,
        *,
        cfg: Config,
        dataset_source: str,
        dataset_revision: Optional[str],
        failed_samples: Sequence[str] = (),
    ) -> None:
        """Write ``metrics.json``, :attr:`records_file` and ``report.md`` into ``out_dir``."""

    def incomplete_scores(self, metrics: BaseModel, metrics_file: Path) -> str:
        """Why ``metrics`` are not a complete score (e.g. judge answers that stayed invalid), as the last line
        a command prints before it exits 1; ``""`` when they are complete. ``metrics_file``: where they went."""
        return ""

    @abstractmethod
    def format_table(self, metrics: BaseModel) -> str:
        """The console summary of a score."""

    def report_tables(self, metrics: BaseModel) -> list[Table]:
        """The score tables of the HTML report's index page."""
        return []

    def headline(self, metrics: BaseModel) -> str:
        """One line summarising the score (HTML report)."""
        return f"{getattr(metrics, 'n_samples', 0)} samples scored"

    report_pages: ClassVar[Literal["sample", "group"]] = "sample"
    """HTML report layout: one page per sample (with :meth:`sample_checks`), or, for single-video tasks asked of
    several videos, one page per group of samples (``Sample.action``: a pair's videos with each question and the
    answer about each, scored by :meth:`task_verdicts`)."""

    def sample_checks(self, metrics: BaseModel, sample_key: str) -> list[CheckLine]:
        """The checks one sample was scored on, for its HTML page (single-video tasks; pair benchmarks' pages
        show their per-difference records instead)."""
        return []

    def sample_score(self, metrics: BaseModel, sample_key: str) -> Optional[str]:
        """A short score of one sample for the HTML index ("3 of 5 constraints"), where the benchmark has one."""
        return None

    def judge_calls(self, cfg: Config, mode: Mode) -> list[tuple[str, ModelCallConfig]]:
        """The chat models that score ``mode`` (role, call), so reports can name them."""
        return []

    def task_verdicts(self, metrics: BaseModel) -> dict[str, TaskVerdict]:
        """Group pages (``report_pages = "group"``): each sample's scored verdict by sample key ({} if none)."""
        return {}

    # ------------------------------------------------------------------ pairs of single-video tasks

    pair_aware_override: ClassVar[Optional[str]] = None
    """The ``--set`` that makes this benchmark ask pair-aware (each task's video shown with its pair's other video);
    ``None`` when it has no pairs. ``viddiff audit`` then runs it both ways."""

    def pair_audit(self, single: dict[str, Any], pair_aware: dict[str, Any]) -> tuple[dict[str, Any], str]:
        """``viddiff audit``: the scores (as each run's ``metrics`` JSON) of the single-video and the pair-aware run
        side by side, as ``(metrics.json payload, report.md text)``."""
        raise ViddiffError(f"{self.title} has no pairs to audit")
