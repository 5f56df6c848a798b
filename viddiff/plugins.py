"""Every plug-in kind of viddiff, and the one :class:`Registry` type behind them all.

The kinds (each a table of named entries; a new entry touches one line here or one entry point):

=============== ================================ ======================================== =========================
kind            registry                         chosen by                                entry-point group
=============== ================================ ======================================== =========================
benchmark       :data:`BENCHMARKS`               ``--benchmark`` / ``data.benchmark``     ``viddiff.benchmarks``
method          :data:`METHODS`                  ``--method``                             ``viddiff.methods``
embedder        :data:`EMBEDDERS`                ``localizer.clip.backend``               ``viddiff.embedders``
segmenter       :data:`SEGMENTERS`               ``localizer.method``                     ``viddiff.segmenters``
pose estimator  :data:`POSE_ESTIMATORS`          ``pose.estimator``                       ``viddiff.pose_estimators``
=============== ================================ ======================================== =========================

They are declared here, at the bottom of the import graph, so the config can check a name against its table
without importing the wing that implements it (built-in entries are ``"module:attr"`` strings, imported on
first use). Each wing keeps its own friendly functions (``register_method``, ``get_segmenter``, ...).

Each kind is one :class:`Registry` with three sources of entries, looked up in this order:

- entries **registered** in Python (``register``), for plug-ins that are imported rather than installed;
- **built-in** entries, given as objects or as ``"module:attr"`` strings imported on first use (so
  ``viddiff --help`` or a config check never imports torch or a benchmark's loader);
- **entry points** of installed packages in the registry's group (``[project.entry-points."GROUP"]``),
  loaded the first time their name is asked for, so the command line knows an installed plug-in without
  any import of the user's.
"""

from __future__ import annotations

import importlib
import re
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Callable, Generic, Mapping, TypeVar, Union

from viddiff.errors import ConfigError, EmbedderChoiceError, PoseEstimatorChoiceError, SegmenterChoiceError

T = TypeVar("T")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


class Registry(Generic[T]):
    """The entries of one plug-in kind by name (see the module docstring)."""

    def __init__(
        self,
        kind: str,
        group: str,
        built_in: Mapping[str, Union[str, T]],
        *,
        setting: str,
        error: type[Exception] = ConfigError,
        accepts: Union[Callable[[object], bool], str] = lambda entry: True,
    ):
        self.kind = kind
        """What an entry is, in messages ("benchmark")."""
        self.group = group
        """The entry-point group installed plug-ins declare their entries in."""
        self.setting = setting
        """Where a user names an entry ("--benchmark / data.benchmark"), for the unknown-name message."""
        self.error = error
        self._built_in = built_in
        self._registered: dict[str, T] = {}
        self._accepts = accepts
        """A predicate, or ``"module:Type"``: entries of installed plug-ins must be instances of that type."""

    def register(self, name: str, entry: T) -> T:
        """Make ``entry`` available as ``name``. The same entry again is a no-op; a taken name is an error
        (a plug-in must never silently replace an entry)."""
        if not _NAME.fullmatch(name):
            raise self.error(f"{self.kind} name {name!r} must be letters, digits, '_', '.' or '-'")
        taken = self._registered.get(name)
        if name in self._built_in or (taken is not None and taken is not entry):
            raise self.error(f"a {self.kind} named {name!r} is already registered")
        self._registered[name] = entry
        return entry

    def names(self) -> list[str]:
        """The built-in names in table order, then registered ones, then those installed plug-ins declare."""
        found = [*self._built_in, *(name for name in self._registered if name not in self._built_in)]
        return found + sorted({ep.name for ep in entry_points(group=self.group)} - set(found))

    def get(self, name: str) -> T:
        """The entry called ``name``; an unknown name is an error listing the known ones."""
        if name in self._registered:
            return self._registered[name]
        if name in self._built_in:
            entry = self._built_in[name]
            return _resolve(entry) if isinstance(entry, str) else entry
        for ep in entry_points(group=self.group, name=name):
            return self.register(name, self._load(ep))
        raise self.error(f"unknown {self.kind} {name!r} ({self.setting}); choose one of {', '.join(self.names())}")

    def check(self, name: str) -> str:
        """``name`` if it names an entry, without importing a built-in one (config validation stays light)."""
        if name not in self._built_in and name not in self._registered:
            self.get(name)
        return name

    def _load(self, ep: EntryPoint) -> T:
        try:
            entry = ep.load()
        except Exception as exc:  # the plug-in's own import failed: say which one, and why
            raise self.error(
                f"{self.kind} {ep.name!r} is declared by an installed plug-in ({ep.value}) but fails to load: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        accepted = isinstance(entry, _resolve(self._accepts)) if isinstance(self._accepts, str) else self._accepts(entry)
        if not accepted:
            raise self.error(f"entry point {ep.value!r} ({self.group}: {ep.name}) is not a {self.kind}")
        return entry


def _resolve(reference: str) -> Any:
    """The object a ``"module:attr"`` string names, importing the module."""
    module, attr = reference.split(":")
    return getattr(importlib.import_module(module), attr)


BENCHMARKS: Registry[Any] = Registry(
    "benchmark",
    "viddiff.benchmarks",
    {
        "viddiffbench": "viddiff.benchmarks.viddiffbench:VIDDIFFBENCH",
        "vidic": "viddiff.benchmarks.vidic:VIDIC",
        "ifvidcap": "viddiff.benchmarks.ifvidcap:IFVIDCAP",
        "vidcapbench": "viddiff.benchmarks.vidcapbench:VIDCAPBENCH",
        "vidpair-halluc": "viddiff.benchmarks.vidpair:VIDPAIR",
    },
    setting="data.benchmark / --benchmark",
    accepts="viddiff.benchmarks.base:Benchmark",
)
"""Benchmarks (:class:`viddiff.benchmarks.base.Benchmark` objects); see :mod:`viddiff.benchmarks`."""

METHODS: Registry[Any] = Registry(
    "method",
    "viddiff.methods",
    {
        "viddiff": "viddiff.methods.viddiff:VidDiffMethod",
        "baseline": "viddiff.methods.lmm.baseline:LMMBaseline",
        "pose": "viddiff.methods.pose:PoseMethod",
    },
    setting="--method",
    accepts=callable,
)
"""Method factories, ``factory(config, cache=None) -> Method``; see :mod:`viddiff.methods`."""

EMBEDDERS: Registry[Any] = Registry(
    "embedder",
    "viddiff.embedders",
    {"open_clip": "viddiff.backends.clip:ClipEmbedder"},  # imported (with torch) only when built
    setting="localizer.clip.backend",
    error=EmbedderChoiceError,
    accepts=callable,
)
"""Embedder factories, ``factory(clip_config, cache) -> Embedder``; see :mod:`viddiff.backends.embedders`."""

SEGMENTERS: Registry[Any] = Registry(
    "segmenter",
    "viddiff.segmenters",
    {
        name: f"viddiff.localizer.segmenters:{name.upper()}"
        for name in ("viterbi", "no_viterbi", "random", "oracle", "argmax", "uniform", "random_segments")
    },
    setting="localizer.method",
    error=SegmenterChoiceError,
    accepts="viddiff.localizer.segmenters:Segmenter",
)
"""Localizer segmenters (:class:`viddiff.localizer.segmenters.Segmenter`), the method first; see that module."""

POSE_ESTIMATORS: Registry[Any] = Registry(
    "pose estimator",
    "viddiff.pose_estimators",
    {
        "blazepose": "viddiff.pose.blazepose:BlazePose",  # imported (with mediapipe) only when built
        "rtmpose": "viddiff.pose.rtmpose:RTMPose",
    },
    setting="pose.estimator",
    error=PoseEstimatorChoiceError,
    accepts=callable,
)
"""Pose estimator factories, ``factory(pose_config) -> PoseEstimator``; see :mod:`viddiff.pose.estimators`."""
