"""HTML comparison reports: one self-contained static page per comparison, plus a run's index page.

``viddiff compare A B ... --report out.html`` and ``viddiff run ... --report`` write them; from
Python, ``write_comparison_report(path, await vd.arun_pair(sample, mode), config)``. Pages are
rendered from pydantic view-models (``views.py``) by Jinja2 templates with autoescaping, so text
from a model or a dataset always renders as text.
"""

__all__ = ["write_comparison_report"]


def __getattr__(name: str):
    # Lazy, so the light helpers (timeline, media) used by ``viddiff.report.figures`` do not pull in the page builder.
    if name == "write_comparison_report":
        from viddiff.report.pages import write_comparison_report

        return write_comparison_report
    raise AttributeError(f"module 'viddiff.report' has no attribute {name!r}")
