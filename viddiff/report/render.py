"""Render view-models to HTML with Jinja2 (autoescape on) and write the files.

Every value reaches the markup through the template engine, which escapes it; nothing is
concatenated into HTML by hand. Pages are written ASCII-only (other characters as numeric
references), so they read the same in any browser whatever the file system's locale.
"""

from __future__ import annotations

from pathlib import Path
from typing import Union

import jinja2

from viddiff.report.views import IndexPage, ReportPage, TaskPage
from viddiff.store import write_text_atomic


def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("viddiff.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render_page(page: Union[ReportPage, IndexPage, TaskPage], env: jinja2.Environment | None = None) -> str:
    env = env or environment()
    template = {IndexPage: "index.html.j2", TaskPage: "task_group.html.j2"}.get(type(page), "comparison.html.j2")
    video_note = ""
    if isinstance(page, ReportPage):
        embedded = any(v.embedded for v in page.videos)
        video_note = "embedded" if embedded else "linked by a path relative to this page (not copied)"
    html = env.get_template(template).render(page=page, title=page.title, version=page.version, video_note=video_note)
    return html.encode("ascii", "xmlcharrefreplace").decode("ascii")


def write_page(path: Path, page: Union[ReportPage, IndexPage, TaskPage], env: jinja2.Environment | None = None) -> Path:
    write_text_atomic(path, render_page(page, env))
    return path
