"""Frame/text embedders by name: ``localizer.clip.backend`` picks one, a plug-in adds its own.

The localizer compares every frame with every retrieval string in a shared
embedding space; any :class:`Embedder` serves it. ``open_clip`` (the default)
is :class:`viddiff.backends.clip.ClipEmbedder`; torch and open_clip are
imported only when it is built. A plug-in makes its embedder selectable by
config in one of two ways:

- call :func:`register_embedder` before the config is validated (Python use:
  import the plug-in module first), or
- declare an entry point in the group ``viddiff.embedders``
  (``NAME = package.module:factory``) in its package metadata; it is loaded
  the first time NAME is asked for, so ``viddiff run --set
  localizer.clip.backend=NAME`` works for an installed plug-in.

A factory takes the ``localizer.clip`` section (:class:`ClipConfig`; it may
read ``model``, ``device``, ``batch_size`` or ignore them) and the shared
cache (or ``None``), and returns an embedder. See ``docs/extending.md``.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Optional, Protocol, Sequence, runtime_checkable

import numpy as np

from viddiff.errors import ViddiffError

if TYPE_CHECKING:
    from viddiff.cache import Cache
    from viddiff.config import ClipConfig

ENTRY_POINT_GROUP = "viddiff.embedders"
DEFAULT_EMBEDDER = "open_clip"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


class EmbedderChoiceError(ViddiffError, ValueError):
    """``localizer.clip.backend`` names no embedder, or a plug-in's that cannot be loaded."""


@dataclass
class EmbedStats:
    """Counts since the embedder was created; ``*_forward`` = items actually run through the model."""

    image_forward: int = 0
    text_forward: int = 0
    image_cache_hits: int = 0
    text_cache_hits: int = 0


@runtime_checkable
class Embedder(Protocol):
    """What the localizer and the run's usage report need from an embedder.

    Both methods return float32 rows, L2-normalised, one per input, in one
    space (image rows are compared with text rows by dot product). ``stats``
    is reported in ``usage.json`` as the run's CLIP work.
    """

    stats: EmbedStats

    def embed_images(self, frames: np.ndarray) -> np.ndarray:
        """(N, H, W, 3) uint8 RGB frames → (N, D) float32."""
        ...

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        """N strings → (N, D) float32."""
        ...


EmbedderFactory = Callable[["ClipConfig", Optional["Cache"]], Embedder]


_BUILT_IN = {DEFAULT_EMBEDDER: "viddiff.backends.clip:ClipEmbedder"}
"""Built-in embedders by ``module:factory``: imported (with torch) only when built, not when the name is checked."""
_FACTORIES: dict[str, EmbedderFactory] = {}


def register_embedder(name: str, factory: EmbedderFactory) -> None:
    """Make ``factory`` selectable as ``localizer.clip.backend: name``.

    Registering the same factory again is a no-op; another factory under a
    taken name is an error (a plug-in must not silently replace one).
    """
    if not _NAME.fullmatch(name):
        raise ValueError(f"embedder name {name!r} must be letters, digits, '_', '.' or '-'")
    existing = _FACTORIES.get(name)
    if name in _BUILT_IN or (existing is not None and existing is not factory):
        raise ValueError(f"an embedder named {name!r} is already registered ({_BUILT_IN.get(name) or _describe(existing)})")
    _FACTORIES[name] = factory


def embedder_names() -> list[str]:
    """Registered names and names declared by installed plug-ins, sorted."""
    return sorted(set(_BUILT_IN) | set(_FACTORIES) | {ep.name for ep in _entry_points()})


def check_embedder_name(name: str) -> str:
    """``name`` if an embedder is registered (or declared by an installed plug-in) under it."""
    if name not in _BUILT_IN:
        embedder_factory(name)
    return name


def embedder_factory(name: str) -> EmbedderFactory:
    if name in _BUILT_IN:
        module, attr = _BUILT_IN[name].split(":")
        return getattr(importlib.import_module(module), attr)
    factory = _FACTORIES.get(name)
    if factory is None:
        factory = _load_entry_point(name)
    if factory is None:
        raise EmbedderChoiceError(
            f"no embedder named {name!r}; registered: {', '.join(embedder_names())} (a plug-in registers its "
            f"name with viddiff.backends.embedders.register_embedder, or an entry point in {ENTRY_POINT_GROUP!r})"
        )
    return factory


def build_embedder(cfg: "ClipConfig", cache: Optional["Cache"] = None) -> Embedder:
    """The embedder ``cfg.backend`` names, built from ``cfg`` and the shared cache."""
    return embedder_factory(cfg.backend)(cfg, cache)


def _entry_points() -> Sequence[importlib.metadata.EntryPoint]:
    return list(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP))


def _load_entry_point(name: str) -> Optional[EmbedderFactory]:
    for entry_point in _entry_points():
        if entry_point.name == name:
            try:
                factory = entry_point.load()
            except Exception as exc:  # the plug-in's own import failed: say which one, and why
                raise EmbedderChoiceError(
                    f"embedder {name!r} is declared by an installed plug-in ({entry_point.value}) but fails to "
                    f"load: {type(exc).__name__}: {exc}"
                ) from exc
            register_embedder(name, factory)
            return factory
    return None


def _describe(factory: EmbedderFactory) -> str:
    return f"{getattr(factory, '__module__', '?')}.{getattr(factory, '__qualname__', repr(factory))}"
