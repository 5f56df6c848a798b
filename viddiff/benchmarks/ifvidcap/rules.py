"""The 14 rule-based constraint checks of IF-VidCap, deterministic, with the released checker's exact semantics.

Each check takes one extracted span (``content``) and the rule item's parameters, and says whether the span
satisfies the constraint. They are pure string tests (regular expressions, ``json``, ``jsonschema``): no
language detection, no model. The released checker's quirks are kept on purpose, because they decide
published numbers; the tests pin each of them (``tests/benchmarks/test_ifvidcap_rules.py``):

- list markers are recognised line by line on stripped lines; a heading or wrapped line breaks a list;
- words are ``[a-zA-Z]+`` runs (hyphen-joined runs count once) plus one per CJK character, with Python's
  Unicode ``\\b``, so a Latin word glued to CJK text is not a word and numbers never are;
- sentences are runs of terminal punctuation, so an unterminated last sentence is not counted;
- a ``max_*`` bound of 0 or less means no upper bound;
- a suffix may be followed by trailing punctuation, but not by whitespace;
- a title-case text of only all-caps words fails.

A rule item's result is the AND over its spans; no spans at all passes (``all([])``), as released.
Parameters the check does not take raise ``TypeError`` (the released checker fails the same way), and a
malformed JSON schema raises ``jsonschema.SchemaError``: the scorer turns both into a failed item.
"""

from __future__ import annotations

import json
import re
import string
from typing import Any, Callable, Optional, Sequence

RULE_TYPES = (
    "plain_text", "json_object", "json_array", "unordered_list", "ordered_list", "table", "keyword",
    "markdown", "prefix_suffix", "delimiter", "length", "count", "case", "language",
)
"""The ``constraint_id`` values of rule-based items."""

_LIST_LINE = (
    r"^\s*[-*+•]\s+",
    r"^\s*\d+[\.\)]\s+",
    r"^\s*[a-zA-Z][\.\)]\s+",
    r"^\s*[一二三四五六七八九十]+[\.\、]\s+",
    r"^\s*[IVXLCDM]+[\.\)]\s+",
)
"""A line that starts like a list item (plain text must have none)."""
_LIST_PREFIX = (*_LIST_LINE, r"^\s*[ivxlcdm]+[\.\)]\s+")
"""List markers removed (the first that matches, once per line) before lengths are measured."""
_CJK = r"[\u4e00-\u9fa5]"
_WORD = r"\b[a-zA-Z]+(?:-[a-zA-Z]+)*\b"
_SUFFIX_TRAIL = string.punctuation + "，。！？；：、（）【】《》〈〉·"
"""Characters a suffix may be followed by (ASCII punctuation and common CJK marks; no curly quotes)."""
_SEPARATORS = (".", ")", "、", ":", "．")
_ROMAN = ("I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X",
          "XI", "XII", "XIII", "XIV", "XV", "XVI", "XVII", "XVIII", "XIX", "XX")
_CHINESE = ("一", "二", "三", "四", "五", "六", "七", "八", "九", "十")
_NUMBERING = (
    ("arabic", r"^\d+[\.\)\:]\s+"),
    ("upper_alpha", r"^[A-Z][\.\)]\s+"),
    ("lower_alpha", r"^[a-z][\.\)]\s+"),
    ("chinese", r"^[一二三四五六七八九十]+[\.\、]\s+"),
    ("upper_roman", r"^[IVXLCDM]+[\.\)]\s+"),
    ("lower_roman", r"^[ivxlcdm]+[\.\)]\s+"),
)
"""Numbering systems tried, in this order, for an ordered list without a given symbol."""
_MARKDOWN = {
    "title": (r"^#{1,6}\s+.+$",),
    "bold": (r"\*\*.+\*\*", r"__.+__"),
    "highlight": (r"==.+==", r"`.+`"),
    "italic": (r"\*.+\*", r"_.+_"),
    "code": (r"```[\s\S]*```", r"`.+`"),
}
_MARKUP = (
    (r"\*\*(.*?)\*\*", r"\1"),
    (r"__(.*?)__", r"\1"),
    (r"(?<!\*)\*([^*]+?)\*(?!\*)", r"\1"),
    (r"(?<!_)_([^_]+?)_(?!_)", r"\1"),
    (r"==(.*?)==", r"\1"),
    (r"`(.*?)`", r"\1"),
    (r"~~(.*?)~~", r"\1"),
)
"""Markdown emphasis removed from table header cells and expected column names before comparing them."""


def _lines(content: str) -> list[str]:
    return [line.strip() for line in content.split("\n") if line.strip()]


def _within(count: int, low: int, high: int) -> bool:
    """``low <= count`` and, when ``high`` is positive, ``count <= high``."""
    return count >= low and not (high > 0 and count > high)


# ---------------------------------------------------------------------------------------------- checks


def plain_text(content: str) -> bool:
    """No JSON value, no list-like line, no Markdown table rule line."""
    try:
        json.loads(content)
        return False
    except json.JSONDecodeError:
        pass
    if any(re.match(p, line) for line in content.split("\n") for p in _LIST_LINE):
        return False
    return not ("|" in content and re.search(r"\|[-:\s]+\|", content))


def _json_value(content: str, opening: str, closing: str, kind: type, schema: dict[str, Any]) -> bool:
    import jsonschema

    start, end = content.find(opening), content.rfind(closing)
    if start == -1 or end == -1 or end < start:
        return False
    try:
        value = json.loads(content[start : end + 1])
    except json.JSONDecodeError:
        return False
    if not isinstance(value, kind):
        return False
    try:
        jsonschema.validate(instance=value, schema=schema)
    except jsonschema.ValidationError:
        return False
    return True


def json_object(content: str, schema: dict[str, Any]) -> bool:
    """The text from the first ``{`` to the last ``}`` is a JSON object valid under ``schema``."""
    return _json_value(content, "{", "}", dict, schema)


def json_array(content: str, schema: dict[str, Any]) -> bool:
    """The text from the first ``[`` to the last ``]`` is a JSON array valid under ``schema``."""
    return _json_value(content, "[", "]", list, schema)


def unordered_list(content: str, symbol: Optional[str] = None) -> bool:
    """Every non-empty line starts with ``symbol`` (any of ``- * + •`` when none is given) and whitespace."""
    lines = _lines(content)
    pattern = f"^{re.escape(symbol)}\\s+" if symbol else r"^[-*+•]\s+"
    return bool(lines) and all(re.match(pattern, line) for line in lines)


def _marker(text: str, separator: str, *, spaced: bool = True) -> Optional[str]:
    """The text before the first ``separator``, stripped; ``None`` without one or (``spaced``) without
    whitespace right after it."""
    at = text.find(separator)
    if at == -1:
        return None
    marker = text[:at].strip()
    if not marker:
        return None
    after = text[at + len(separator) :]
    if spaced and not (after and after[0].isspace()):
        return None
    return marker


def _number_type(marker: str) -> Optional[str]:
    if marker.isdigit():
        return "arabic"
    if re.fullmatch(r"[一二三四五六七八九十]+", marker):
        return "chinese"
    if marker in _ROMAN:
        return "upper_roman"
    if marker in [r.lower() for r in _ROMAN]:
        return "lower_roman"
    if len(marker) == 1 and marker.isalpha():
        return "upper_alpha" if marker.isupper() else ("lower_alpha" if marker.islower() else None)
    return None


def _value(marker: Optional[str], kind: str) -> Any:
    """A list marker's value in its numbering system (an int for arabic, else the marker), or ``None``."""
    if marker is None:
        return None
    if kind == "arabic":
        try:
            return int(marker)
        except ValueError:
            return None
    if kind in ("upper_alpha", "lower_alpha"):
        return marker if len(marker) == 1 and marker.isalpha() else None
    return marker


def _in_sequence(lines: list[str], kind: str, separator: str, first: Any) -> bool:
    """Every line's marker is the next one of the system, starting at ``first``."""
    markers = [_value(_marker(line, separator), kind) for line in lines]
    if kind == "arabic":
        return markers == list(range(int(first), int(first) + len(lines)))
    if kind in ("upper_alpha", "lower_alpha"):
        start = ord(first.upper() if kind == "upper_alpha" else first.lower())
        last = ord("Z" if kind == "upper_alpha" else "z")
        for k, marker in enumerate(markers):
            if not marker or ord(marker) != start + k or start + k + 1 > last:
                return False  # released: stepping past Z/z fails, even right after the last letter
        return True
    sequence = list(_CHINESE) if kind == "chinese" else list(_ROMAN if kind == "upper_roman" else (r.lower() for r in _ROMAN))
    if first not in sequence:
        return False
    start = sequence.index(first)
    return all(start + k < len(sequence) and marker == sequence[start + k] for k, marker in enumerate(markers))


def ordered_list(content: str, symbol: Optional[str] = None) -> bool:
    """Every non-empty line is the next item of one numbering system.

    With ``symbol`` (``"1."``, ``"a."``, ``"I."``...) the list must start at it and use its separator; a
    letter that is also a roman numeral (``I``, ``V``, ``X``, ``i``...) is read as roman. Without one, the
    systems of ``_NUMBERING`` are tried in order and any start is accepted.
    """
    lines = _lines(content)
    if not lines:
        return False
    if symbol:
        at = max((i for i, ch in enumerate(symbol) if ch in _SEPARATORS), default=-1)
        if at == -1:
            return False
        separator = symbol[at]
        kind = _number_type(symbol[:at].strip()) if symbol[:at].strip() else None
        if kind is None:
            return False
        first = _value(_marker(lines[0], separator), kind)
        if first is None or first != _value(_marker(symbol, separator, spaced=False), kind):
            return False
        return _in_sequence(lines, kind, separator, first)
    for kind, pattern in _NUMBERING:
        if not all(re.match(pattern, line) for line in lines):
            continue
        separator = next((ch for ch in lines[0] if ch in _SEPARATORS), None)
        if separator is None:
            continue
        first = _value(_marker(lines[0], separator), kind)
        if first is not None and _in_sequence(lines, kind, separator, first):
            return True
    return False


def _unmarked(text: str) -> str:
    for pattern, replacement in _MARKUP:
        text = re.sub(pattern, replacement, text)
    return text.strip()


def table(content: str, col_name: Sequence[str]) -> bool:
    """A Markdown table whose header cells are exactly ``col_name`` (order, case and number), emphasis ignored."""
    lines = content.strip().split("\n")
    if len(lines) < 2 or not all("|" in line for line in lines[:2]):
        return False
    if not re.match(r"^[\s\|:\-]+$", lines[1]):
        return False
    header = [_unmarked(cell.strip()) for cell in lines[0].split("|") if cell.strip()]
    return header == [_unmarked(name) for name in col_name]


def keyword(content: str, keyword: str, keyword_type: str) -> bool:
    """Case-insensitive substring test (no word boundaries): ``include`` or ``exclude``; no keyword passes."""
    if not keyword:
        return True
    found = keyword.lower() in content.lower()
    return {"include": found, "exclude": not found}.get(keyword_type, False)


def markdown(content: str, md_type: str) -> bool:
    """Some Markdown element of the type: ``title``, ``bold``, ``highlight``, ``italic`` (bold counts) or ``code``."""
    return any(re.search(p, content, re.MULTILINE) for p in _MARKDOWN.get(md_type, ()))


def prefix_suffix(content: str, prefix: Optional[str] = None, suffix: Optional[str] = None) -> bool:
    """Starts with ``prefix``; ends with ``suffix``, possibly followed by punctuation (not by whitespace)."""
    if prefix and not content.startswith(prefix):
        return False
    if not suffix:
        return True
    if content.endswith(suffix):
        return True
    body = content.rstrip(_SUFFIX_TRAIL)
    return body != "" and body.endswith(suffix)


def delimiter(content: str, symbol: str) -> bool:
    """``symbol`` splits the text into at least two non-blank parts."""
    return symbol in content and sum(1 for part in content.split(symbol) if part.strip()) >= 2


def _without_list_markers(content: str) -> str:
    out = []
    for line in content.split("\n"):
        match = next((m for p in _LIST_PREFIX if (m := re.match(p, line))), None)
        out.append(line[match.end() :] if match else line)
    return "\n".join(out)


def measure(content: str, unit: str) -> Optional[int]:
    """The length of ``content`` in ``unit`` after list markers are removed; ``None`` for an unknown unit."""
    text = _without_list_markers(content)
    if unit == "word":
        return len(re.findall(_CJK, text)) + len(re.findall(_WORD, text))
    if unit == "sentence":
        return len(re.findall(r"[.!?。！？]+", text))
    if unit == "paragraph":
        return sum(1 for part in text.split("\n\n") if part.strip())
    if unit == "character":
        return len(text.replace(" ", ""))
    return None


def length(content: str, unit: str, min_len: int = 0, max_len: int = -1) -> bool:
    """``min_len <= length <= max_len`` in ``unit`` (``word``, ``sentence``, ``paragraph``, ``character``)."""
    count = measure(content, unit)
    return count is not None and _within(count, min_len, max_len)


def count(content: str, min_count: int = 0, max_count: int = -1) -> bool:
    """The number of ``(...)`` groups (the extractor writes each counted thing as one) is within bounds."""
    return _within(len(re.findall(r"\([^)]*\)", content)), min_count, max_count)


def case(content: str, case_type: str) -> bool:
    """The Latin words are all ``upper``, all ``lower``, or ``title`` (capitalised or acronyms, not all acronyms)."""
    words = re.findall(r"\b[a-zA-Z]+\b", content)
    if not words:
        return True
    if case_type == "upper":
        return " ".join(words).isupper()
    if case_type == "lower":
        return " ".join(words).islower()
    if case_type != "title":
        return False
    acronyms = 0
    for word in words:
        if word.isupper():
            acronyms += 1
        elif not (len(word) > 1 and word[0].isupper() and word[1:].islower()):
            return False
    return acronyms < len(words)


def language(content: str, lang_type: str) -> bool:
    """``en``: Latin letters and no CJK characters; ``zh``: the reverse (a character-class test)."""
    latin, cjk = len(re.findall(r"[a-zA-Z]", content)), len(re.findall(_CJK, content))
    if lang_type == "en":
        return latin > 0 and cjk == 0
    if lang_type == "zh":
        return cjk > 0 and latin == 0
    return False


CHECKS: dict[str, Callable[..., bool]] = {
    "plain_text": plain_text, "json_object": json_object, "json_array": json_array,
    "unordered_list": unordered_list, "ordered_list": ordered_list, "table": table, "keyword": keyword,
    "markdown": markdown, "prefix_suffix": prefix_suffix, "delimiter": delimiter, "length": length,
    "count": count, "case": case, "language": language,
}
"""Check by ``constraint_id`` (the keys are :data:`RULE_TYPES`)."""


def check_spans(constraint_id: str, spans: Sequence[str], parameters: dict[str, Any]) -> bool:
    """A rule item's result: every span passes the check (no span passes); ``parameters`` without ``content``.

    Raises ``KeyError`` for an unknown constraint, ``TypeError`` for parameters the check does not take and
    ``jsonschema.SchemaError`` for a bad schema.
    """
    check = CHECKS[constraint_id]
    params = {k: v for k, v in parameters.items() if k != "content"}
    return all([check(span, **params) for span in spans])
