"""Judge prompt templates: named placeholders, users' own template files, and a hash of what was used.

A template is plain text with ``{name}`` placeholders. Only a brace pair around a bare identifier is a
placeholder; every other brace is literal text, so JSON examples need no escaping and a template written
for ``str.replace``-style filling (such as the authors' published judge prompts, once their placeholder
names are changed to the ones below) works as it is. Filled-in values are never scanned again, so a
difference description that happens to contain ``{gt}`` stays literal.

Each :class:`Family` (a judge's set of prompts, declared next to its ``prompt_files`` config section) has
fixed template names; each name has required and optional placeholders. A user file with an unknown placeholder, or without a required one, is refused
with one error naming the file and the allowed names, when the config is loaded, before any model call.
The answer format is not part of a template: it is fixed by the response schema the client sends.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Optional

from viddiff.errors import ConfigError

PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
BUILT_IN = "built-in"


@dataclass(frozen=True)
class Slots:
    """The placeholders one template may use: ``required`` must appear, ``optional`` may."""

    required: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()

    @property
    def allowed(self) -> tuple[str, ...]:
        return self.required + self.optional


@dataclass(frozen=True)
class Family:
    """The templates of one judge: their names and each one's placeholders."""

    name: str
    slots: Mapping[str, Slots]


class TemplateError(ConfigError):
    """A user template file is missing, unreadable, or uses placeholders its template does not have."""


@dataclass(frozen=True)
class Template:
    name: str
    text: str
    slots: Slots
    source: str = BUILT_IN
    """``built-in`` or the file the text was read from."""

    def render(self, **values: str) -> str:
        """The text with every placeholder replaced; ``values`` must cover all allowed placeholders."""
        missing = [name for name in self.slots.allowed if name not in values]
        if missing:
            raise ValueError(f"template {self.name!r}: no value given for {missing}")
        return PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), self.text)


@dataclass(frozen=True)
class TemplateSet:
    """The templates of one family as used for scoring, with the hash recorded in ``metrics.json``."""

    family: str
    """The :class:`Family` name (part of the hash)."""
    templates: dict[str, Template] = field(default_factory=dict)

    def __getitem__(self, name: str) -> Template:
        return self.templates[name]

    @property
    def sha256(self) -> str:
        """Hash of the exact texts (so two runs with equal hashes used identical judge prompts)."""
        payload = {"family": self.family, "templates": {n: t.text for n, t in sorted(self.templates.items())}}
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode("utf-8")).hexdigest()

    @property
    def sources(self) -> dict[str, str]:
        return {name: t.source for name, t in sorted(self.templates.items())}


def check_template(family: Family, name: str, text: str, source: str) -> Template:
    """``text`` as a template of ``family``/``name``, or a ``TemplateError`` saying what to fix."""
    slots = family.slots[name]
    if not text.strip():
        raise TemplateError(f"{source}: the {name!r} template is empty")
    used = set(PLACEHOLDER.findall(text))
    allowed = ", ".join("{" + p + "}" for p in slots.allowed) or "none"
    unknown = sorted(used - set(slots.allowed))
    if unknown:
        shown = ", ".join("{" + p + "}" for p in unknown)
        raise TemplateError(f"{source}: unknown placeholder(s) {shown} in the {name!r} template; allowed: {allowed}")
    missing = [p for p in slots.required if p not in used]
    if missing:
        shown = ", ".join("{" + p + "}" for p in missing)
        raise TemplateError(f"{source}: the {name!r} template must contain {shown} (allowed: {allowed})")
    return Template(name=name, text=text, slots=slots, source=source)


def read_template(family: Family, name: str, path: str) -> Template:
    """Read and check one user template file."""
    if name not in family.slots:
        raise TemplateError(f"no template named {name!r}; templates: {', '.join(family.slots)}")
    file = Path(path).expanduser()
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TemplateError(f"template file not found: {file} (prompt_files.{name})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TemplateError(f"cannot read template file {file} (prompt_files.{name}): {exc}") from None
    return check_template(family, name, text, str(file))


def load_templates(family: Family, files: Mapping[str, Optional[str]], built_in: Mapping[str, str]) -> TemplateSet:
    """The family's templates: each from its file when one is given, else the built-in text."""
    templates = {}
    for name in family.slots:
        path = files.get(name)
        if path:
            templates[name] = read_template(family, name, path)
        else:
            templates[name] = check_template(family, name, built_in[name], BUILT_IN)
    return TemplateSet(family=family.name, templates=templates)


def check_prompt_files(family: Family, files: Mapping[str, Optional[str]]) -> None:
    """Config-load check of the user files of ``family`` (built-in templates are checked by the tests)."""
    for name, path in files.items():
        if path:
            read_template(family, name, path)
