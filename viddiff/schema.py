"""Data model shared by every stage.

Stages exchange these pydantic models, never loose dicts, so a boundary
violation fails loudly where it happens instead of three stages later.

Frame-index convention (used everywhere): a *frame index* is the index of a
frame in the source video at its original frame rate, counted from the start
of the file (trims do not renumber frames). Times in seconds are measured
from the start of the trimmed clip, which is what a user watching the clip
sees.
"""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

Letter = Literal["a", "b", "c"]
NumFrames = Literal["1", "gt_1"]
Mode = Literal["closed", "open", "describe", "caption", "qa"]
"""What a sample asks of a method. On a pair: ``closed``/``open`` (VidDiffBench), ``describe`` (a free-text
account of similarities and differences, description benchmarks). On one video (``Sample.task``):
``caption`` (describe it under an instruction) and ``qa`` (answer a question about it)."""
PAIR_MODES: tuple[Mode, ...] = ("closed", "open", "describe")
VIDEO_TASK_MODES: tuple[Mode, ...] = ("caption", "qa")
SPLITS = ("easy", "medium", "hard")

# The seven dimensions of describe mode, in report order. Describe mode (``viddiff compare --describe``, and description
# benchmarks) proposes differences along them, renders its verdicts grouped by them, and the LMM baseline's
# describe prompt lists them. They follow the taxonomy of video difference captioning checklists; a benchmark
# plug-in maps its own category spellings onto these keys.
DimensionKey = Literal["subject", "style", "background", "camera", "motion", "position", "playback"]

DIMENSION_NAMES: dict[str, str] = {
    "subject": "subject",
    "style": "style",
    "background": "background",
    "camera": "camera",
    "motion": "motion",
    "position": "position",
    "playback": "playback technique",
}
"""Display names of the keys, in report order."""

DIMENSIONS: tuple[str, ...] = tuple(DIMENSION_NAMES)
"""The keys, in report order."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class VideoRef(_Model):
    """Where one video of a pair lives and which part of it counts."""

    path: str
    fps_original: Optional[float] = Field(default=None, gt=0)
    frames_trim: Optional[tuple[Optional[int], Optional[int]]] = None
    """``[start, end)`` in frame indices, Python slice semantics (``None`` = open)."""
    views: tuple["VideoRef", ...] = Field(default=(), exclude_if=lambda views: not views)
    """More videos of the same take from other calibrated cameras, for the pose wing's 3D evidence only;
    the method's own frames (CLIP, VLM) come from ``path``."""
    calibration: Optional[str] = Field(default=None, exclude_if=lambda calibration: calibration is None)
    """The cameras of ``path`` then ``views``, in that order: a Pose2Sim TOML, a Qualisys .qca.txt, or the
    TOML ``viddiff calibrate`` writes (same format as Pose2Sim's).

    Both are left out of the serialised form when unset, so a one-view reference serialises with exactly the
    keys it always had: stored results, cache keys and hashes of one-view comparisons do not change."""

    @model_validator(mode="after")
    def _views_need_their_cameras(self) -> "VideoRef":
        if self.views and self.calibration is None:
            raise ValueError(
                f"{len(self.views)} more view(s) of {self.path} but no calibration: the 3D evidence needs the "
                "cameras of every view (a Pose2Sim TOML or a .qca.txt)"
            )
        if self.calibration is not None and not self.views:
            raise ValueError(f"a calibration for {self.path} alone: give the other cameras' videos as its views")
        if any(view.views or view.calibration is not None for view in self.views):
            raise ValueError(f"a view of {self.path} has views or a calibration of its own: list every view once")
        return self


class Difference(_Model):
    """A candidate difference statement, annotated or proposed."""

    key: str
    name: str
    description: str
    query_string: Optional[str] = None
    num_frames: NumFrames = "1"
    category: Optional[str] = None
    """Describe-mode dimension (``viddiff.schema.DIMENSIONS``: subject, style, ... playback), when asked for."""
    scope: Literal["local", "global"] = "local"
    """``global``: visible over the whole video (camera, style, ...): keyframes span the video, no stage lookup."""
    contrast: Optional[str] = None
    """``describe`` mode: the same aspect as it would be said of the other video (the description's opposite),
    so a verdict renders as "In Video A <description>; in Video B <contrast>"."""


class StageBoundaries(_Model):
    """Ground-truth stage starts (frame indices) for one video, in stage order."""

    starts: list[int]
    end: int
    """Exclusive end frame of the last stage."""


class RetrievalFrames(_Model):
    """Ground-truth localisation annotations for a sample (optional in datasets)."""

    stages: Optional[tuple[StageBoundaries, StageBoundaries]] = None
    """Per video (A, B): where each ground-truth sub-action stage starts."""
    keyframes: dict[str, tuple[list[int], list[int]]] = Field(default_factory=dict)
    """Per difference key: frame indices in A and in B where it is visible."""


class VideoTask(_Model):
    """What a single-video task asks (``caption`` and ``qa`` modes): the benchmark's words, sent as they are."""

    prompt: str = Field(min_length=1)
    """The instruction or question exactly as the model is to read it (a benchmark formats its options into it)."""
    system_prompt: Optional[str] = None
    """The benchmark's own system prompt, where its protocol has one; ``None`` sends no system message."""
    fps: Optional[float] = Field(default=None, gt=0)
    """The frame rate the benchmark's protocol shows the video at (its prompt may state it); ``None`` = the
    method's own. A method's explicit per-domain setting (``baseline.fps_by_domain``) still wins."""
    video: int = Field(default=0, ge=0, le=1)
    """Which of ``Sample.videos`` the task is about. A second video, when a sample has one, is the other video of
    a benchmark pair: a method shows it only when asked to answer pair-aware."""
    pair_aware: bool = False
    """Ask pair-aware: show the other video of the sample too, labelled as the other video of the pair, while the
    prompt stays about ``video``."""


class Sample(_Model):
    """One benchmark row: a video pair, its action, and annotated differences; or, with ``task``, one video and
    what to say about it (the pair then holds the task's video and, optionally, its benchmark partner)."""

    sample_key: str
    action: str
    action_name: str
    action_description: str
    split: str
    domain: str
    source_dataset: str = ""
    videos: tuple[VideoRef, ...] = Field(min_length=1, max_length=2)
    """A and B; one video for a single-video task."""
    differences: dict[str, Difference] = Field(default_factory=dict)
    labels: dict[str, Optional[Letter]] = Field(default_factory=dict)
    """Ground truth per difference key; ``None`` = not labelled."""
    n_differences_open: int = Field(default=0, ge=0)
    retrieval_frames: Optional[RetrievalFrames] = None
    sample_hash: Optional[int] = None
    """The row's ``sample_hash`` (first public revision): the per-sample proposer seed offset."""
    task: Optional[VideoTask] = None
    """Single-video tasks only: the instruction or question (``caption`` / ``qa`` modes)."""

    @model_validator(mode="after")
    def _labels_match_differences(self) -> "Sample":
        unknown = sorted(set(self.labels) - set(self.differences))
        if unknown:
            raise ValueError(f"labels for unknown difference keys {unknown}")
        return self

    @model_validator(mode="after")
    def _a_pair_unless_a_task(self) -> "Sample":
        if self.task is None and len(self.videos) != 2:
            raise ValueError(f"a sample without a task compares two videos, got {len(self.videos)}")
        if self.task is not None and self.task.video >= len(self.videos):
            raise ValueError(f"task.video is {self.task.video} but the sample has {len(self.videos)} video(s)")
        if self.task is not None and self.task.pair_aware and len(self.videos) != 2:
            raise ValueError("a pair-aware task needs the other video of its pair as the sample's second video")
        return self

    def closed_differences(self) -> list[Difference]:
        """The closed-mode task input: differences labelled ``a`` or ``b`` (labels not revealed)."""
        return [self.differences[k] for k in sorted(self.differences, key=_key_order) if self.labels.get(k) in ("a", "b")]


def _key_order(key: str) -> tuple[int, str]:
    return (int(key), key) if key.isdigit() else (10**9, key)


class Stage(_Model):
    """A sub-action stage with the CLIP retrieval strings that describe it."""

    name: str
    description: str = ""
    retrieval_strings: list[str] = Field(min_length=1)


class Proposal(_Model):
    """Output of the proposer: what to check and where in the action to look."""

    differences: list[Difference]
    stages: list[Stage] = Field(min_length=1)
    links: dict[str, list[int]]
    """Difference key -> indices into ``stages`` where the difference is visible."""
    notes: list[str] = Field(default_factory=list)
    """Repairs and fallbacks applied to the LLM's answers (fuzzy matches, default links)."""

    @model_validator(mode="after")
    def _links_valid(self) -> "Proposal":
        keys = {d.key for d in self.differences}
        if len(keys) != len(self.differences):
            raise ValueError("duplicate difference keys in proposal")
        for key, idx in self.links.items():
            if key not in keys:
                raise ValueError(f"link for unknown difference key {key!r}")
            if not idx or any(i < 0 or i >= len(self.stages) for i in idx):
                raise ValueError(f"difference {key!r} links to invalid stages {idx}")
        missing = keys - set(self.links)
        if missing:
            raise ValueError(f"differences without stage links: {sorted(missing)}")
        return self


class Segmentation(_Model):
    """Where each stage lies in one video's sampled frames.

    Spans are ``[start, end)`` positions in the sampled sequence. Viterbi spans
    tile the video in order; ablations (``argmax``, ``random``) may overlap.
    """

    frame_indices: list[int]
    """Frame index of each sampled frame."""
    spans: list[tuple[int, int]]


class VideoKeyframes(_Model):
    frame_indices: list[int]
    times_s: list[float]


class Keyframes(_Model):
    """Frames chosen for one difference in both videos."""

    key: str
    a: VideoKeyframes
    b: VideoKeyframes


AgreementOutcome = Literal["agree", "disagree", "undecided", "measured only"]
"""``undecided``: the measurement supports no verdict (uncertain, not comparable); ``measured only``: no VLM answer."""


class Agreement(_Model):
    """The VLM's answer beside the verdict its difference's own measurement supports: the one headline every
    face shows (:func:`viddiff.pose.agreement.agreement`; docs/pose.md, "One headline")."""

    vlm: Optional[Letter] = None
    """The VLM's answer (``None``: no valid answer, or no VLM, as in the ``pose`` method)."""
    measured: Optional[Letter] = None
    """What the measurement supports (``c``: within noise or below the smallest meaningful difference);
    ``None`` where it supports nothing (uncertain, not comparable)."""
    measured_words: str
    """The measured reading in a few words: "B (13° apart, beyond ±5.1°)", "same within ±6°", "not compared"."""
    measured_reason: str = ""
    """The measured reading in full (the ``pose`` method's rationale)."""
    outcome: AgreementOutcome
    decided_by: Literal["vlm", "measurement"]
    """Whose answer is the ``prediction`` (``differencer.evidence``)."""
    headline: str
    """"VLM: B · measured: same within ±6° — disagree"."""


class Prediction(_Model):
    """The differencer's verdict on one difference."""

    key: str
    description: str
    prediction: Optional[Letter]
    """``None`` when the model never gave a valid answer (counted wrong, never guessed)."""
    rationale: str = ""
    raw_answers: list[str] = Field(default_factory=list)
    votes: list[Letter] = Field(default_factory=list)
    agreement: Optional[Agreement] = None
    """Where the difference has body-pose evidence: the VLM's answer beside the measured one (and which
    decided ``prediction``). ``None`` without evidence."""


PoseQuantity = Literal[
    "knee_angle", "hip_angle", "elbow_angle", "shoulder_angle", "ankle_angle", "trunk_lean", "stance_width",
    "grip_width", "wrist_height", "hip_height", "speed", "duration",
]
"""What a pose measurement measures (the closed vocabulary of :mod:`viddiff.pose.vocabulary`)."""
PoseSide = Literal["left", "right", "both", "none"]
"""``both``: the mean of the left and right values; ``none``: the quantity has no side (trunk lean, widths, duration)."""
PoseStatistic = Literal["mean", "min", "max", "range", "start", "end"]
"""Summary of the quantity over the stage (``start``/``end``: its value as the stage begins/ends)."""
PoseBodyPart = Literal["wrist", "elbow", "shoulder", "hip", "knee", "ankle", "head"]
"""The keypoint whose ``speed`` is measured."""


class MeasurementSpec(_Model):
    """One measurement from the closed vocabulary, and which way of it makes a difference statement true."""

    quantity: PoseQuantity
    side: PoseSide = "none"
    body_part: Optional[PoseBodyPart] = None
    """``speed`` only: the keypoint that moves."""
    statistic: PoseStatistic = "mean"
    """Ignored for ``duration`` (a stage lasts as long as it lasts)."""
    stage: Optional[int] = None
    """Index into the proposal's stages; ``None`` = the whole action."""
    direction: Literal["greater", "smaller"]
    """The statement is more true of the video whose value is greater (or smaller)."""


ViewLabel = Literal["front", "back", "side", "oblique", "unknown"]
EvidenceStatus = Literal["measured", "uncertain", "not_comparable"]
"""``measured``: both values, with intervals; ``uncertain``: too little to go on, no number; ``not_comparable``: each
video measured, but the comparison means nothing (different camera views), so no verdict."""


class CameraView(_Model):
    """Where the camera stands relative to the measured body, over the frames a measurement rests on.

    2D joint angles of one movement differ between camera views by more than any difference a coach cares
    about, so a body-angle comparison is only made between videos whose views agree (docs/pose.md).
    """

    label: ViewLabel
    """``front`` (the person faces the camera), ``back``, ``side`` or ``oblique``; ``unknown`` when too few
    frames show the torso."""
    yaw_deg: Optional[float] = None
    """The body's yaw relative to the camera, in degrees in (-180, 180]: 0 = facing the camera, +90 = the
    person's left side towards the camera, -90 = their right side, 180 = back to the camera. ``None`` when
    unknown. The front/back ambiguity of 2D geometry is resolved from the face keypoints where possible."""
    spread_deg: Optional[float] = None
    """How much the yaw varies over the frames (a turning person): half the interquartile range, degrees."""
    frames: int = 0
    """Frames the estimate rests on."""
    method: str = ""
    """How it was estimated, e.g. "3D world landmarks" or "2D torso geometry"."""
    roll_deg: Optional[float] = None
    """The body's up direction in the picture over the clip, degrees clockwise from the picture's up (0 upright,
    90 lying with the head towards the right, 180 upside down), after ``turned_deg``; ``None`` when unknown."""
    turned_deg: int = 0
    """Quarter turns (counter-clockwise, degrees) the keypoints were turned by before measuring, because the
    picture was turned relative to the other video's (a phone held sideways or upside down without a rotation tag)."""


class SubjectInfo(_Model):
    """Who was measured in a video: how many people were seen, which one was chosen, and how well they were followed."""

    people_max: int = 0
    """The most people seen in any one sampled frame (0: nobody was found)."""
    frames_with_others: int = 0
    """Sampled frames in which someone besides the measured person was seen."""
    rule: str = ""
    """How the measured person was chosen, in words (the documented rule, or the ``pose.subject`` override)."""
    position: Optional[tuple[float, float]] = None
    """The measured person's median hip centre as fractions of the frame's width and height (to mark them)."""
    identity_gaps: int = 0
    """Sampled frames left as gaps because the measured person could not be told apart from someone else."""
    dropped: dict[str, int] = Field(default_factory=dict)
    """Sampled frames without the measured person, by reason (the keys of :data:`viddiff.pose.absence.REASONS`:
    before they were first found, after they were last found, nobody found, ...)."""
    side_unresolved: int = 0
    """Sampled frames whose left/right labels could not be settled (gaps for one-side quantities)."""
    runner_up: Optional[float] = None
    """The next person's score by the rule as a share of the measured person's (1 = a tie; at 0.8 or more the
    choice is close and is said with a warning); ``None`` when nobody else was a candidate."""


class EvidencePoint(_Model):
    """The measured quantity at one keyframe, and the body pose there (for drawing the skeleton)."""

    frame_index: int
    """The keyframe's source frame index."""
    time_s: float
    stage_time: Optional[float] = None
    """Stage-normalised time: stage ``k`` spans ``[k, k + 1]``; ``None`` outside every stage."""
    value: Optional[float] = None
    pose_frame_index: Optional[int] = None
    """The frame the pose was estimated on nearest to the keyframe (``None``: none near it)."""
    keypoints: list[Optional[tuple[float, float, float]]] = Field(default_factory=list)
    """``(x, y, confidence)`` per joint of :data:`viddiff.pose.skeleton.JOINTS`, x and y as fractions of the
    upright frame's width and height (so they fit the frame at any size); ``None`` where a joint was not found."""
    skeleton: Optional["Skeleton3D"] = Field(default=None, exclude_if=lambda skeleton: skeleton is None)
    """The body in 3D there, for a performance filmed from calibrated views (the report draws it); left out of the
    serialised form when unset, so one-view evidence serialises as before."""


class Skeleton3D(_Model):
    """A performance filmed from two or more calibrated views: its body in 3D at one instant (a keyframe), for
    the report's 3D skeleton view (:meth:`viddiff.pose.multiview.PerformancePose.skeleton`)."""

    frame_index: int
    """The main video's source frame index of the pose sample nearest the instant."""
    time_s: float
    """That sample's time on the main video's clock."""
    points: list[Optional[tuple[float, float, float]]] = Field(default_factory=list)
    """``(x, y, z)`` per joint of :data:`viddiff.pose.skeleton.JOINTS`, metres, centred on the hips' midpoint, with y
    up (the world's up: OpenSim's convention) and x, z horizontal; ``None`` where the joint was not triangulated."""


class EvidenceCurve(_Model):
    """The series the statistic was computed from, against stage-normalised time (stage ``k`` spans
    ``[k, k + 1]``): each video's own pose frames, so the quoted value lies on its curve."""

    stage_time_a: list[float] = Field(default_factory=list)
    a: list[Optional[float]] = Field(default_factory=list)
    stage_time_b: list[float] = Field(default_factory=list)
    b: list[Optional[float]] = Field(default_factory=list)
    """``None`` where the video has no confident value (a gap)."""


class EvidenceInterval(_Model):
    """How far a measured value can be trusted: ``value ± half_width``, what that is made of, and what it rests on.

    Each part is a ± half-width in the value's unit; they are independent, so ``half_width`` is their root sum of
    squares (docs/pose.md, "Uncertainty")."""

    half_width: float
    frame_noise: float = 0.0
    """Frame-to-frame jitter of the series, as it reaches this statistic."""
    sampling: float = 0.0
    """Where the sampled frames may miss the true extreme (or a duration's end) between two frames."""
    boundaries: float = 0.0
    """How much the value moves when a stage boundary moves back by one segmentation step (the change of stage
    happened somewhere after the frame before the first frame labelled with the stage)."""
    noise_floor: float = 0.0
    """The estimator's noise floor for the quantity (``pose.noise_floors``, measured on real video)."""
    view: float = 0.0
    """How far the value seen in the picture may lie from the body's own, from this camera's view (``pose.view_errors``,
    calibrated against 3D truth); 0 when the camera faces the quantity's plane of motion. For a value triangulated
    from calibrated views (``in_picture`` false): its triangulation and calibration part."""
    in_picture: bool = False
    """The value is the quantity as seen in the picture from this camera's view, not the body's own (the camera does
    not face its plane of motion within ``pose.plane_tolerance_deg``); the view part widens the interval to cover
    the body's value."""
    frames: int = 0
    """Pose frames with a value inside the window."""
    seconds: float = 0.0
    """Time those frames cover (each frame counts until halfway to its neighbours)."""
    at_s: Optional[float] = None
    """When the value was read: the time of an extreme, a start or an end (``None``: a mean, a range, a duration)."""
    at_stage_time: Optional[float] = None
    """The same instant in stage-normalised time (where the report marks it on the curve)."""


class Evidence(_Model):
    """A difference's measurement: values in A and B with their intervals, or, when they cannot be trusted or
    compared, why not (never a guess)."""

    key: str
    """The difference it measures."""
    measurement: MeasurementSpec
    label: str
    """The measurement in words, e.g. "minimum left knee angle during 'descent'"."""
    unit: str
    status: EvidenceStatus
    value_a: Optional[float] = None
    value_b: Optional[float] = None
    """Both set when ``measured``; both or neither when ``not_comparable``; neither when ``uncertain``."""
    interval_a: Optional[EvidenceInterval] = None
    interval_b: Optional[EvidenceInterval] = None
    """Each value's interval, with the frames and seconds it rests on (set with the values)."""
    reason: str = ""
    """Why a measurement is uncertain (occlusion, side view, too few frames, no pose found) or not comparable
    (the two cameras see the body from different sides)."""
    stage: Optional[str] = None
    """The stage's name (``None``: the whole action)."""
    frames_a: list[int] = Field(default_factory=list)
    frames_b: list[int] = Field(default_factory=list)
    """Source frame indices whose values entered the statistic."""
    estimator: Optional[str] = None
    """The pose estimator and its settings (``None`` for stage durations, which need no pose)."""
    curve: Optional[EvidenceCurve] = None
    keyframes_a: list[EvidencePoint] = Field(default_factory=list)
    keyframes_b: list[EvidencePoint] = Field(default_factory=list)
    view_a: Optional[CameraView] = None
    view_b: Optional[CameraView] = None
    """Each video's camera view relative to the body over the measured frames (``None`` for durations)."""
    subject_a: Optional[SubjectInfo] = None
    subject_b: Optional[SubjectInfo] = None
    """Who was measured in each video, and how many people were seen (``None`` for durations)."""
    view_difference: float = 0.0
    """How far B − A seen in the two pictures may lie from the body's B − A when either value is only the picture's
    (``pose.view_difference_errors``, calibrated against 3D truth), or between two 3D performances, how far the
    triangulated B − A may lie from it (:mod:`viddiff.pose.difference3d`): part of the uncertainty a verdict
    weighs, beside both intervals without their view parts (docs/pose.md "Accuracy", "Two phones (3D)")."""

    @model_validator(mode="after")
    def _numbers_only_when_measured(self) -> "Evidence":
        has_a, has_b = self.value_a is not None, self.value_b is not None
        if has_a != has_b:
            raise ValueError("an evidence has both values or neither")
        if self.status == "measured" and not has_a:
            raise ValueError("a measured evidence has both values")
        if self.status == "uncertain" and has_a:
            raise ValueError("an uncertain evidence has no values")
        return self


class StageUsage(_Model):
    """Model-call accounting for one stage."""

    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    images: int = 0
    cost_usd: Optional[float] = 0.0
    """``None`` once any call used a model missing from the price table."""
    estimated_calls: int = 0
    """Calls whose server reported no token usage: their tokens are estimated from the request and the answer
    (``viddiff.backends.tokens``)."""

    def add(self, other: "StageUsage") -> "StageUsage":
        cost = None if self.cost_usd is None or other.cost_usd is None else self.cost_usd + other.cost_usd
        return StageUsage(
            calls=self.calls + other.calls,
            cache_hits=self.cache_hits + other.cache_hits,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            images=self.images + other.images,
            cost_usd=cost,
            estimated_calls=self.estimated_calls + other.estimated_calls,
        )


class SampleResult(_Model):
    """Everything the method produced for one sample: one line of ``samples.jsonl``."""

    sample_key: str
    index: int
    """Position of the sample in the dataset order (predictions.json is aligned to it)."""
    mode: Mode
    method: str = "viddiff"
    proposal: Optional[Proposal] = None
    """The proposer's output (``None`` for methods without one, e.g. LMM baselines)."""
    segmentations: Optional[tuple[Segmentation, Segmentation]] = None
    keyframes: list[Keyframes] = Field(default_factory=list)
    predictions: list[Prediction] = Field(default_factory=list)
    usage: dict[str, StageUsage] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)
    """Repairs, fallbacks and effective settings worth knowing when reading results."""
    description: Optional[str] = None
    """``describe`` mode: the text describing the pair's similarities and differences."""
    response: Optional[str] = None
    """``caption`` and ``qa`` modes: the method's answer, as it gave it (the benchmark reads and scores it)."""
    evidence: list[Evidence] = Field(default_factory=list)
    """Body-pose measurements, one per difference a measurement fits (``pose.evidence``, the ``pose`` method)."""
    evidence_absent: dict[str, str] = Field(default_factory=dict)
    """Difference key → why it has no body-pose measurement although one was asked for (no measurement fits the
    statement; the mapping call failed), so every statement gets a line."""

    @field_validator("predictions")
    @classmethod
    def _unique_keys(cls, value: list[Prediction]) -> list[Prediction]:
        keys = [p.key for p in value]
        if len(keys) != len(set(keys)):
            raise ValueError("duplicate prediction keys")
        return value
