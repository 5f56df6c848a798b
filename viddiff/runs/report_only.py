"""``viddiff report RUN_DIR``: the HTML pages of a finished run, built or rebuilt from what the run wrote.

Nothing is run again and no model is called: the samples come from ``samples.jsonl``, the settings from
``config.yaml`` and ``run.json``, and the scores are computed again from the predictions (pages need each
sample's records, which ``metrics.json`` does not keep), with an open-mode judge's answers taken from the
cache the run filled (:class:`~viddiff.backends.llm.cache_only.CachedAnswersOnly`).
"""

from __future__ import annotations

import asyncio
import functools
import json
from pathlib import Path
from typing import Any

from viddiff import benchmarks
from viddiff.backends.llm.cache_only import CachedAnswersOnly
from viddiff.cache import open_cache
from viddiff.config import Config, load_config
from viddiff.errors import ConfigError, ViddiffError
from viddiff.methods import get_method
from viddiff.report.run import write_run_outputs
from viddiff.runs.failures import FailureLog
from viddiff.runs.output_lock import OutputDirLock
from viddiff.runs.pipeline import sanity_variant
from viddiff.runs.sample_runner import error_entries, latest_failures
from viddiff.store import ResultsStore


def rebuild_report(out_dir: Path, *, embed_videos: bool = False) -> Path:
    """Write ``out_dir/report/`` (index and one page per finished sample) for the run in ``out_dir``; the index."""
    out_dir = Path(out_dir)
    cfg, run_info = _saved_run(out_dir)
    with OutputDirLock(out_dir):  # not while a run (or another rebuild) writes there
        results = ResultsStore(out_dir).load()
        if not results:
            raise ViddiffError(
                f"{out_dir} holds no finished sample (samples.jsonl is empty or missing): nothing to report"
            )
        benchmark = benchmarks.of(cfg)
        mode = run_info["mode"]
        dataset = benchmark.load(cfg, run_info.get("splits"), fetch_videos=False)
        keys = {sample.sample_key for sample in dataset}
        unknown = sorted(set(results) - keys)
        if unknown:
            raise ViddiffError(
                f"{out_dir} holds {len(unknown)} sample(s) that its dataset ({cfg.data.dataset}) no longer has, e.g. "
                f"{unknown[0]}; the report needs the dataset the run used"
            )
        failures = latest_failures(FailureLog(out_dir).load(), keys - set(results))
        failed = frozenset(f.sample_key for f in failures)
        predictions = benchmark.predictions(dataset, results, mode, failed)
        client = CachedAnswersOnly(cfg.endpoints, open_cache(cfg.cache), cfg.cache.cache_nonzero_temperature)
        method = get_method(run_info["method"])(cfg)
        try:
            metrics = benchmark.score(dataset, predictions, mode, cfg, client)
            method_calls = list(method.model_calls().items())
        finally:
            asyncio.run(method.aclose())
        variant = functools.partial(sanity_variant, swap_videos=cfg.run.swap_videos, same_video=cfg.run.same_video)
        index = write_run_outputs(
            out_dir, benchmark, dataset, results, metrics, cfg, mode, error_entries(failures), variant=variant,
            report=True, visuals=False, embed_videos=embed_videos, method_calls=method_calls,
        )
    assert index is not None  # report=True always writes the index
    return index


def _saved_run(out_dir: Path) -> tuple[Config, dict[str, Any]]:
    """The run's config and ``run.json`` (mode, splits, method), or an error saying what is missing."""
    if not out_dir.is_dir():
        raise ViddiffError(f"{out_dir}: no such directory (give the --output of a finished viddiff run)")
    config_file, run_file = out_dir / "config.yaml", out_dir / "run.json"
    if not config_file.is_file() or not run_file.is_file():
        raise ViddiffError(
            f"{out_dir} has no config.yaml and run.json: it is not the output of viddiff run or viddiff baseline"
        )
    try:
        cfg = load_config(config_file)
        run_info = json.loads(run_file.read_text())
    except (ConfigError, ValueError, OSError) as exc:
        raise ViddiffError(f"cannot read the run in {out_dir}: {exc}") from None
    if not isinstance(run_info, dict) or "mode" not in run_info or "method" not in run_info:
        raise ViddiffError(f"{run_file} does not say the run's mode and method; it was not written by viddiff run")
    return cfg, run_info
