"""A pretrained CLIP tag's weights, checked before open_clip fetches them: a Hugging Face hub that cannot be
reached fails at once, in one line saying how to work offline. (open_clip's download goes through
huggingface_hub, which retries each of two file names five times: about a minute of warnings, then the error.)
"""

from __future__ import annotations

import os
import posixpath
from typing import Any, Optional

from viddiff.backends.network import probe_unreachable
from viddiff.config import ClipConfig
from viddiff.errors import ModelLoadError

DEFAULT_WEIGHT_FILE = "open_clip_pytorch_model.bin"
"""The file open_clip fetches from a tag's repo unless the tag names another (it tries a .safetensors twin first)."""


def hub_files(tag_cfg: dict[str, Any]) -> Optional[tuple[str, list[str]]]:
    """The tag's hub repo and the files open_clip would take from it, or None for a tag served from a plain URL."""
    hub = str(tag_cfg.get("hf_hub") or "")
    if not hub:
        return None
    repo, filename = posixpath.split(hub)
    filename = filename or DEFAULT_WEIGHT_FILE
    stem, suffix = posixpath.splitext(filename)
    if filename == DEFAULT_WEIGHT_FILE:
        return repo, ["open_clip_model.safetensors", filename]
    return repo, [f"{stem}.safetensors", filename] if suffix in (".bin", ".pth") else [filename]


def check_hub_reachable(cfg: ClipConfig, tag_cfg: Optional[dict[str, Any]]) -> None:
    """Raise :class:`ModelLoadError` when the weights are not in the Hugging Face cache and the hub cannot be reached.

    Nothing is checked where open_clip will not go to the network anyway: weights already cached, a local
    checkpoint, random weights, or ``HF_HUB_OFFLINE`` (then huggingface_hub fails at once by itself).
    """
    located = hub_files(tag_cfg or {})
    if cfg.checkpoint is not None or cfg.pretrained is None or located is None or _hub_offline():
        return
    from huggingface_hub import constants, try_to_load_from_cache

    repo, files = located
    if any(isinstance(try_to_load_from_cache(repo, name), str) for name in files):
        return
    endpoint = constants.ENDPOINT
    reason = probe_unreachable(endpoint)
    if reason is None:
        return
    raise ModelLoadError(
        f"cannot download the CLIP weights {cfg.model} / {cfg.pretrained}: could not reach the Hugging Face hub at "
        f"{endpoint} ({reason}); to work offline, download them where there is a network (hf download {repo} "
        f"{files[-1]} --local-dir DIR) and set localizer.clip.checkpoint=DIR/{files[-1]}, or point HF_HOME at a "
        "Hugging Face cache that holds them"
    )


def _hub_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in {"1", "ON", "YES", "TRUE"}
