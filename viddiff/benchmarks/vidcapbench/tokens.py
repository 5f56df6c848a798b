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
from viddiff.data import hub
from viddiff.errors import DatasetError

logger = logging.getLogger(__name__)

SUBSTITUTE = "words"
SPIECE_FILE = "spiece.model"
WHAT_TO_DO = (
    "to count as released without the hub, download the model where there is a network "
    "(hf download google/flan-t5-base spiece.model --local-dir DIR) and set vidcapbench.tokenizer=DIR/spiece.model"
)


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
        raise DatasetError(f"no SentencePiece model file at {path}")
    return hub.download_file(setting, SPIECE_FILE, data.hf_cache_dir, what=f"{setting}/{SPIECE_FILE}")


def token_counter(setting: str, data: DataConfig, fallback: bool) -> TokenCounter:
    """The counter ``vidcapbench.tokenizer`` names; with ``fallback``, the ``words`` substitute (labelled, with
    the reason) when the SentencePiece model or library is not available. An unreachable hub is not retried:
    one line says why and what to do."""
    if setting == SUBSTITUTE:
        return words_counter("chosen by vidcapbench.tokenizer")
    try:
        return sentencepiece_counter(_model_file(setting, data), setting)
    except DatasetError as exc:  # no model file, the hub unreachable or without it, offline without a cached copy
        reason = f"{setting} unavailable: {exc}"
    except Exception as exc:  # a broken model file, no sentencepiece library
        reason = f"{setting} unavailable: {type(exc).__name__}: {' '.join(str(exc).split())}"
    if not fallback:
        raise DatasetError(
            f"vidcapbench.tokenizer: {reason}; {WHAT_TO_DO}, or set vidcapbench.tokenizer_fallback=true to count "
            "with the labelled 'words' substitute"
        )
    logger.warning(
        "Conciseness: %s; counting with the 'words' substitute (not comparable with the paper); %s", reason, WHAT_TO_DO
    )
    return words_counter(reason)
