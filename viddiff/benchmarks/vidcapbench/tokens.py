"""Caption lengths for VidCapBench's Conciseness: flan-t5-base's SentencePiece tokens, or a named substitute.

The released scorer counts ``T5Tokenizer.from_pretrained(flan-t5-base)(caption).input_ids``: the
SentencePiece pieces of the caption plus the end token ``</s>``, no truncation. Here the same count is
``len(SentencePieceProcessor.encode(caption)) + 1`` from the model's ``spiece.model`` (equal to the
tokenizer's for text without T5's special-token strings such as ``<extra_id_0>``), without transformers.
``vidcapbench.tokenizer`` names where the model comes from: an HF repo holding ``spiece.model``
(``google/flan-t5-base``, downloaded once into the HF cache) or a local file. ``words`` is a substitute
when the model cannot be had: regex words and punctuation marks plus one end token. Its counts are not
SentencePiece counts, so Conciseness computed with it is labelled and not comparable with the paper's.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from viddiff.config import DataConfig
from viddiff.data.hub import hub_endpoint, hub_offline
from viddiff.errors import DatasetError

logger = logging.getLogger(__name__)

SUBSTITUTE = "words"
SPIECE_FILE = "spiece.model"


@dataclass(frozen=True)
class TokenCounter:
    name: str
    """What counted: ``sentencepiece:<source>`` or ``words (substitute: ...)``."""
    count: Callable[[str], int]


def words_counter(reason: str = "") -> TokenCounter:
    label = f"{SUBSTITUTE} (substitute{': ' + reason if reason else ''})"
    return TokenCounter(label, lambda text: len(re.findall(r"\w+|[^\w\s]", text)) + 1)


def sentencepiece_counter(model_file: Path, source: str) -> TokenCounter:
    import sentencepiece

    processor = sentencepiece.SentencePieceProcessor(model_file=str(model_file))
    return TokenCounter(f"sentencepiece:{source}", lambda text: len(processor.encode(text)) + 1)


def _model_file(setting: str, data: DataConfig) -> Path:
    path = Path(setting).expanduser()
    if path.is_file():
        return path
    if path.suffix == ".model" or setting.startswith((".", "/", "~")):
        raise DatasetError(f"vidcapbench.tokenizer: no SentencePiece model file at {path}")
    from huggingface_hub import hf_hub_download

    return Path(
        hf_hub_download(
            repo_id=setting, filename=SPIECE_FILE, cache_dir=data.hf_cache_dir, local_files_only=hub_offline(),
            endpoint=hub_endpoint(),
        )
    )


def token_counter(setting: str, data: DataConfig, fallback: bool) -> TokenCounter:
    """The counter ``vidcapbench.tokenizer`` names; with ``fallback``, the ``words`` substitute (labelled, with
    the reason) when the SentencePiece model or library is not available."""
    if setting == SUBSTITUTE:
        return words_counter("chosen by vidcapbench.tokenizer")
    try:
        return sentencepiece_counter(_model_file(setting, data), setting)
    except Exception as exc:  # hub errors, offline cache misses, a missing or broken model file, no sentencepiece
        reason = f"{setting} unavailable: {type(exc).__name__}: {' '.join(str(exc).split())[:160]}"
        if not fallback:
            raise DatasetError(
                f"vidcapbench.tokenizer: {reason}; give a local spiece.model path, or set "
                "vidcapbench.tokenizer_fallback=true to count with the labelled 'words' substitute"
            ) from None
        logger.warning("Conciseness: %s; counting with the 'words' substitute (not comparable with the paper)", reason)
        return words_counter(reason)
