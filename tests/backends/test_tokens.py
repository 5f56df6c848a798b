"""Token estimates: OpenAI's image tile rule, the real o200k_base tokenizer offline, message accounting."""

from __future__ import annotations

import base64
import hashlib
import struct
from pathlib import Path

import numpy as np
import pytest

from viddiff.backends import tokens
from viddiff.backends.messages import system_message, user_message
from viddiff.config import ImageConfig

O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
"""SHA-256 of OpenAI's published o200k_base.tiktoken (as pinned in tiktoken's own source)."""


@pytest.mark.parametrize(
    "size, detail, expected",
    [
        ((1024, 1024), "high", 765),  # OpenAI's worked examples: 4 tiles
        ((2048, 4096), "high", 1105),  # → 1024x2048 → 768x1536: 6 tiles
        ((4096, 8192), "low", 85),
        ((1920, 1080), "high", 1105),  # → 1365x768: 3x2 tiles
        ((1280, 720), "high", 1105),  # short side under 768: kept, 3x2 tiles
        ((160, 120), "high", 255),
        ((512, 512), "high", 255),
        ((513, 512), "high", 425),
        ((1920, 1080), "auto", 1105),  # auto counted as high, the upper bound
        ((1920, 1080), None, 1105),
    ],
)
def test_gpt4o_image_tokens(size, detail, expected):
    assert tokens.image_tokens(*size, detail, "gpt-4o-2024-08-06") == expected


def test_gpt4o_mini_images_cost_the_same_dollars_with_more_tokens():
    assert tokens.image_tokens(1024, 1024, "high", "gpt-4o-mini") == 2833 + 4 * 5667
    assert tokens.image_tokens(1024, 1024, "low", "gpt-4o-mini-2024-07-18") == 2833


def test_bad_image_size():
    with pytest.raises(ValueError, match="positive"):
        tokens.image_tokens(0, 10, "high", "gpt-4o")


def test_encoding_by_model():
    assert tokens.encoding_name("gpt-4o-2024-08-06") == "o200k_base"
    assert tokens.encoding_name("gpt-4.1-mini") == "o200k_base"
    assert tokens.encoding_name("gpt-5-mini") == "o200k_base"
    assert tokens.encoding_name("gpt-4-turbo") == "cl100k_base"
    assert tokens.encoding_name("gpt-3.5-turbo") == "cl100k_base"
    assert tokens.encoding_name("Qwen/Qwen2.5-VL-7B-Instruct") == "o200k_base"


def test_text_tokens_known_values():
    assert tokens.text_tokens("gpt-4o", "hello world") == 2
    assert tokens.text_tokens("gpt-4o", "") == 0
    assert tokens.tokenizer_description("gpt-4o") == "o200k_base (quicktok)"


def _o200k_file_from_quicktok() -> bytes:
    """OpenAI's o200k_base.tiktoken text rebuilt from the vocabulary quicktok ships (u32 count, then per
    token: u16 length, bytes, u32 rank) — quicktok's own format, read here only to check its data."""
    import quicktok

    raw = (Path(quicktok.__file__).parent / "data" / "o200k.vocab").read_bytes()
    (count,) = struct.unpack_from("<I", raw, 0)
    offset, ranked = 4, []
    while offset < len(raw):
        (length,) = struct.unpack_from("<H", raw, offset)
        token = raw[offset + 2 : offset + 2 + length]
        (rank,) = struct.unpack_from("<I", raw, offset + 2 + length)
        ranked.append((rank, token))
        offset += 6 + length
    assert len(ranked) == count
    return b"".join(base64.b64encode(token) + b" %d\n" % rank for rank, token in sorted(ranked))


@pytest.fixture(scope="module")
def tiktoken_o200k(tmp_path_factory):
    """The real tiktoken o200k_base encoding, its vocabulary served from tiktoken's cache (no network)."""
    tiktoken = pytest.importorskip("tiktoken")
    from tiktoken_ext import openai_public

    data = _o200k_file_from_quicktok()
    assert hashlib.sha256(data).hexdigest() == O200K_SHA256  # byte-identical to OpenAI's published file
    cache = tmp_path_factory.mktemp("tiktoken-cache")
    (cache / hashlib.sha1(O200K_URL.encode()).hexdigest()).write_bytes(data)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TIKTOKEN_CACHE_DIR", str(cache))
        return tiktoken.Encoding(**openai_public.o200k_base())  # tiktoken re-checks the hash itself


def test_counts_equal_tiktoken_o200k(tiktoken_o200k):
    root = Path(__file__).parents[2]
    docs = [root / "README.md", *sorted((root / "docs").glob("*.md"))]  # real prose: tables, code, unicode
    pages = [path.read_text(encoding="utf-8") for path in docs]
    texts = [
        *pages,
        *(paragraph for page in pages for paragraph in page.split("\n\n")),
        "Answer with only a JSON object that follows the response schema.",
        'The statement: "the squat is deeper". {"answer_detailed": "...", "answer": "a"}',
        "naïve café — 東京 2024: 12345678 ×3 😀👍🏽\r\n\t  trailing   ",
        "A photo of a person standing with knees bent, barbell on the upper back.",
    ]
    for text in texts:
        assert tokens.text_tokens("gpt-4o", text) == len(tiktoken_o200k.encode_ordinary(text)), text[:60]


def test_prompt_tokens_add_message_overhead_text_and_images():
    frame = np.zeros((1080, 1920, 3), np.uint8)
    messages = [
        system_message("be brief"),
        user_message("which is deeper?", frame, frame, image=ImageConfig(detail="high")),
        user_message("and now?", frame, image=ImageConfig(detail="low", max_side=512)),
    ]
    text = sum(tokens.text_tokens("gpt-4o", t) for t in ("system", "be brief", "user", "which is deeper?", "user", "and now?"))
    expected = tokens.REPLY_PRIMING_TOKENS + 3 * tokens.TOKENS_PER_MESSAGE + text + 2 * 1105 + 85
    assert tokens.prompt_tokens("gpt-4o", messages) == expected


def test_image_given_by_url_counts_as_1024_square():
    messages = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://x/y.jpg"}}]}]
    assert tokens.prompt_tokens("gpt-4o", messages) == 3 + 3 + tokens.text_tokens("gpt-4o", "user") + 765
