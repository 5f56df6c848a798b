"""In-process open_clip embedder with a per-item embedding cache.

The localizer compares every frame of both videos with every retrieval
string, and the same frames come back on every resume, ablation and
same-video sanity check. So each frame and each string is embedded once per
model: items are keyed by content (``frame_hash``), looked up in the shared
SQLite cache, and only the misses go through the model. The model itself
loads on first need, so a fully cached run never builds it.

Models are built-in open_clip architectures, with weights from a
``pretrained`` tag (downloaded through the Hugging Face hub), from a local
``checkpoint`` file, or random (``pretrained: null``). Random weights make
meaningless scores and exist for offline tests; their init is seeded so the
cache stays valid across processes. The test suite uses ``ViT-S-32-alt``
(43 M parameters, 256-d, the CLIP BPE tokenizer shipped inside open_clip).

On a CPU the thread pool is fitted to the cores this process may use
(``backends.cpu``) and ``precision: int8`` quantises the image tower
(``backends.clip_int8``); on a GPU fp16/bf16 apply as before. Strings skip
the text tower's padding (``backends.clip_text``).

One embedder serves concurrent comparisons (a served ``VidDiff``, a run's
samples in flight): each caller hashes, looks up and preprocesses its items
in its own thread, and a :class:`~viddiff.backends.microbatch.MicroBatcher`
runs the misses of all callers in shared batches on one model thread
(``micro_batch``). On a GPU frames are resized and normalised there, in one
batched call (``backends.clip_preprocess``).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, Sequence, Union

import numpy as np
import open_clip
import torch
import torch.nn.functional as F
from PIL import Image
from tqdm.auto import tqdm

from viddiff.backends.clip_int8 import quantize_image_tower
from viddiff.backends.clip_text import encode_text
from viddiff.backends.clip_preprocess import TensorTransform, tensor_transform
from viddiff.backends.clip_weights import check_hub_reachable
from viddiff.backends.cpu import configure_torch_threads
from viddiff.backends.embedders import EmbedStats
from viddiff.backends.microbatch import MicroBatcher
from viddiff.backends.stopping import raise_if_stopped
from viddiff.cache import Cache, hash_key
from viddiff.config import ClipConfig, ConfigError
from viddiff.errors import ModelLoadError, ViddiffError

logger = logging.getLogger(__name__)

RANDOM_INIT_SEED = 0
"""Seed for random-weight models, part of their ``model_id``."""
IMAGE_NAMESPACE = "clip_image"
TEXT_NAMESPACE = "clip_text"
_PROGRESS_MIN_BATCHES = 4
"""Fewer batches than this finish too fast for a progress bar to help."""
_HASH_CHUNK = 16 << 20

Frames = Union[np.ndarray, Sequence[np.ndarray]]


class EmbedInputError(ViddiffError, ValueError):
    """Frames or texts handed to the embedder have the wrong type, shape or dtype."""


@dataclass(frozen=True)
class _Loaded:
    model: torch.nn.Module
    preprocess: Callable[[Image.Image], torch.Tensor]
    tokenizer: Callable[[list[str]], torch.Tensor]
    input_dtype: torch.dtype
    on_device: Optional[TensorTransform]
    """The preprocessing as batched torch ops on the model's device, or ``None``: PIL, frame by frame."""
    input_size: tuple[int, int] = (0, 0)
    """(height, width) the image tower takes: frames already that size need no resize or crop."""
    as_tensors: Optional[TensorTransform] = None
    """The preprocessing as batched torch ops, for frames of ``input_size`` on the CPU: there resize and crop
    do nothing, and the rest (scale, normalise) are the very float ops PIL's path runs, frame by frame."""


def frame_hash(frame: np.ndarray) -> str:
    """SHA-256 of a frame's shape, dtype and pixels: equal content ⇒ equal key, wherever it came from."""
    digest = hashlib.sha256(f"{frame.dtype.str}{frame.shape}".encode())
    digest.update(np.ascontiguousarray(frame).data)
    return digest.hexdigest()


def resolve_device(device: str) -> str:
    """``auto`` → CUDA when available, else CPU; an explicit device must exist here."""
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    try:
        parsed = torch.device(device)
    except (RuntimeError, ValueError):
        raise ConfigError(
            f"localizer.clip.device={device!r} is not a torch device; use auto, cpu or cuda[:N]"
        ) from None
    if parsed.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError(f"localizer.clip.device={device!r} but CUDA is not available here; use auto or cpu")
    return device


def resolve_precision(precision: str, device: str) -> str:
    """``auto`` → fp16 on CUDA (half the memory, CLIP's own inference setting), fp32 elsewhere."""
    if precision == "auto":
        return "fp16" if torch.device(device).type == "cuda" else "fp32"
    if precision == "int8" and torch.device(device).type != "cpu":
        raise ConfigError(
            f"localizer.clip.precision=int8 runs on the CPU only (device is {device}); use fp16 or bf16 on a GPU"
        )
    return precision


def file_sha256(path: Path) -> str:
    """Content hash of a checkpoint, so renaming or copying it keeps its cached embeddings valid."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(_HASH_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _validate_model_choice(cfg: ClipConfig) -> Optional[dict[str, Any]]:
    """Reject unknown architectures, tags and missing checkpoint files before any download.

    Returns the pretrained tag's config (hub repo, preprocessing), if a tag is set.
    """
    if cfg.arch_config is not None:
        _register_arch_config(cfg)
    if open_clip.get_model_config(cfg.model) is None:
        raise ModelLoadError(
            f"localizer.clip.model={cfg.model!r} is not a built-in open_clip architecture "
            f"(e.g. ViT-bigG-14, ViT-L-14, ViT-B-32; see open_clip.list_models())"
        )
    if cfg.checkpoint is not None and not Path(cfg.checkpoint).expanduser().is_file():
        raise ModelLoadError(
            f"localizer.clip.checkpoint={cfg.checkpoint!r}: file not found; give the path of an open_clip "
            f"checkpoint (e.g. open_clip_pytorch_model.bin) for {cfg.model}"
        )
    if cfg.pretrained is None:
        return None
    tag_cfg = open_clip.get_pretrained_cfg(cfg.model, cfg.pretrained)
    if not tag_cfg:
        tags = open_clip.list_pretrained_tags_by_model(cfg.model)
        raise ModelLoadError(
            f"localizer.clip.pretrained={cfg.pretrained!r} is not a pretrained tag of {cfg.model} "
            f"(known tags: {', '.join(tags) or 'none'}); for a local weights file set localizer.clip.checkpoint, "
            f"for random test weights set localizer.clip.pretrained=null"
        )
    return tag_cfg


def _register_arch_config(cfg: ClipConfig) -> None:
    """Make a custom architecture (open_clip model-config JSON) known to open_clip under ``cfg.model``."""
    path = Path(cfg.arch_config).expanduser()
    if not path.is_file():
        raise ModelLoadError(f"localizer.clip.arch_config={cfg.arch_config!r}: file not found")
    if path.stem != cfg.model:
        raise ModelLoadError(
            f"localizer.clip.arch_config {path.name} defines architecture {path.stem!r}, "
            f"but localizer.clip.model is {cfg.model!r}; they must match"
        )
    open_clip.add_model_config(path)


def _model_id(cfg: ClipConfig) -> str:
    if cfg.checkpoint is not None:
        digest = file_sha256(Path(cfg.checkpoint).expanduser())
        preprocess = f":preprocess={cfg.pretrained}" if cfg.pretrained else ""
        return f"{cfg.model}:checkpoint-sha256={digest}{preprocess}"
    if cfg.pretrained is not None:
        return f"{cfg.model}:{cfg.pretrained}"
    arch = f":config-sha256={file_sha256(Path(cfg.arch_config).expanduser())[:16]}" if cfg.arch_config else ""
    return f"{cfg.model}{arch}:random-init:{RANDOM_INIT_SEED}:open_clip-{open_clip.__version__}"


_OPEN_CLIP_RANDOM = "No pretrained weights loaded for model"


class _LastResort(logging.Handler):
    """Stands in for "no handler": what Python prints then (``logging.lastResort``), minus ``basicConfig``."""

    def emit(self, record: logging.LogRecord) -> None:
        if logging.lastResort is not None and record.levelno >= logging.lastResort.level:
            logging.lastResort.handle(record)


@contextmanager
def _open_clip_logging(*, said_random: bool) -> Iterator[None]:
    """While open_clip builds a model: its "No pretrained weights loaded" warning is dropped when we have said
    so ourselves (unless the root logger is at DEBUG, as under ``--debug``), and its module-level
    ``logging.info``/``warning`` calls cannot run ``logging.basicConfig`` and so configure an app's logging
    behind its back (they do when the root logger has no handler)."""
    root = logging.getLogger()

    def drop_repeat(record: logging.LogRecord) -> bool:
        return not (said_random and str(record.msg).startswith(_OPEN_CLIP_RANDOM) and not root.isEnabledFor(logging.DEBUG))

    stand_in = _LastResort() if not root.handlers else None
    root.addFilter(drop_repeat)
    if stand_in is not None:
        root.addHandler(stand_in)
    try:
        yield
    finally:
        root.removeFilter(drop_repeat)
        if stand_in is not None:
            root.removeHandler(stand_in)


def _as_frames(frames: Frames) -> list[np.ndarray]:
    if isinstance(frames, np.ndarray):
        if frames.ndim != 4 or frames.shape[-1] != 3 or frames.dtype != np.uint8:
            raise EmbedInputError(
                f"CLIP frames must be a uint8 RGB array of shape (N, H, W, 3); got {frames.dtype} {frames.shape}"
            )
        return list(frames)
    out = []
    for i, frame in enumerate(frames):
        if not isinstance(frame, np.ndarray) or frame.ndim != 3 or frame.shape[-1] != 3 or frame.dtype != np.uint8:
            got = f"{frame.dtype} {frame.shape}" if isinstance(frame, np.ndarray) else type(frame).__name__
            raise EmbedInputError(f"CLIP frame {i} must be a uint8 RGB array of shape (H, W, 3); got {got}")
        out.append(frame)
    return out


def _batches(n: int, size: int, desc: str) -> Any:
    """Batch start offsets, with a progress bar on a terminal when there are enough batches to wait for."""
    starts = range(0, n, size)
    show = len(starts) >= _PROGRESS_MIN_BATCHES
    return tqdm(starts, desc=desc, unit="batch", leave=False, disable=None if show else True)


class ClipEmbedder:
    """L2-normalised CLIP embeddings of frames and texts; one model per instance, loaded on first need.

    Safe to call from many threads at once: with ``micro_batch`` their misses share batches, without it
    each call runs alone.
    """

    def __init__(self, cfg: ClipConfig, cache: Optional[Cache] = None):
        self.cfg = cfg
        self.cache = cache
        self._tag_cfg = _validate_model_choice(cfg)
        self.device = resolve_device(cfg.device)
        self.precision = resolve_precision(cfg.precision, self.device)
        self.model_id = _model_id(cfg)
        self.embed_dim = int(open_clip.get_model_config(cfg.model)["embed_dim"])
        self.stats = EmbedStats()
        self.concurrent_calls = cfg.micro_batch
        """Callers need not take turns: concurrent calls share batches (see ``Embedder``)."""
        self._loaded: Optional[_Loaded] = None
        self._load_error: Optional[ModelLoadError] = None
        self._said_random = False
        self._load_lock = threading.Lock()
        self._stats_lock = threading.Lock()
        self._lock = threading.Lock()
        """Without ``micro_batch``: one call at a time. With it: the model, shared by the two batchers."""
        self.image_batcher: Optional[MicroBatcher[torch.Tensor]] = None
        self.text_batcher: Optional[MicroBatcher[str]] = None
        if cfg.micro_batch:
            wait_s = cfg.batch_wait_ms / 1000
            self.image_batcher = MicroBatcher(
                self._forward_images, max_batch=cfg.batch_size, max_wait_s=wait_s, name="viddiff-clip-images",
                model_lock=self._lock,
            )
            self.text_batcher = MicroBatcher(
                self._forward_texts, max_batch=cfg.batch_size, max_wait_s=wait_s, name="viddiff-clip-texts",
                model_lock=self._lock,
            )

    def embed_images(self, frames: Frames) -> np.ndarray:
        """(N, H, W, 3) uint8 RGB → (N, D) float32; identical frames are embedded once."""
        items = _as_frames(frames)
        keys = [self._key("image", frame=frame_hash(f)) for f in items]
        with self._one_call_at_a_time():
            out, hits, computed = self._embed_cached(IMAGE_NAMESPACE, keys, items, self._encode_images)
        with self._stats_lock:
            self.stats.image_cache_hits += hits
            self.stats.image_forward += computed
        return out

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        """Strings → (N, D) float32; identical strings are embedded once."""
        items = list(texts)
        for i, text in enumerate(items):
            if not isinstance(text, str):
                raise EmbedInputError(f"CLIP text {i} must be a str, got {type(text).__name__}")
        keys = [self._key("text", text=t) for t in items]
        with self._one_call_at_a_time():
            out, hits, computed = self._embed_cached(TEXT_NAMESPACE, keys, items, self._encode_texts)
        with self._stats_lock:
            self.stats.text_cache_hits += hits
            self.stats.text_forward += computed
        return out

    def _one_call_at_a_time(self) -> contextlib.AbstractContextManager:
        """Without ``micro_batch`` a call holds the model from its cache look-up to its last batch."""
        return contextlib.nullcontext() if self.cfg.micro_batch else self._lock

    def _key(self, kind: str, **item: str) -> str:
        # Precision is part of the key: fp16 and fp32 embeddings differ in the last digits.
        return hash_key({"model": self.model_id, "precision": self.precision, "kind": kind, **item})

    def _embed_cached(
        self, namespace: str, keys: list[str], items: list[Any], encode: Callable[[list[Any]], np.ndarray]
    ) -> tuple[np.ndarray, int, int]:
        """Embeddings for ``items`` (one row per key) plus (distinct cache hits, distinct items encoded)."""
        self._say_if_random()
        if not keys:
            return np.zeros((0, self.embed_dim), dtype=np.float32), 0, 0
        first_index: dict[str, int] = {}
        for i, key in enumerate(keys):
            first_index.setdefault(key, i)
        table: dict[str, np.ndarray] = {}
        if self.cache is not None:
            for key, value in self.cache.get_many(namespace, list(first_index)).items():
                vector = np.frombuffer(value, dtype=np.float32)
                if vector.size == self.embed_dim:
                    table[key] = vector
        hits = len(table)
        missing = [key for key in first_index if key not in table]
        if missing:
            vectors = encode([items[first_index[key]] for key in missing])
            fresh = dict(zip(missing, vectors))
            table.update(fresh)
            if self.cache is not None:
                self.cache.put_many(namespace, {key: vec.tobytes() for key, vec in fresh.items()})
        return np.stack([table[key] for key in keys]), hits, len(missing)

    def _say_if_random(self) -> None:
        """Warn once per embedder that its weights are random, on first use: embeddings taken from the cache are
        as meaningless as new ones (the model itself may never load)."""
        if self._said_random or self.cfg.checkpoint is not None or self.cfg.pretrained is not None:
            return
        self._said_random = True
        logger.warning(
            "CLIP %s has RANDOM weights (localizer.clip.pretrained=null): similarity scores are meaningless; "
            "use this for offline tests only",
            self.cfg.model,
        )

    def _model(self) -> _Loaded:
        """The model, loaded once; a load that failed fails again at once (each waiting sample would otherwise
        sit through the same download retries)."""
        if self._load_error is not None:
            raise self._load_error
        if self._loaded is None:
            with self._load_lock:  # concurrent first callers load it once
                if self._load_error is not None:
                    raise self._load_error
                if self._loaded is None:
                    try:
                        self._loaded = self._load()
                    except ModelLoadError as exc:
                        self._load_error = exc
                        raise
        return self._loaded

    def _load(self) -> _Loaded:
        cfg = self.cfg
        kwargs: dict[str, Any] = {}
        if cfg.checkpoint is not None:
            weights: Optional[str] = str(Path(cfg.checkpoint).expanduser())
            if self._tag_cfg:
                # A checkpoint file carries no preprocessing config; the tag it was trained as supplies it.
                kwargs = {
                    "image_mean": self._tag_cfg.get("mean"),
                    "image_std": self._tag_cfg.get("std"),
                    "image_interpolation": self._tag_cfg.get("interpolation"),
                    "image_resize_mode": self._tag_cfg.get("resize_mode"),
                    "force_quick_gelu": bool(self._tag_cfg.get("quick_gelu", False)),
                }
        else:
            weights = cfg.pretrained
        check_hub_reachable(cfg, self._tag_cfg)
        if torch.device(self.device).type == "cpu":
            configure_torch_threads(cfg.threads)
        build_precision = "fp32" if self.precision == "int8" else self.precision
        try:
            # Seeded init on a forked RNG: same random weights in every process, caller's RNG untouched.
            with _open_clip_logging(said_random=weights is None):
                with torch.random.fork_rng(devices=[]):
                    torch.manual_seed(RANDOM_INIT_SEED)
                    model, _, preprocess = open_clip.create_model_and_transforms(
                        cfg.model, pretrained=weights, precision=build_precision, device=self.device, **kwargs
                    )
                tokenizer = open_clip.get_tokenizer(cfg.model)
        except (RuntimeError, OSError, ValueError, KeyError) as exc:
            raise ModelLoadError(self._load_failure(exc)) from exc
        model.eval()
        if self.precision == "int8":
            quantize_image_tower(model)
        input_dtype = open_clip.get_input_dtype(build_precision) or torch.float32
        as_tensors = tensor_transform(preprocess)
        size = model.visual.image_size
        return _Loaded(
            model=model, preprocess=preprocess, tokenizer=tokenizer, input_dtype=input_dtype,
            on_device=as_tensors if self._preprocess_with_torch() else None,
            input_size=(size, size) if isinstance(size, int) else tuple(size), as_tensors=as_tensors,
        )

    def _preprocess_with_torch(self) -> bool:
        """``auto``: on a GPU, where one CPU thread of PIL would hold it back; on a CPU PIL is faster."""
        if self.cfg.preprocess == "auto":
            return torch.device(self.device).type != "cpu"
        return self.cfg.preprocess == "torch"

    def _load_failure(self, exc: BaseException) -> str:
        cfg = self.cfg
        if cfg.checkpoint is not None:
            return (
                f"cannot load CLIP checkpoint {cfg.checkpoint} into {cfg.model}: {exc}; "
                f"check that localizer.clip.model names the architecture the checkpoint was trained as"
            )
        repo = (self._tag_cfg or {}).get("hf_hub", "").rstrip("/")
        source = f" (Hugging Face repo {repo})" if repo else ""
        return (
            f"cannot load CLIP weights for model {cfg.model!r}, pretrained {cfg.pretrained!r}{source}: {exc}. "
            f"Without network access, download open_clip_pytorch_model.bin elsewhere and set "
            f"localizer.clip.checkpoint=/path/to/open_clip_pytorch_model.bin (keep localizer.clip.pretrained "
            f"for its preprocessing), or point HF_HOME at a Hugging Face cache that holds it; "
            f"HF_HUB_OFFLINE=1 makes a missing download fail at once instead of retrying"
        )

    def _encode_images(self, frames: list[np.ndarray]) -> np.ndarray:
        if self.image_batcher is None:
            return self._encode_images_alone(frames)
        # Preprocessing runs in the caller's thread, a chunk ahead of the model thread's work on the last one.
        batcher, size = self.image_batcher, self.cfg.batch_size
        results: list[np.ndarray] = []
        pending = None
        for start in _batches(len(frames), size, "CLIP frames"):
            raise_if_stopped()
            request = batcher.enqueue(list(self._pixels(frames[start : start + size])))
            if pending is not None:
                results.append(batcher.wait(pending))
            pending = request
        results.append(batcher.wait(pending))
        return np.concatenate(results)

    def _encode_texts(self, texts: list[str]) -> np.ndarray:
        if self.text_batcher is None:
            return self._encode_texts_alone(texts)
        raise_if_stopped()
        return self.text_batcher.submit(texts)

    def _pixels(self, frames: list[np.ndarray]) -> torch.Tensor:
        """``(N, 3, S, S)`` model input on the device: one batched call per frame size there; on the CPU one batched
        call for frames already of the input size (as videos are read), else PIL per frame."""
        loaded = self._model()
        if loaded.on_device is None:
            if loaded.as_tensors is not None and all(f.shape[:2] == loaded.input_size for f in frames):
                with torch.inference_mode():
                    pixels = loaded.as_tensors(torch.from_numpy(np.stack(frames)).permute(0, 3, 1, 2))
            else:
                pixels = torch.stack([loaded.preprocess(Image.fromarray(f)) for f in frames])
            return pixels.to(self.device, dtype=loaded.input_dtype)
        by_shape: dict[tuple[int, ...], list[int]] = {}
        for i, frame in enumerate(frames):
            by_shape.setdefault(frame.shape, []).append(i)
        out: Optional[torch.Tensor] = None
        with torch.inference_mode():
            for indices in by_shape.values():
                batch = torch.from_numpy(np.stack([frames[i] for i in indices])).to(self.device)
                pixels = loaded.on_device(batch.permute(0, 3, 1, 2)).to(loaded.input_dtype)
                if out is None:
                    out = pixels.new_empty((len(frames), *pixels.shape[1:]))
                out[torch.as_tensor(indices, device=pixels.device)] = pixels
        assert out is not None
        return out

    def _forward_images(self, pixels: list[torch.Tensor]) -> np.ndarray:
        """One batch of preprocessed frames (from any callers) through the image tower: the batcher's job."""
        model = self._model().model
        with torch.inference_mode():
            features = model.encode_image(torch.stack(pixels))
        return F.normalize(features.float(), dim=-1).cpu().numpy()

    def _forward_texts(self, texts: list[str]) -> np.ndarray:
        loaded = self._model()
        tokens = loaded.tokenizer(texts).to(self.device)
        with torch.inference_mode():
            features = encode_text(loaded.model, tokens)
        return F.normalize(features.float(), dim=-1).cpu().numpy()

    def _encode_images_alone(self, frames: list[np.ndarray]) -> np.ndarray:
        """Without ``micro_batch``: the caller's frames in batches of ``batch_size``, preprocessed one by one."""
        loaded = self._model()
        out = []
        for start in _batches(len(frames), self.cfg.batch_size, "CLIP frames"):
            raise_if_stopped()
            chunk = frames[start : start + self.cfg.batch_size]
            pixels = torch.stack([loaded.preprocess(Image.fromarray(f)) for f in chunk])
            pixels = pixels.to(self.device, dtype=loaded.input_dtype)
            with torch.inference_mode():
                features = loaded.model.encode_image(pixels)
            out.append(F.normalize(features.float(), dim=-1).cpu().numpy())
        return np.concatenate(out)

    def _encode_texts_alone(self, texts: list[str]) -> np.ndarray:
        out = []
        for start in _batches(len(texts), self.cfg.batch_size, "CLIP texts"):
            raise_if_stopped()
            out.append(self._forward_texts(texts[start : start + self.cfg.batch_size]))
        return np.concatenate(out)
