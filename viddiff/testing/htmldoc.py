"""A minimal DOM from the standard library's HTML parser, for tests that read generated pages.

Parsing (rather than searching the text) is what proves escaping: a ``<script>`` smuggled in a
model's answer must come out as text of its element, not as an element.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Iterator, Optional

VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"})


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    children: list["Element | str"] = field(default_factory=list)
    parent: Optional["Element"] = None

    def iter(self) -> Iterator["Element"]:
        for child in self.children:
            if isinstance(child, Element):
                yield child
                yield from child.iter()

    def find_all(self, tag: Optional[str] = None, *, cls: Optional[str] = None, **attrs: str) -> list["Element"]:
        """Descendants by tag, by one class name, and by exact attribute values (``data_x`` means ``data-x``)."""
        wanted = {k.replace("_", "-"): v for k, v in attrs.items()}
        return [
            e
            for e in self.iter()
            if (tag is None or e.tag == tag)
            and (cls is None or cls in e.attrs.get("class", "").split())
            and all(e.attrs.get(k) == v for k, v in wanted.items())
        ]

    def find(self, tag: Optional[str] = None, *, cls: Optional[str] = None, **attrs: str) -> "Element":
        found = self.find_all(tag, cls=cls, **attrs)
        if not found:
            raise LookupError(f"no <{tag or '*'}> with class={cls!r} {attrs} in <{self.tag}>")
        return found[0]

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def ancestors(self) -> Iterator["Element"]:
        node = self.parent
        while node is not None:
            yield node
            node = node.parent


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, Optional[str]]]) -> None:
        element = Element(tag, {k: v or "" for k, v in attrs}, parent=self.stack[-1])
        self.stack[-1].children.append(element)
        if tag not in VOID:
            self.stack.append(element)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, Optional[str]]]) -> None:
        self.stack[-1].children.append(Element(tag, {k: v or "" for k, v in attrs}, parent=self.stack[-1]))

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return
        raise ValueError(f"stray </{tag}>")

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse_html(text: str) -> Element:
    """The document tree; unbalanced markup (an unclosed element, a stray end tag) is an error."""
    builder = _Builder()
    builder.feed(text)
    builder.close()
    if len(builder.stack) != 1:
        raise ValueError(f"unclosed elements: {[e.tag for e in builder.stack[1:]]}")
    return builder.root
