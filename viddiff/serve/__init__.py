"""``viddiff serve``: the comparison service for app backends (docs/serve.md).

A face beside ``viddiff.commands`` and ``viddiff.api``: an HTTP API (FastAPI + uvicorn) over the same
``VidDiff``, with jobs, events and results in SQLite under ``--data-dir``, a bounded worker pool
(:mod:`viddiff.serve.executor`), API keys, limits and a web page. The web parts need the ``serve`` extra;
:mod:`viddiff.serve.executor` does not.
"""
