"""Synthetic ViDiC-1K fixture: stick-figure squat pairs whose yes/no checklist follows from how they were rendered.

Offline end-to-end tests of the ViDiC path (loader, describe mode, judge,
scores) need pairs whose similarities and differences are *known*. Every
pair renders the synthetic squat (``synth_actions.SQUAT``) and sets one
value per ``Factor`` for each video: background colour, shot scale and
rendering style (global), squat depth and position in the frame (local),
playback direction, and the subject (never varied). B copies A except a
sampled set of factors (always at least one global and one local); each
factor then becomes one checklist question: a difference (answer ``yes``)
naming both values, or a similarity (answer ``no``). The chosen values are
stored in the item's ``synthetic`` field so tests can check the checklist
against them; the loader ignores it like any extra field.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from viddiff.data.synth_actions import HEIGHT, SQUAT, WIDTH, Params
from viddiff.data.synth_figure import BACKGROUND
from viddiff.data.synthetic import render_performance
from viddiff.errors import DatasetError

CHECKLIST_FILE = "checklist.json"
SOURCE = "synthetic"

BACKGROUNDS: dict[str, tuple[int, int, int]] = {
    "beige": BACKGROUND,
    "light blue": (180, 210, 245),
    "light green": (190, 235, 190),
    "pink": (245, 200, 215),
}
ZOOMS: dict[str, float] = {"wide shot": 1.0, "close-up": 1.4}
PIXEL_SIZES: dict[str, int] = {"smooth": 1, "pixelated": 5}
DEPTHS: dict[str, tuple[float, float]] = {"shallow": (50.0, 65.0), "deep": (100.0, 115.0)}
"""Thigh angle range (degrees from vertical) of each squat depth; the gap keeps the two far apart."""
X_SHIFTS: dict[str, float] = {
    "in the left part of the frame": -32.0,
    "in the centre of the frame": 0.0,
    "in the right part of the frame": 32.0,
}
REVERSED: dict[str, bool] = {"forward at normal speed": False, "in reverse": True}
_ZOOM_CENTRE = (WIDTH / 2, 66.0)
"""Close-ups keep the feet in view and crop the head of the standing figure, like a tighter real shot."""
_EXTRA_DIFFERENCE_RATE = 0.3


@dataclass(frozen=True)
class Factor:
    """One way two videos can differ, with its ViDiC ``class`` and the question for either case."""

    name: str
    category: str
    """The ``class`` written to the checklist, spelled as ViDiC-1K spells it."""
    scope: Literal["global", "local"]
    values: tuple[str, ...]
    same_question: str
    """Asked when both videos share the value: phrased so the correct answer is ``no``."""
    difference_question: str
    """Asked when they differ (``{a}``, ``{b}`` = the values): correct answer ``yes``."""


FACTORS: tuple[Factor, ...] = (
    Factor(
        "subject",
        "subject",
        "global",
        ("a stick figure carrying a barbell",),
        "Is the person (a stick figure carrying a barbell) different between Video A and Video B?",
        "",
    ),
    Factor(
        "style",
        "style",
        "global",
        tuple(PIXEL_SIZES),
        "Is the visual style different between Video A and Video B?",
        "Is Video A rendered in a {a} style, whereas Video B is rendered in a {b} style?",
    ),
    Factor(
        "background",
        "background",
        "global",
        tuple(BACKGROUNDS),
        "Is the background colour different between Video A and Video B?",
        "Is the background {a} in Video A, whereas it is {b} in Video B?",
    ),
    Factor(
        "camera",
        "camera",
        "global",
        tuple(ZOOMS),
        "Is the shot scale (how close the camera frames the person) different between Video A and Video B?",
        "Is Video A filmed as a {a}, whereas Video B is filmed as a {b}?",
    ),
    Factor(
        "motion",
        "motion",
        "local",
        tuple(DEPTHS),
        "Is the depth of the squat different between Video A and Video B?",
        "Does the person perform a {a} squat in Video A, whereas the squat in Video B is {b}?",
    ),
    Factor(
        "position",
        "position",
        "local",
        tuple(X_SHIFTS),
        "Is the person's position in the frame different between Video A and Video B?",
        "Is the person {a} in Video A, whereas in Video B the person is {b}?",
    ),
    Factor(
        "playback",
        "playback technique",
        "global",
        tuple(REVERSED),
        "Is the playback technique different between Video A and Video B?",
        "Is Video A played {a}, whereas Video B is played {b}?",
    ),
)


def sample_looks(rng: np.random.Generator) -> tuple[dict[str, str], dict[str, str]]:
    """Factor values of A and B: B differs in one global factor, one local factor, and each other one at random."""
    a = {f.name: f.values[int(rng.integers(len(f.values)))] for f in FACTORS}
    variable = [f for f in FACTORS if len(f.values) > 1]
    forced = [
        group[int(rng.integers(len(group)))]
        for group in ([f for f in variable if f.scope == "global"], [f for f in variable if f.scope == "local"])
    ]
    b = dict(a)
    for f in variable:
        if f in forced or rng.random() < _EXTRA_DIFFERENCE_RATE:
            others = [v for v in f.values if v != a[f.name]]
            b[f.name] = others[int(rng.integers(len(others)))]
    return a, b


def squat_params(look: dict[str, str], base: Params, rng: np.random.Generator) -> Params:
    """The squat's performance parameters: ``base`` timing and lean, depth and position from the look."""
    low, high = DEPTHS[look["motion"]]
    return {**base, "depth": round(float(rng.uniform(low, high)), 3), "x_shift": X_SHIFTS[look["position"]]}


def checklist(a: dict[str, str], b: dict[str, str]) -> dict[str, list[dict[str, str]]]:
    """The ``structured_analysis`` of a pair: one question per factor, in ``FACTORS`` order."""
    analysis: dict[str, list[dict[str, str]]] = {"Similarities": [], "Differences": []}
    for f in FACTORS:
        if a[f.name] == b[f.name]:
            entry = {"class": f.category, "question": f.same_question, "correct_answer": "no"}
            analysis["Similarities"].append({**entry, "answer": "", "explanation": ""})
        else:
            entry = {
                "class": f.category,
                "question": f.difference_question.format(a=a[f.name], b=b[f.name]),
                "correct_answer": "yes",
            }
            analysis["Differences"].append({**entry, "answer": "", "explanation": ""})
    return analysis


def apply_look(frame: np.ndarray, look: dict[str, str]) -> np.ndarray:
    """Background colour, then shot scale (centred crop), then rendering style of one rendered frame."""
    from PIL import Image

    out = frame.copy()
    out[(frame == np.asarray(BACKGROUND, dtype=np.uint8)).all(axis=2)] = BACKGROUNDS[look["background"]]
    image = Image.fromarray(out)
    zoom = ZOOMS[look["camera"]]
    if zoom != 1.0:
        half_w, half_h = WIDTH / zoom / 2, HEIGHT / zoom / 2
        cx, cy = _ZOOM_CENTRE
        image = image.resize(
            (WIDTH, HEIGHT), Image.Resampling.BILINEAR, box=(cx - half_w, cy - half_h, cx + half_w, cy + half_h)
        )
    pixel = PIXEL_SIZES[look["style"]]
    if pixel > 1:
        image = image.resize((WIDTH // pixel, HEIGHT // pixel), Image.Resampling.BOX).resize(
            (WIDTH, HEIGHT), Image.Resampling.NEAREST
        )
    return np.asarray(image, dtype=np.uint8)


def render_video(params: Params, look: dict[str, str]) -> list[np.ndarray]:
    """Frames of one video of a pair, in playback order."""
    frames = [apply_look(frame, look) for frame in render_performance(SQUAT, params)]
    return frames[::-1] if REVERSED[look["playback"]] else frames


def _pair_item(out: Path, index: int, seed: int) -> dict[str, Any]:
    from viddiff.video.write import write_video

    rng = np.random.default_rng([seed, index])
    looks = sample_looks(rng)
    base = {p.name: round(float(rng.uniform(p.low, p.high)), 3) for p in SQUAT.params}
    params = [squat_params(look, base, rng) for look in looks]
    if looks[0]["motion"] == looks[1]["motion"]:
        params[1]["depth"] = params[0]["depth"]
    paths = []
    for letter, look, p in zip("ab", looks, params):
        rel = f"videos/pair_{index:04d}_{letter}.mp4"
        write_video(out / rel, render_video(p, look), SQUAT.fps, options={"crf": "18"})
        paths.append(rel)
    return {
        "index": index,
        "video1_path": paths[0],
        "video2_path": paths[1],
        "structured_analysis": checklist(*looks),
        "source": SOURCE,
        "synthetic": {"a": looks[0], "b": looks[1], "params": {"a": params[0], "b": params[1]}},
    }


def _prepare_out(out: Path) -> None:
    """Make ``out`` ready; only an earlier synthetic ViDiC fixture may be overwritten (its videos are replaced)."""
    if out.exists() and not out.is_dir():
        raise DatasetError(
            f"{out}: exists and is not a directory; choose a directory for the synthetic ViDiC benchmark"
        )
    out.mkdir(parents=True, exist_ok=True)
    if not any(out.iterdir()):
        return
    try:
        items = json.loads((out / CHECKLIST_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        items = None
    if not (isinstance(items, list) and items and isinstance(items[0], dict) and items[0].get("source") == SOURCE):
        raise DatasetError(f"{out}: not empty and not a synthetic ViDiC benchmark; choose a new or empty directory")
    shutil.rmtree(out / "videos", ignore_errors=True)


def write_synthetic_vidic(out: Path, pairs: int = 4, seed: int = 0) -> Path:
    """Write ``out/checklist.json`` (ViDiC-1K format) and ``out/videos/``; returns the checklist file.

    Same ``seed`` gives the same checklist byte for byte and the same
    frames; pair ``i`` depends only on ``(seed, i)``, so fewer pairs give a
    prefix.
    """
    if pairs < 1:
        raise DatasetError(f"--pairs must be at least 1, got {pairs}")
    out = Path(out)
    _prepare_out(out)
    items = [_pair_item(out, index, seed) for index in range(pairs)]
    path = out / CHECKLIST_FILE
    path.write_text(json.dumps(items, indent=2) + "\n", encoding="utf-8")
    return path
