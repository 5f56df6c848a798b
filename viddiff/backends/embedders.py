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

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Optional, Protocol, Sequence, runtime_checkable

import numpy as np

from viddiff.errors import EmbedderChoiceError
from viddiff.plugins import EMBEDDERS

if TYPE_CHECKING:
    from viddiff.cache import Cache
    from viddiff.config import ClipConfig

ENTRY_POINT_GROUP = EMBEDDERS.group
DEFAULT_EMBEDDER = "open_clip"
__all__ = [
    "DEFAULT_EMBEDDER", "ENTRY_POINT_GROUP", "EmbedStats", "Embedder", "EmbedderChoiceError", "EmbedderFactory",
    "build_embedder", "check_embedder_name", "embedder_factory", "embedder_names", "register_embedder",
]


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

    Concurrent samples take turns with an embedder (one sample's CLIP work at a
    time) unless it has an attribute ``concurrent_calls`` that is true: then it
    is called from several threads at once, and is expected to batch them.
    """

    stats: EmbedStats

    def embed_images(self, frames: np.ndarray) -> np.ndarray:
        """(N, H, W, 3) uint8 RGB frames → (N, D) float32."""
        ...

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        """N strings → (N, D) float32."""
        ...


EmbedderFactory = Callable[["ClipConfig", Optional["Cache"]], Embedder]


def register_embedder(name: str, factory: EmbedderFactory) -> None:
    """Make ``factory`` selectable as ``localizer.clip.backend: name``.

    Registering the same factory again is a no-op; another factory under a
    taken name is an error (a plug-in must not silently replace one).
    """
    EMBEDDERS.register(name, factory)


def embedder_names() -> list[str]:
    """Built-in, registered, then names declared by installed plug-ins."""
    return EMBEDDERS.names()


def check_embedder_name(name: str) -> str:
    """``name`` if an embedder is registered (or declared by an installed plug-in) under it."""
    return EMBEDDERS.check(name)


def embedder_factory(name: str) -> EmbedderFactory:
    return EMBEDDERS.get(name)


def build_embedder(cfg: "ClipConfig", cache: Optional["Cache"] = None) -> Embedder:
    """The embedder ``cfg.backend`` names, built from ``cfg`` and the shared cache."""
    return embedder_factory(cfg.backend)(cfg, cache)
