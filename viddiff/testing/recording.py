"""An embedder wrapper that records every request it serves, for tests and benches.

Tests use it to show that two ways of running the method ask CLIP for exactly the same things (same frames,
same batches, so the same embeddings), and when; benches use it to add up the seconds spent in CLIP.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from viddiff.backends.clip import frame_hash


@dataclass(frozen=True)
class EmbedRequest:
    """One ``embed_images`` / ``embed_texts`` call: what was asked, what came back, and when."""

    kind: str
    """``image`` or ``text``."""
    items: tuple[str, ...]
    """Frame hashes (images) or the strings (texts), in the order asked."""
    output: bytes
    """The returned float32 array's bytes."""
    started: float
    finished: float
    """``time.perf_counter()`` at the call's start and end."""


class RecordingEmbedder:
    """Delegates to ``inner`` (any embedder) and keeps :attr:`requests` in call order; thread-safe."""

    def __init__(self, inner: Any):
        self.inner = inner
        self.requests: list[EmbedRequest] = []
        self._lock = threading.Lock()

    @property
    def stats(self) -> Any:
        return self.inner.stats

    @property
    def device(self) -> Any:
        return getattr(self.inner, "device", None)

    @property
    def concurrent_calls(self) -> bool:
        return bool(getattr(self.inner, "concurrent_calls", False))

    def embed_images(self, frames: np.ndarray) -> np.ndarray:
        return self._record("image", tuple(frame_hash(f) for f in frames), lambda: self.inner.embed_images(frames))

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        return self._record("text", tuple(texts), lambda: self.inner.embed_texts(texts))

    def image_requests(self) -> list[EmbedRequest]:
        with self._lock:
            return [r for r in self.requests if r.kind == "image"]

    def frames_requested(self) -> int:
        """Frames asked for so far (a frame asked for twice counts twice)."""
        return sum(len(r.items) for r in self.image_requests())

    def seconds(self) -> float:
        """Time spent inside the embedder so far."""
        with self._lock:
            return sum(r.finished - r.started for r in self.requests)

    def _record(self, kind: str, items: tuple[str, ...], call: Any) -> np.ndarray:
        started = time.perf_counter()
        out = call()
        request = EmbedRequest(kind, items, np.asarray(out).tobytes(), started, time.perf_counter())
        with self._lock:
            self.requests.append(request)
        return out
