"""Helpers for tests, demos and benches: synthetic media writers, local fake OpenAI-compatible and Hugging Face
Hub servers (127.0.0.1 only), a scripted stand-in model, and a tiny CLIP architecture for random-weight runs."""

from pathlib import Path

TINY_CLIP_MODEL = "viddiff-test-tiny-clip"
TINY_CLIP_CONFIG = Path(__file__).with_name(f"{TINY_CLIP_MODEL}.json")


def offline_overrides(base_url: str, cache_path: str) -> list[str]:
    """``--set`` values that point every model at a local fake server and CLIP at tiny random weights."""
    return [
        f"endpoints.default.base_url={base_url}",
        "endpoints.backoff_base_s=0.01",
        f"localizer.clip.model={TINY_CLIP_MODEL}",
        f"localizer.clip.arch_config={TINY_CLIP_CONFIG}",
        "localizer.clip.pretrained=null",
        "localizer.clip.device=cpu",
        f"cache.path={cache_path}",
    ]
