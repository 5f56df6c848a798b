"""A toy embedder plug-in: frames and texts to vectors without any model, selectable by config.

Frames become the mean colour of each cell of a 4x4 grid; texts become
hashed word counts. Both are L2-normalised 48-d float32 rows, so the
localizer runs unchanged, but the similarities mean nothing: this is a
template for a real embedder (another CLIP library, SigLIP, a video
encoder), not one to use. Importing this module registers it as
``localizer.clip.backend: toy_grid``.
"""

from __future__ import annotations

import hashlib
import re
from typing import Optional, Sequence

import numpy as np

from viddiff.backends.embedders import EmbedStats, register_embedder
from viddiff.cache import Cache
from viddiff.config import ClipConfig

GRID = 4
DIM = GRID * GRID * 3


class GridColourEmbedder:
    """Implements ``viddiff.backends.embedders.Embedder``: ``embed_images``, ``embed_texts``, ``stats``."""

    def __init__(self, cfg: ClipConfig, cache: Optional[Cache] = None):
        self.batch_size = cfg.batch_size  # a real embedder would read cfg.model, cfg.device, ... too
        self.stats = EmbedStats()

    def embed_images(self, frames: np.ndarray) -> np.ndarray:
        """(N, H, W, 3) uint8 → (N, 48): the mean RGB of each grid cell."""
        frames = np.asarray(frames)
        n, height, width, _ = frames.shape
        rows = [
            frames[:, i * height // GRID : (i + 1) * height // GRID, j * width // GRID : (j + 1) * width // GRID]
            .reshape(n, -1, 3)
            .mean(axis=1)
            for i in range(GRID)
            for j in range(GRID)
        ]
        self.stats.image_forward += n
        return _normalised(np.concatenate(rows, axis=1) + 1.0)

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        """N strings → (N, 48): each word adds 1 to a slot chosen by its hash."""
        out = np.ones((len(texts), DIM))
        for row, text in enumerate(texts):
            for word in re.findall(r"[a-z]+", text.lower()):
                out[row, hashlib.sha256(word.encode()).digest()[0] % DIM] += 1.0
        self.stats.text_forward += len(texts)
        return _normalised(out)


def _normalised(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def make_grid_colour_embedder(cfg: ClipConfig, cache: Optional[Cache]) -> GridColourEmbedder:
    """The factory the registry calls with the ``localizer.clip`` section and the shared cache."""
    return GridColourEmbedder(cfg, cache)


register_embedder("toy_grid", make_grid_colour_embedder)
