"""Stage 3: compare aligned keyframes of the two videos with a VLM."""

from viddiff.differencer.differencer import Differencer

__all__ = ["Differencer"]
