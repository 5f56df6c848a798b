"""LMM baselines: both videos' frames sent straight to a multimodal chat model, scored like VidDiff."""

from viddiff.methods.lmm.baseline import LMMBaseline, resolve_config

__all__ = ["LMMBaseline", "resolve_config"]
