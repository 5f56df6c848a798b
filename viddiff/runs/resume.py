"""Which config changes ``--resume`` accepts: those that cannot change any sample's result.

A resumed run mixes samples done before with samples done now, so every
setting that shapes an answer (models, temperatures, seeds, endpoints'
base URLs, response format, fps, localizer, differencer options, images,
data selection by split, evaluation) must be the same. Settings that only
decide how hard, how fast, where to cache or how much to spend may change:
that is what the advice in error messages ("raise endpoints.timeout_s")
asks the user to do.
"""

from __future__ import annotations

import fnmatch
import json
import types
import typing
from pathlib import Path
from typing import Any, Optional

import yaml
from pydantic import BaseModel

from viddiff.config import Config
from viddiff.errors import ViddiffError

MAY_CHANGE_ON_RESUME: dict[str, str] = {
    "endpoints.max_concurrency": "requests in flight",
    "endpoints.max_retries": "retries of failed requests",
    "endpoints.backoff_base_s": "waits between retries",
    "endpoints.backoff_max_s": "waits between retries",
    "endpoints.timeout_s": "per-request deadline",
    "endpoints.max_reasks": "re-asks after invalid answers",
    "endpoints.max_prompt_chars": "size cap on requests",
    "endpoints.max_answer_chars": "size cap on answers",
    "endpoints.prices": "cost estimates",
    "endpoints.default.api_key_env": "which variable holds the key",
    "*.endpoint.api_key_env": "which variable holds the key",
    "cache": "where answers are cached",
    "run.output_dir": "where results go",
    "run.max_samples_in_flight": "samples processed at once",
    "run.max_cost_usd": "the budget",
    "run.save_visuals": "extra plots",
    "run.overlap_stages": "the order steps run in (results are the same)",
    "run.executor": "where samples run (results are the same)",
    "ray": "the Ray actors samples run on (results are the same)",
    "eval.max_reasks": "re-asks of the judge",
    "data.hf_cache_dir": "where downloads are kept",
    "data.limit": "how many samples are selected (finished ones must stay selected)",
    "data.subset_per_action": "how many samples are selected (finished ones must stay selected)",
    "data.max_text_chars": "which rows load (finished ones must stay selected)",
    "data.allow_paths_outside_root": "which rows load (finished ones must stay selected)",
    "localizer.clip.threads": "CPU threads for CLIP",
    "localizer.clip.batch_wait_ms": "how long frames wait for a shared batch",
}
"""Dotted config keys (or their parents, or ``fnmatch`` patterns) that may differ on ``--resume``."""


def check_resume(out_dir: Path, cfg: Config, run_info: dict[str, Any]) -> None:
    """Refuse to resume ``out_dir`` if the run it holds was made with settings that change results."""
    saved_cfg, saved_run = out_dir / "config.yaml", out_dir / "run.json"
    if not saved_cfg.exists() or not saved_run.exists():
        raise ViddiffError(f"{out_dir} holds results but no config.yaml/run.json; it was not made by viddiff run")
    try:
        old = yaml.safe_load(saved_cfg.read_text())
        old_run = json.loads(saved_run.read_text())
    except (yaml.YAMLError, ValueError, OSError) as exc:
        raise ViddiffError(f"cannot resume {out_dir}: its config.yaml/run.json is unreadable ({exc})") from None
    changed = result_changing_differences(old if isinstance(old, dict) else {}, cfg.model_dump(mode="json"))
    if changed:
        shown = "; ".join(f"{key} ({_short(a)} → {_short(b)})" for key, a, b in changed[:6])
        more = f" and {len(changed) - 6} more" if len(changed) > 6 else ""
        raise ViddiffError(
            f"cannot resume {out_dir}: these settings would change results and differ from its config.yaml: "
            f"{shown}{more}; resume with the original values, or use a new --output"
        )
    run_changed = [k for k in run_info if k in old_run and old_run[k] != run_info[k]]
    if run_changed:
        raise ViddiffError(
            f"cannot resume {out_dir}: {', '.join(run_changed)} changed since the run started; use a new --output"
        )


def result_changing_differences(old: dict[str, Any], new: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """``(key, old value, new value)`` for every differing key not in :data:`MAY_CHANGE_ON_RESUME`.

    Keys missing from an older ``config.yaml`` (settings added since) count as their defaults.
    """
    filled = _with_defaults(Config, old)
    return [(key, a, b) for key, a, b in _differences(filled, new) if not may_change(key)]


def may_change(key: str) -> bool:
    parts = key.split(".")
    prefixes = {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
    return any(
        allowed in prefixes or any(fnmatch.fnmatchcase(p, allowed) for p in prefixes)
        for allowed in MAY_CHANGE_ON_RESUME
    )


def _with_defaults(section: type[BaseModel], old: dict[str, Any]) -> dict[str, Any]:
    """``old`` with the defaults of config fields it lacks; free-form mappings (prices, fps) are kept as they are."""
    out = dict(old)
    defaults = section().model_dump(mode="json")
    for name, field in section.model_fields.items():
        sub = _section_type(field.annotation)
        if name not in old:
            out[name] = defaults[name]
        elif sub is not None and isinstance(old[name], dict):
            out[name] = _with_defaults(sub, old[name])
    return out


def _section_type(annotation: Any) -> Optional[type[BaseModel]]:
    """The config section class of a field (``Optional[X]`` included), or ``None`` for a plain value."""
    union = typing.get_origin(annotation) in (typing.Union, types.UnionType)
    for candidate in (annotation, *(typing.get_args(annotation) if union else ())):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def _differences(old: Any, new: Any, prefix: str = "") -> list[tuple[str, Any, Any]]:
    if isinstance(old, dict) and isinstance(new, dict):
        keys = sorted(set(old) | set(new))
        return [d for k in keys for d in _differences(old.get(k), new.get(k), f"{prefix}{k}.")]
    return [] if old == new else [(prefix.rstrip("."), old, new)]


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."
