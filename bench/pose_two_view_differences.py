"""Known differences and identical movement from two calibrated phones (3D), through the evidence the product
shows: ``bench/pose_accuracy.py --two-view`` (issue 40 item 2, for the two-view path of issue 41).

Each side of a comparison is a performance filmed by one pair of the Pose2Sim demo's four cameras: a
:class:`~viddiff.schema.VideoRef` with the pair's second camera as its view, a calibration file of exactly
those two cameras (written from ``Calib.qca.txt``), and a ``frames_trim`` for the part of the take it holds.
Its pose comes from the product's own path (:class:`viddiff.methods.evidence.PoseEvidence`: frames read at
``pose.fps`` and ``pose.max_side``, BlazePose per view, synchronisation from the motion, triangulation), and its
evidence from :meth:`PoseEvidence.measure` on a one-stage segmentation of each clip (statements on the whole
clip); the verdict is the measured answer of :func:`viddiff.pose.agreement.agreement`, what ``compare --pose``
prints after "measured:" and what the ``pose`` method answers. Only the mapping call is skipped: every
quantity × side × statistic is asked, with "greater" as its direction.

Truth: the 4-view triangulation of the whole single take (the videos are synchronised: offsets given as 0) with
its statistic read over the same part of the take. Its noise is the largest change when one camera is left
out. It is *not independent*: the same BlazePose keypoints and the same triangulation code (``bench/pose_3d.py``
measures it against Pose2Sim's own triangulator: 3–5° apart at the median, p95 9–33°), and a pair's two views are
half of its four; no marker data ships with the demo.

Comparisons:

* known differences: the first half against the second, and the thirds against each other, of the same take,
  both sides filmed by the same pair (every pair; A = the earlier part);
* identical movement: the same part of the take (whole, halves, thirds) filmed by two *different* pairs (A and
  B both ways round), and the same pair and part of the single take against the two-person take (the same
  movement, re-encoded, a second person composited in);
* the same two videos with the other one as the main view (identical input: what changes is the triangulation's).

The triangulation part of a difference (:mod:`viddiff.pose.difference3d`) is calibrated here, on the single
take's known differences and identical movement from different pairs (views aligned as given); the table also
scores it held out by camera. Every statement is pickled to ``--work``/``two-view-statements.pkl``.

Each comparison runs twice: with the product's synchronisation from the motion (a side it refuses is "not
measured", as ``compare`` would print it), and with the known offsets given (what the evidence does once the
views are aligned).
"""

from __future__ import annotations

import asyncio
import itertools
import math
import pickle
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Union

import numpy as np

from viddiff.cache import Cache
from viddiff.config import Config
from viddiff.localizer.localize import Localization
from viddiff.methods.evidence import PoseEvidence, Prepared
from viddiff.pose.agreement import agreement
from viddiff.pose.calibration import Camera, read_qca
from viddiff.pose.difference3d import TRIANGULATION_DIFFERENCE_ERRORS
from viddiff.pose.measure import Settings, VideoMeasures, comparison_widths, measure
from viddiff.pose.multiview import PerformancePose, estimate_performance, triangulate_performance
from viddiff.pose.setup import write_toml
from viddiff.pose.sync import SyncError, SyncInfo
from viddiff.schema import Difference, Evidence, MeasurementSpec, Proposal, Sample, Segmentation, Stage, VideoRef

from pose_statements import QUANTITY_SIDES, STATISTICS, is_clear, unit_kind  # noqa: E402 (bench/)

TAKES = {"single": "Pose2Sim/Demo_SinglePerson", "two-person": "Pose2Sim/Demo_MultiPerson"}
CAMERAS = ("cam01", "cam02", "cam03", "cam04")
PAIRS = list(itertools.combinations(CAMERAS, 2))
FRAMES = 100
WINDOWS = {"whole": (0, 100), "half 1": (0, 50), "half 2": (50, 100), "third 1": (0, 33), "third 2": (33, 66),
           "third 3": (66, 100)}
KNOWN = [("half 1", "half 2"), ("third 1", "third 2"), ("third 1", "third 3"), ("third 2", "third 3")]
SYNCS = ("motion", "given")
VERDICTS = ("hit", "reversed", "same", "not comparable", "uncertain", "not measured")
TARGET = 0.985
"""The share of |measured B − A − true B − A| the triangulation part of a difference is calibrated to cover."""

Side = Union[PerformancePose, str]
"""A performance, or why the product measured none (a refused synchronisation)."""


def specs() -> list[MeasurementSpec]:
    return [MeasurementSpec(quantity=q, side=side, statistic=stat, direction="greater")
            for q, sides in QUANTITY_SIDES.items() for side in sides for stat in STATISTICS]


def spec_key(spec: MeasurementSpec) -> str:
    return f"{spec.quantity}/{spec.side}/{spec.statistic}"


# --------------------------------------------------------------------------- the performances


@dataclass
class Setup:
    clips: Path
    work: Path
    config: Config
    evidence: PoseEvidence
    cameras: dict[str, Camera]

    def calibration(self, pair: tuple[str, str]) -> Path:
        """A calibration file of exactly the pair's two cameras, main first (what a user with two phones has)."""
        path = self.work / f"{pair[0]}+{pair[1]}.toml"
        if not path.is_file():
            write_toml(path, [self.cameras[pair[0]], self.cameras[pair[1]]])
        return path

    def reference(self, take: str, pair: tuple[str, str], window: str) -> VideoRef:
        videos = self.clips / TAKES[take] / "videos"
        trim = WINDOWS[window]
        return VideoRef(path=str(videos / f"{pair[0]}.mp4"), frames_trim=trim, calibration=str(self.calibration(pair)),
                        views=(VideoRef(path=str(videos / f"{pair[1]}.mp4"), frames_trim=trim),))


def performances(setup: Setup, take: str, pair: tuple[str, str], window: str) -> dict[str, Side]:
    """The part ``window`` of ``take`` filmed by ``pair``: the product's pose (synchronised from the motion, or
    refused) and the same with the known offset (0) given."""
    ref = setup.reference(take, pair, window)
    sample = one_video_sample(ref)
    frames = asyncio.run(setup.evidence._pose_frames(sample))[0]
    estimator = setup.evidence.estimator()
    out: dict[str, Side] = {}
    try:
        out["motion"] = setup.evidence._side_pose(ref, frames, estimator, "video A")
    except SyncError as exc:
        out["motion"] = str(exc)
    cameras = [setup.cameras[name] for name in pair]
    out["given"] = estimate_performance(frames, cameras, estimator, setup.evidence.cache, setup.config.pose.subject,
                                        offsets=(0.0,))
    return out


def one_video_sample(a: VideoRef, b: Optional[VideoRef] = None) -> Sample:
    return Sample(sample_key="two-view", action="movement", action_name="movement", action_description="movement",
                  split="bench", domain="pose", videos=(a, b or a))


# --------------------------------------------------------------------------- the truth


@dataclass
class Truth:
    """The 4-view triangulation of the whole single take and its leave-one-camera-out versions."""

    all: PerformancePose
    without: list[PerformancePose]

    def statistic(self, spec: MeasurementSpec, window: str, settings: Settings) -> tuple[float, float]:
        """The body's statistic over ``window`` (seconds of the take) and its noise."""
        value = truth_value(self.all, spec, window, settings)
        others = [truth_value(p, spec, window, settings) for p in self.without]
        noise = max((abs(o - value) for o in others), default=float("nan"))
        return value, noise


def build_truth(tracks: list, cameras: list[Camera]) -> Truth:
    fitted = [c.fitted_to(t.width, t.height) for c, t in zip(cameras, tracks)]
    given = SyncInfo(offsets=())

    def tri(keep: list[int]) -> PerformancePose:
        return triangulate_performance([tracks[k] for k in keep], [fitted[k] for k in keep], given)

    return Truth(all=tri([0, 1, 2, 3]), without=[tri([k for k in range(4) if k != leave]) for leave in range(4)])


_TRUTH_MEMO: dict[tuple, float] = {}


def truth_value(performance: PerformancePose, spec: MeasurementSpec, window: str, settings: Settings) -> float:
    memo = (id(performance), spec_key(spec), window)
    if memo not in _TRUTH_MEMO:
        start, end = WINDOWS[window]
        step = float(np.median(np.diff(performance.times_s)))
        span = np.array([[start * step, end * step]])
        kin = kinematics_of(performance)
        video = VideoMeasures(windows=span, frame_indices=performance.frame_indices, times_s=performance.times_s,
                              kinematics=kin, frame_step_s=step, triangulation_errors={})
        ev = measure("truth", spec, video, video, ["whole"], estimator="truth", settings=settings)
        _TRUTH_MEMO[memo] = float("nan") if ev.value_a is None else float(ev.value_a)
    return _TRUTH_MEMO[memo]


_KINEMATICS: dict[int, object] = {}


def kinematics_of(performance: PerformancePose):
    if id(performance) not in _KINEMATICS:
        _KINEMATICS[id(performance)] = performance.kinematics()
    return _KINEMATICS[id(performance)]


# --------------------------------------------------------------------------- comparing through the product


@dataclass
class Statement:
    """One statement of one comparison: the product's evidence and verdict, and what the truth says."""

    kind: str
    """``known``, ``identical``, or ``swapped`` (identical: the same two videos, the other one as the main view)."""
    what: str
    """Which sides: "cam01+cam02: half 1 vs half 2", "half 1: cam01+cam02 vs cam03+cam04"."""
    pairs: tuple[str, str]
    sync: str
    spec: MeasurementSpec
    evidence: Optional[Evidence]
    letter: Optional[str]
    gap: float
    """B − A of the body's statistic (0 for identical movement)."""
    noise: float

    @property
    def clear(self) -> bool:
        return is_clear(self.gap, self.noise, self.spec.quantity)

    @property
    def verdict(self) -> str:
        return self.verdict_with(self.letter)

    def verdict_with(self, letter: Optional[str]) -> str:
        if self.evidence is None:
            return "not measured"
        if letter in ("a", "b"):
            if self.kind != "known":
                return "a/b"
            return "hit" if (letter == "b") == (self.gap > 0) else "reversed"
        if letter == "c":
            return "same"
        return "not comparable" if self.evidence.status == "not_comparable" else "uncertain"


def compare(setup: Setup, a: Side, b: Side) -> Union[list[Evidence], str]:
    """Every statement's evidence for A against B from :meth:`PoseEvidence.measure` (the product's code), or
    why there is none (a side whose views could not be aligned)."""
    for which, side in zip("AB", (a, b)):
        if isinstance(side, str):
            return f"the pose was not measured: video {which}'s views could not be aligned in time ({side})"
    all_specs = specs()
    keys = [spec_key(s) for s in all_specs]
    proposal = Proposal(differences=[Difference(key=k, name=k, description=k) for k in keys],
                        stages=[Stage(name="whole", retrieval_strings=["the movement"])], links={k: [0] for k in keys})
    videos = tuple(side_frames(side) for side in (a, b))
    localization = Localization(segmentations=tuple(
        Segmentation(frame_indices=[int(f) for f in side.frame_indices], spans=[(0, len(side.times_s))]) for side in (a, b)),
        keyframes=[])

    async def run() -> list[Evidence]:
        ready = asyncio.get_running_loop().create_future()
        ready.set_result(Prepared(specs=dict(zip(keys, all_specs)), tracks=(a, b)))
        found = await setup.evidence.measure(None, proposal, localization, videos, prepared=ready)
        return found.evidence

    return asyncio.run(run())


@dataclass(frozen=True)
class FrameTimes:
    """What :meth:`PoseEvidence.measure` reads of the frames a segmentation was made on (here the pose frames of
    the main view: the segmentation is one stage over the whole clip)."""

    times_s: np.ndarray
    frame_indices: np.ndarray
    fps_original: float
    duration_s: float


def side_frames(side: PerformancePose) -> FrameTimes:
    step = float(np.median(np.diff(side.times_s)))
    return FrameTimes(times_s=side.times_s, frame_indices=side.frame_indices, fps_original=1.0 / step,
                      duration_s=float(side.times_s[-1] + step))


def statements(setup: Setup, kind: str, what: str, pairs: tuple[str, str], sync: str, a: Side, b: Side,
               windows: tuple[str, str], truth: Truth) -> list[Statement]:
    found = compare(setup, a, b)
    settings = truth_settings(setup.config)
    margins = setup.config.pose.margins.model_dump()
    out = []
    for i, spec in enumerate(specs()):
        if kind == "known":
            (ta, na), (tb, nb) = (truth.statistic(spec, w, settings) for w in windows)
            gap, noise = tb - ta, math.hypot(na, nb)
        else:
            gap, noise = 0.0, 0.0
        if isinstance(found, str):
            out.append(Statement(kind, what, pairs, sync, spec, None, None, gap, noise))
            continue
        ev = found[i]
        letter = agreement(None, ev, margins, has_vlm=False).measured
        out.append(Statement(kind, what, pairs, sync, spec, ev, letter, gap, noise))
    return out


def truth_settings(config: Config) -> Settings:
    cfg = config.pose
    return Settings(min_coverage=cfg.min_coverage, min_frames=cfg.min_frames, min_seconds=cfg.min_seconds,
                    robust_window_s=cfg.robust_window_s, smoothing_frames=cfg.smoothing_frames,
                    noise_floors=cfg.noise_floors.model_dump(), alignment=cfg.alignment)


# --------------------------------------------------------------------------- output


def pct(k: int, n: int) -> str:
    return f"{k}/{n} ({100 * k / n:.0f}%)" if n else "0/0"


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + ["| " + " | ".join(r) + " |" for r in rows]


def difference_error(s: Statement) -> tuple[float, float]:
    """|measured B − A − true B − A| and the verdict's noise without the triangulation part of the difference."""
    ua, ub = comparison_widths(s.evidence)
    return abs(s.evidence.value_b - s.evidence.value_a - s.gap), math.hypot(ua, ub)


def calibration_set(rows: list[Statement]) -> list[Statement]:
    """The statements the parts are calibrated on: the single take's, views aligned as given, measured."""
    return [s for s in rows if s.sync == "given" and s.evidence is not None and s.evidence.status == "measured"
            and "two-person" not in s.what and s.kind in ("known", "identical")]


def calibrate(rows: list[Statement], target: float = TARGET) -> dict[str, dict[str, float]]:
    """Per quantity and statistic, the least part (0.1° or 0.01 body units) that covers ``target`` of the
    statements' |measured B − A − true B − A| beside the two intervals without their triangulation parts."""
    out: dict[str, dict[str, float]] = {}
    for quantity in QUANTITY_SIDES:
        for stat in STATISTICS:
            found = [difference_error(s) for s in rows if s.spec.quantity == quantity and s.spec.statistic == stat]
            if not found:
                continue
            errors, base = np.array(found).T
            step = 0.1 if unit_kind(quantity) == "°" else 0.01
            part = 0.0
            while np.mean(errors <= np.hypot(base, part)) < target:
                part += step
            out.setdefault(quantity, {})[stat] = round(part, 2)
    return out


def letter_with(s: Statement, part: float, margins: dict) -> Optional[str]:
    """The product's measured verdict with the triangulation part of the difference set to ``part``."""
    if s.evidence is None:
        return None
    return agreement(None, s.evidence.model_copy(update={"view_difference": part}), margins, has_vlm=False).measured


def before(s: Statement) -> float:
    """The rule before: both intervals whole (their own triangulation parts, no part of the difference)."""
    ia, ib = s.evidence.interval_a, s.evidence.interval_b
    return math.hypot(ia.view if ia else 0.0, ib.view if ib else 0.0)


def rule_rows(rows: list[Statement], margins: dict) -> list[list[str]]:
    """The verdict rules scored on the single take: before, as shipped, and held out by camera (each camera's
    statements scored with the parts calibrated on the statements without it; pooled, so a statement counts once
    per camera it involves)."""
    single = [s for s in rows if "two-person" not in s.what]
    out = []

    def line(name: str, sync: str, scored: list[tuple[Statement, Optional[str]]]) -> list[str]:
        clear = [s.verdict_with(letter) for s, letter in scored if s.kind == "known" and s.clear]
        same = [s.verdict_with(letter) for s, letter in scored if s.kind == "identical"]
        return [name, sync, str(len(clear)), *[pct(clear.count(v), len(clear)) for v in VERDICTS], pct(same.count("a/b"), len(same))]

    for sync in SYNCS:
        chosen = [s for s in single if s.sync == sync]
        out.append(line("before: both intervals with their own triangulation parts", sync,
                        [(s, letter_with(s, before(s), margins) if s.evidence is not None and s.evidence.status == "measured" else s.letter) for s in chosen]))
        out.append(line("**as shipped**: the triangulation part of the difference", sync, [(s, s.letter) for s in chosen]))
        held: list[tuple[Statement, Optional[str]]] = []
        for camera in CAMERAS:
            parts = calibrate([s for s in calibration_set(rows) if not any(camera in p for p in s.pairs)])
            for s in chosen:
                if any(camera in p for p in s.pairs):
                    if s.evidence is not None and s.evidence.status == "measured":
                        held.append((s, letter_with(s, parts.get(s.spec.quantity, {}).get(s.spec.statistic, 0.0), margins)))
                    else:
                        held.append((s, s.letter))
        out.append(line("the same, calibrated without the camera scored (held out, pooled over cameras)", sync, held))
        out.append(line("no triangulation part at all (what the numbers alone would say)", sync,
                        [(s, letter_with(s, 0.0, margins) if s.evidence is not None and s.evidence.status == "measured" else s.letter) for s in chosen]))
    return out


def report(rows: list[Statement], margins: dict) -> list[str]:
    out = []
    out += ["The single take (clear: the 4-view truth differs by >= 10° or 0.2 body units and by more than its noise):", ""]
    out += table(["rule", "sync", "clear differences", *VERDICTS, "identical movement: a/b"], rule_rows(rows, margins)) + [""]
    parts = calibrate(calibration_set(rows))
    out += [f"Triangulation part of a difference calibrated on the single take ({100 * TARGET:g}%; "
            "`viddiff.pose.difference3d.TRIANGULATION_DIFFERENCE_ERRORS`): "
            + "; ".join(f"{q} " + ", ".join(f"{k} {v:g}" for k, v in by.items()) for q, by in parts.items()), ""]
    if parts != TRIANGULATION_DIFFERENCE_ERRORS:
        out += ["(differs from the shipped parts: paste the line above into viddiff/pose/difference3d.py and run again)", ""]
    swapped = [s for s in rows if s.kind == "swapped" and s.sync == "given"]
    measured = [s for s in swapped if s.evidence is not None and s.evidence.status == "measured"]
    spread = []
    for joint in ("knee", "hip", "elbow", "ankle"):
        gaps = [abs(s.evidence.value_b - s.evidence.value_a) for s in measured if s.spec.quantity == f"{joint}_angle"]
        spread.append(f"{joint} {np.median(gaps):.1f} / {np.percentile(gaps, 95):.1f}°")
    out += ["The same two videos with the other phone as the main view (the single take, every pair and part, views "
            f"aligned as given): a/b {pct(sum(s.verdict == 'a/b' for s in swapped), len(swapped))}; |B − A| median / p95: "
            + ", ".join(spread) + ". Identical input, so all of it is the triangulation's dependence on which view is main.", ""]
    out += ["All statements, both takes (the two-person take with `pose.subject: auto`, one person chosen across each "
            "side's views; a side whose two views still measured different people has no 3D body):", ""]
    clear_header = ["sync", "clear differences", *VERDICTS, "identical movement: a/b", "identical: comparable"]
    lines = []
    for sync in SYNCS:
        clear = [s.verdict for s in rows if s.kind == "known" and s.sync == sync and s.clear]
        same = [s for s in rows if s.kind == "identical" and s.sync == sync]
        measured_same = [s for s in same if s.evidence is not None and s.evidence.status != "uncertain"]
        lines.append([sync, str(len(clear)), *[pct(clear.count(v), len(clear)) for v in VERDICTS],
                      pct(sum(s.verdict == "a/b" for s in same), len(same)),
                      pct(sum(s.evidence.status == "measured" for s in measured_same), len(measured_same))])
    out += table(clear_header, lines) + [""]
    single = [s for s in rows if "two-person" not in s.what and s.kind in ("known", "identical")]
    for sync in SYNCS:
        rows_pair = []
        for pair in PAIRS:
            name = "+".join(pair)
            clear = [s.verdict for s in single if s.kind == "known" and s.sync == sync and s.clear and s.pairs[0] == name]
            same = [s for s in single if s.kind == "identical" and s.sync == sync and name in s.pairs]
            rows_pair.append([name, *[str(clear.count(v)) for v in VERDICTS], pct(sum(s.verdict == "a/b" for s in same), len(same))])
        out += [f"Per pair, the single take (sync: {sync}; clear differences; identical movement where the pair films A or B):", ""]
        out += table(["pair", *VERDICTS, "identical: a/b"], rows_pair) + [""]
    rows_q = []
    for quantity in QUANTITY_SIDES:
        clear = [s.verdict for s in single if s.kind == "known" and s.sync == "given" and s.clear and s.spec.quantity == quantity]
        same = [s for s in single if s.kind == "identical" and s.sync == "given" and s.spec.quantity == quantity]
        rows_q.append([quantity.replace("_", " "), str(len(clear)), *[str(clear.count(v)) for v in VERDICTS[:5]],
                       pct(sum(s.verdict == "a/b" for s in same), len(same))])
    out += ["Per quantity, the single take (sync given):", ""]
    out += table(["quantity", "clear", *VERDICTS[:5], "identical: a/b"], rows_q) + [""]
    reasons = Counter(s.evidence.reason.split(": ", 1)[-1][:80] for s in single
                      if s.kind == "known" and s.clear and s.sync == "given" and s.evidence is not None and s.evidence.status == "uncertain")
    out += ["Why clear differences were uncertain (the single take, sync given): "
            + "; ".join(f"{k} ({v})" for k, v in reasons.most_common(4)), ""]
    for take in TAKES:
        refused = {s.what for s in rows if s.sync == "motion" and s.evidence is None and s.kind == "known" and s.what.startswith(take)}
        out += [f"Known-difference comparisons of the {take} take with a side whose synchronisation from the motion was "
                f"refused: {len(refused)} of {len(PAIRS) * len(KNOWN)}.", ""]
    return out


def run(clips: Path, work: Path) -> list[str]:
    """Every comparison, scored (see the module docstring); returns the printed lines."""
    started = time.perf_counter()
    config = Config()
    cameras = {c.name: c for c in read_qca(clips / TAKES["single"] / "calibration" / "Calib.qca.txt")}
    setup = Setup(clips=clips, work=work, config=config, evidence=PoseEvidence(config, None, Cache(work / "pose.sqlite")),
                  cameras=cameras)
    sides: dict[tuple[str, tuple[str, str], str], dict[str, Side]] = {}
    for take in TAKES:
        for pair in PAIRS:
            for window in WINDOWS:
                sides[(take, pair, window)] = performances(setup, take, pair, window)
    for pair in PAIRS:
        for window in WINDOWS:
            sides[("single", pair[::-1], window)] = performances(setup, "single", pair[::-1], window)
    whole = {pair: sides[("single", pair, "whole")]["given"] for pair in (PAIRS[0], PAIRS[-1])}
    tracks = [*whole[PAIRS[0]].tracks, *whole[PAIRS[-1]].tracks]
    truth = build_truth(tracks, [cameras[name] for name in CAMERAS])
    rows: list[Statement] = []
    for sync in SYNCS:
        for take in TAKES:
            for pair in PAIRS:
                name = "+".join(pair)
                for first, second in KNOWN:
                    a, b = sides[(take, pair, first)][sync], sides[(take, pair, second)][sync]
                    rows += statements(setup, "known", f"{take} {name}: {first} vs {second}", (name, name), sync, a, b,
                                       (first, second), truth)
        for window in WINDOWS:
            for first, second in itertools.permutations(PAIRS, 2):
                names = ("+".join(first), "+".join(second))
                a, b = sides[("single", first, window)][sync], sides[("single", second, window)][sync]
                rows += statements(setup, "identical", f"{window}: {names[0]} vs {names[1]}", names, sync, a, b,
                                   (window, window), truth)
            for pair in PAIRS:
                name = "+".join(pair)
                a, b = sides[("single", pair, window)][sync], sides[("single", pair[::-1], window)][sync]
                rows += statements(setup, "swapped", f"{window}: {name} vs {'+'.join(pair[::-1])}", (name, name), sync,
                                   a, b, (window, window), truth)
                a, b = sides[("single", pair, window)][sync], sides[("two-person", pair, window)][sync]
                rows += statements(setup, "identical", f"{window}: {name} single vs two-person", (name, name), sync, a, b,
                                   (window, window), truth)
    with open(work / "two-view-statements.pkl", "wb") as f:  # for looking further without measuring again
        pickle.dump(rows, f)
    out = ["### Two phones (3D): known differences and identical movement", ""]
    out += report(rows, config.pose.margins.model_dump())
    out += [f"({time.perf_counter() - started:.0f} s)"]
    return out
