"""View-models of the HTML report: everything a template shows, already computed.

Templates only place these values (beyond small layout offsets they compute nothing), so what a
page says can be tested on the models and on the parsed HTML alike. Text from a model or a dataset is kept raw here and
escaped by the template engine (autoescape), never pre-formatted into markup.
"""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

VerdictClass = Literal["a", "b", "similar", "invalid"]


class _View(BaseModel):
    model_config = ConfigDict(extra="forbid")


class VideoView(_View):
    """One of the two videos as the method read it."""

    label: Literal["A", "B"]
    path: str
    name: str
    src: Optional[str] = None
    """URL for ``<video>``: a path relative to the report, or a data URL; ``None`` when not playable."""
    embedded: bool = False
    offset_s: float = 0.0
    """Start of the clip inside the file (trim start): added to clip times when seeking the file."""
    duration_s: Optional[float] = None
    fps_original: Optional[float] = None
    fps_used: Optional[float] = None
    stride: Optional[int] = None
    n_frames: Optional[int] = None
    frame_size: Optional[str] = None
    trim: Optional[str] = None
    note: Optional[str] = None
    """Why there is no player or no frames (image directory, unreadable at report time)."""
    views: Optional[str] = None
    """The other calibrated cameras' videos of the same take, for 3D pose evidence, and their calibration
    ("and 1 more view for 3D pose: side.mp4; cameras: Calib.qca.txt")."""


class AxisTick(_View):
    x: float
    label: str


class TimelineSegment(_View):
    stage: int
    name: str
    x: float
    width: float
    colour: str
    start_s: float
    end_s: float
    show_label: bool
    """Whether the name fits inside the bar (otherwise the legend names it)."""
    label: str


class TimelineMarker(_View):
    """Keyframes of one or more differences at the same time in one video."""

    x: float
    time_s: float
    numbers: list[int]
    label: str
    row: int = 0
    """Label row, counted away from the bar (labels that would overlap are staggered)."""
    href: str


class TimelineLink(_View):
    """Joins a difference's middle keyframe in A to the one in B: how the localizer aligned them."""

    x_a: float
    x_b: float
    number: int


class TimelineTrack(_View):
    label: Literal["A", "B"]
    y: float
    end_x: float
    duration_label: str
    segments: list[TimelineSegment]
    markers: list[TimelineMarker]


class LegendEntry(_View):
    name: str
    colour: str


class TimelineView(_View):
    """SVG geometry in user units (``width`` × ``height``): both videos on one scale of seconds."""

    label_row_height: float
    width: float
    height: float
    x0: float
    x1: float
    extent_s: float
    units_per_second: float
    bar_height: float
    axis_y: float
    ticks: list[AxisTick]
    tracks: list[TimelineTrack]
    links: list[TimelineLink]
    legend: list[LegendEntry]


class FrameView(_View):
    video: Literal["A", "B"]
    frame_index: int
    time_s: float
    skeleton: bool = False
    """The body pose measured at this frame is drawn on it."""
    src: Optional[str] = None
    """JPEG data URL (``None`` when the video could not be read at report time)."""
    width: int = 0
    height: int = 0
    """Display size in CSS pixels (the long side is at least ``MIN_LONG_SIDE``)."""


class Skeleton3DView(_View):
    """Both performances' measured 3D poses at one keyframe, each in its body's own frame (metres, origin between
    the hips, y up, z forwards): what the report's script draws and turns (:mod:`viddiff.report.skeleton3d`)."""

    a: list[Optional[tuple[float, float, float]]]
    b: list[Optional[tuple[float, float, float]]]
    """A point per joint of ``joints`` (``None``: not triangulated)."""
    joints: list[str]
    bones: list[tuple[int, int]]
    """Joint index pairs drawn as segments."""
    radius: float
    """Metres from the origin that the drawing must show (every point, however it is turned)."""
    label: str
    """When each pose was taken ("A at 1.20 s, B at 1.45 s")."""


class KeyframeRow(_View):
    """The i-th keyframe of A beside the i-th of B (the localizer picks them at aligned moments)."""

    position: int
    a: Optional[FrameView] = None
    b: Optional[FrameView] = None
    seek_a: Optional[float] = None
    seek_b: Optional[float] = None
    """File times (seconds) the seek button sends each player to."""
    skeleton3d: Optional[Skeleton3DView] = None
    """Both 3D poses at these keyframes, where the difference's evidence is 3D (two calibrated views per side)."""


class StageChip(_View):
    name: str
    colour: str


class GroundTruthView(_View):
    """Benchmark runs: what the annotators said, and whether the verdict agrees."""

    answer: str
    correct: Optional[bool]
    """``None`` when not scored (ground truth ``c`` or unlabelled)."""
    outcome: str
    detail: str = ""


class PlotLine(_View):
    """One video's curve: SVG polyline point lists, split where the curve has gaps."""

    video: Literal["A", "B"]
    segments: list[str]


class PlotMarker(_View):
    """The quantity at one keyframe (its value is in the tooltip: labels there would crowd the statistic's)."""

    video: Literal["A", "B"]
    x: float
    y: float
    label: str


class PlotReading(_View):
    """The quoted statistic of one video where it was read: a point (an extreme, a start, an end) or a level across
    the window (a mean), with its interval as an error bar, and its label placed clear of the other video's."""

    video: Literal["A", "B"]
    x0: float
    x1: float
    """The same for a point; the window's ends for a level."""
    y: float
    y_low: float
    y_high: float
    """The interval, drawn as an error bar (equal to ``y`` when the value has none)."""
    label: str
    label_x: float
    label_y: float
    anchor: Literal["start", "end"] = "start"


class PlotTick(_View):
    y: float
    label: str


class PlotStage(_View):
    x0: float
    x1: float
    name: str
    colour: str


class EvidencePlot(_View):
    """The measured series against stage-normalised time, A and B overlaid (SVG user units): the same values the
    statistic was read from, so the quoted value lies on its curve."""

    width: float
    height: float
    left: float
    right: float
    top: float
    bottom: float
    stages: list[PlotStage]
    ticks: list[PlotTick]
    lines: list[PlotLine]
    markers: list[PlotMarker]
    readings: list[PlotReading] = Field(default_factory=list)
    y_label: str = ""
    """What the vertical axis measures, with its unit ("knee angle (°)")."""
    x_label: str = ""
    highlight: Optional[PlotStage] = None
    """The stage the measurement summarises (``None``: the whole action)."""


class EvidenceView(_View):
    """A difference's body-pose measurement: the numbers with their intervals, or why there are none, and its plot."""

    label: str
    status: Literal["measured", "uncertain", "not_comparable", "absent"] = "measured"
    value_a: str = ""
    value_b: str = ""
    """Each value with its interval ("88.7 ±1.2°")."""
    reason: str = ""
    estimator: str = ""
    frames: str = ""
    """What the values rest on: frames and seconds in each video."""
    views: str = ""
    """Each camera's view of the body and who was measured, when known."""
    plot: Optional[EvidencePlot] = None

    @property
    def measured(self) -> bool:
        return self.status == "measured"


class DifferenceView(_View):
    number: int
    key: str
    anchor: str
    name: str
    statement: str
    category: Optional[str] = None
    verdict_class: VerdictClass
    verdict_text: str
    agreement: Optional[str] = None
    """The VLM's answer beside the measured one ("VLM: B · measured: same within ±6° — disagree")."""
    disagree: bool = False
    rationale: str
    stages: list[StageChip] = Field(default_factory=list)
    scope_note: Optional[str] = None
    rows: list[KeyframeRow] = Field(default_factory=list)
    ground_truth: list[GroundTruthView] = Field(default_factory=list)
    evidence: Optional[EvidenceView] = None


class MissedTruth(_View):
    """Open mode: a ground-truth difference no prediction was credited for."""

    name: str
    statement: str
    answer: str
    outcome: str


class ModelEntry(_View):
    role: str
    model: str
    where: str


class CostView(_View):
    calls: int
    cache_hits: int
    images: int
    prompt_tokens: int
    completion_tokens: int
    cost: str


class StandInView(_View):
    component: str
    reason: str


class SampleInfo(_View):
    """Benchmark runs: which row this page shows and how it scored."""

    sample_key: str
    split: str
    domain: str
    action_id: str
    score: Optional[str] = None


class CheckView(_View):
    """One check a single-video task's answer was scored on (a constraint, a question)."""

    label: str
    passed: Optional[bool]
    """``None``: not scored."""
    detail: str = ""


class TaskView(_View):
    """Single-video tasks (``caption``, ``qa``): what the model was asked, what it answered, how it scored."""

    prompt: str
    system_prompt: Optional[str] = None
    response: Optional[str] = None
    checks: list[CheckView] = Field(default_factory=list)


class NavLink(_View):
    href: str
    label: str


class ReportPage(_View):
    """One comparison: the page ``viddiff compare --report`` writes, and each sample page of a run."""

    title: str
    action: str
    mode: str
    videos: list[VideoView]
    any_player: bool
    timeline: Optional[TimelineView] = None
    differences: list[DifferenceView]
    missed: list[MissedTruth] = Field(default_factory=list)
    description: Optional[str] = None
    task: Optional[TaskView] = None
    models: list[ModelEntry]
    cost: CostView
    stand_ins: list[StandInView] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    sample: Optional[SampleInfo] = None
    nav: list[NavLink] = Field(default_factory=list)
    version: str


class MetricRow(_View):
    cells: list[str]


class MetricTable(_View):
    title: str
    header: list[str]
    rows: list[MetricRow]


class IndexEntry(_View):
    href: Optional[str]
    sample_key: str
    split: str
    action: str
    n_differences: int
    score: str
    failed: Optional[str] = None


class TaskVideo(_View):
    """One video of a single-video task group (a benchmark pair's two videos, say)."""

    label: str
    """``Video 1``, ``Video 2``, ..."""
    role: Optional[str] = None
    path: str
    name: str
    src: Optional[str] = None
    embedded: bool = False
    note: Optional[str] = None


class TaskCell(_View):
    """The answer about one video to one question, and how it was scored."""

    sample_key: str
    answer: Optional[str]
    reading: Optional[str] = None
    expected: Optional[str] = None
    outcome: str = ""
    correct: Optional[bool] = None
    failed: Optional[str] = None
    pair_aware: bool = False
    """The other video of the pair was shown too when this was answered."""


class TaskRow(_View):
    kind: str
    """The sample's split (a question type, say)."""
    question: str
    cells: list[Optional[TaskCell]]
    """One per video of the page, in the page's order (``None``: not asked about that video)."""


class TaskPage(_View):
    """Single-video tasks (``caption``, ``qa``) of one group (a pair): its videos, and every question with the
    answer about each video."""

    title: str
    mode: str
    videos: list[TaskVideo]
    rows: list[TaskRow]
    models: list[ModelEntry]
    cost: CostView
    stand_ins: list[StandInView] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    nav: list[NavLink] = Field(default_factory=list)
    version: str


class IndexPage(_View):
    """The run's front page: metrics and one line per sample."""

    title: str
    headline: str
    tables: list[MetricTable]
    samples: list[IndexEntry]
    sample_heading: list[str] = Field(default_factory=lambda: ["sample", "split", "action", "differences", "score"])
    """Column titles of the samples table (a task run lists groups of questions)."""
    models: list[ModelEntry]
    cost: CostView
    stand_ins: list[StandInView] = Field(default_factory=list)
    dataset: str
    version: str
