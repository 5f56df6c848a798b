"""Which models behind a report are stand-ins, so nobody mistakes a demo for a result.

Two kinds of stand-in exist in this project:

- **random CLIP weights**: ``localizer.clip.pretrained`` is null and no ``checkpoint`` is set. The
  config alone decides it: open_clip then builds the architecture with random weights.
- **the scripted model server** (``viddiff.testing.fake_openai`` / ``python -m viddiff.testing.serve``):
  the config cannot tell it apart from a real local server (vLLM, Ollama, llama.cpp also listen on
  127.0.0.1), and the model name is whatever the config asks for. The server therefore marks every
  response with the ``X-Viddiff-Stand-In`` header; a report asks each *loopback* endpoint once
  (``GET /models`` through the openai SDK, short timeout, a placeholder key) and trusts the header.
  Remote endpoints are never contacted. A loopback endpoint that does not answer at report time
  cannot be identified, and the banner says so rather than guessing either way.
"""

from __future__ import annotations

import ipaddress
import logging
import os
from typing import Callable, Iterable, Optional, Sequence
from urllib.parse import urlsplit

from viddiff.backends.embedders import DEFAULT_EMBEDDER
from viddiff.config import Config, EndpointConfig, ModelCallConfig
from viddiff.localizer.localize import needs_clip
from viddiff.report.views import ModelEntry, StandInView
from viddiff.schema import SampleResult

log = logging.getLogger(__name__)
STAND_IN_HEADER = "X-Viddiff-Stand-In"
"""Response header the local fake server (``viddiff.testing``) sends on every answer, so reports can tell a
scripted stand-in from a real model server on the same loopback address."""
PROBE_TIMEOUT_S = 3.0
DEFAULT_ENDPOINT = "https://api.openai.com/v1"
UNIDENTIFIED = "answered by a local server"
"""How a banner line about a loopback server that did not answer the probe begins."""

Probe = Callable[[str], Optional[bool]]
"""``base_url`` → True (a stand-in), False (some other server), None (no answer)."""


def model_roles(
    cfg: Config,
    judges: Sequence[tuple[str, ModelCallConfig]] = (),
    method_calls: Optional[Sequence[tuple[str, ModelCallConfig]]] = None,
) -> list[tuple[str, ModelCallConfig]]:
    """The chat models that produced a result, by role (``method_calls``: the method's ``model_calls()``;
    VidDiff's by default), then those that scored it (``judges``: see ``Benchmark.judge_calls``)."""
    produced = [("proposer", cfg.proposer), ("differencer", cfg.differencer)] if method_calls is None else method_calls
    return [*produced, *judges]


def resolved_base_url(cfg: Config, call: ModelCallConfig, environ: dict[str, str]) -> str:
    """Where a stage's requests go: its own endpoint, else ``endpoints.default``, else ``OPENAI_BASE_URL``."""
    endpoint: EndpointConfig = call.endpoint or cfg.endpoints.default
    return endpoint.base_url or environ.get("OPENAI_BASE_URL") or DEFAULT_ENDPOINT


def display_url(url: str) -> str:
    """The URL without user-info (``https://user:secret@host`` must not reach a page)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}" if parts.scheme else url


def is_loopback(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def model_entries(
    cfg: Config, roles: list[tuple[str, ModelCallConfig]], environ: dict[str, str], *, clip_used: bool = True
) -> list[ModelEntry]:
    """The chat models by role, then the embedder when it embedded anything (``clip_used``)."""
    entries = [
        ModelEntry(role=role, model=call.model, where=display_url(resolved_base_url(cfg, call, environ)))
        for role, call in roles
    ]
    if not clip_used:
        return entries
    clip = cfg.localizer.clip
    if clip.backend == DEFAULT_EMBEDDER:
        entries.append(ModelEntry(role="CLIP", model=clip.model, where=f"in-process, {clip_weights(cfg)}"))
    else:
        entries.append(ModelEntry(role="embedder", model=clip.backend, where="in-process, a plug-in embedder"))
    return entries


def localised_with_clip(cfg: Config, results: Iterable[SampleResult]) -> bool:
    """Whether CLIP localised a difference of any of ``results`` (an LMM baseline's never does)."""
    return any(r.proposal is not None and needs_clip(cfg.localizer.method, r.proposal.differences) for r in results)


def clip_weights(cfg: Config) -> str:
    """What open_clip loads for this config: a checkpoint, a pretrained tag, or random weights."""
    clip = cfg.localizer.clip
    return clip.checkpoint or clip.pretrained or "random weights"


def probe_endpoint(base_url: str, timeout_s: float = PROBE_TIMEOUT_S) -> Optional[bool]:
    """Ask a loopback server whether it is viddiff's scripted stand-in (see the module docstring)."""
    import openai

    client = openai.OpenAI(base_url=base_url, api_key="viddiff-report-probe", max_retries=0, timeout=timeout_s)
    try:
        headers = client.models.with_raw_response.list().headers
    except openai.APIStatusError as exc:  # e.g. a vLLM server that wants a key: it answered, it is not ours
        headers = exc.response.headers
    except (openai.APIConnectionError, openai.APIResponseValidationError) as exc:
        log.info("could not identify the server at %s (%s)", display_url(base_url), type(exc).__name__)
        return None
    finally:
        client.close()
    return STAND_IN_HEADER in headers


def endpoint_stand_ins(
    cfg: Config, roles: list[tuple[str, ModelCallConfig]], environ: dict[str, str], probe: Probe = probe_endpoint
) -> list[StandInView]:
    """Banner lines for roles served by the scripted stand-in (or by an unidentifiable local server)."""
    by_url: dict[str, list[str]] = {}
    for role, call in roles:
        url = resolved_base_url(cfg, call, environ)
        if is_loopback(url):
            by_url.setdefault(url, []).append(f"{role} ({call.model})")
    out = []
    for url, who in by_url.items():
        verdict = probe(url)
        shown = display_url(url)
        if verdict:
            out.append(
                StandInView(
                    component=", ".join(who),
                    reason=f"answered by viddiff's scripted stand-in server at {shown}: its answers are computed "
                    "from image brightness and fixed templates, not from understanding the videos",
                )
            )
        elif verdict is None:
            out.append(
                StandInView(
                    component=", ".join(who),
                    reason=f"{UNIDENTIFIED} at {shown} that did not respond when this report was "
                    "written, so it could not be identified; if it was viddiff's scripted stand-in "
                    "(viddiff.testing.serve), the verdicts are meaningless",
                )
            )
    return out


def clip_stand_in(cfg: Config) -> Optional[StandInView]:
    """Banner line when CLIP ran with random weights (only matters where CLIP localised something).

    Only open_clip's settings say that; a plug-in embedder's weights are its own business and get no claim."""
    clip = cfg.localizer.clip
    if clip.backend != DEFAULT_EMBEDDER or clip_weights(cfg) != "random weights":
        return None
    return StandInView(
        component=f"CLIP ({clip.model})",
        reason="random weights (localizer.clip.pretrained is null and no checkpoint): the stage segmentation "
        "and the keyframes it picked are arbitrary",
    )


MAYBE_STAND_IN_NOTICE = "NOTE: a local server that could not be identified may have been a stand-in"
STAND_IN_NOTICE = "NOTE: stand-ins, not models, produced these results: {shown} say nothing about the method"
"""``shown`` names what the command printed, in the plural (a comparison has verdicts, a run has scores)."""
RUN_SHOWS = "the scores, p-values and estimated cost of this run"
COMPARE_SHOWS = "the verdicts and keyframes above"
DESCRIBE_SHOWS = "the sentences of this description"
AUDIT_SHOWS = "the rates and accuracies of this audit"
ABLATION_SHOWS = "the accuracies of this ablation"

STAND_IN_NOTE = "stand-in: "
"""How each line of :func:`note_lines` begins."""


def stand_in_views(cfg: Config, roles: list[tuple[str, ModelCallConfig]], *, clip_used: bool) -> list[StandInView]:
    """The stand-ins among ``roles`` (one probe per loopback endpoint) and CLIP when it embedded something."""
    views = endpoint_stand_ins(cfg, roles, dict(os.environ))
    clip = clip_stand_in(cfg) if clip_used else None
    return [*views, clip] if clip is not None else views


def note_lines(views: Sequence[StandInView]) -> list[str]:
    """One line per stand-in, each beginning with :data:`STAND_IN_NOTE`, for results that carry notes (the Python
    API's, ``compare --json``): the result itself says it, wherever it is shown."""
    return [f"{STAND_IN_NOTE}{view.component}: {view.reason}" for view in views]


def notice_of(views: Sequence[StandInView], shown: str) -> str:
    """The console's (and ``report.md``'s) version of the report banner: ``""`` when no stand-in was involved,
    else :data:`STAND_IN_NOTICE` naming what the command ``shown`` (e.g. :data:`RUN_SHOWS`) and one indented line
    per stand-in (see :func:`stand_in_views`)."""
    if not views:
        return ""
    certain = any(not view.reason.startswith(UNIDENTIFIED) for view in views)
    head = STAND_IN_NOTICE.format(shown=shown) if certain else MAYBE_STAND_IN_NOTICE
    return "\n".join([head, *(f"  - {view.component}: {view.reason}" for view in views)])


def distinct(views: Iterable[StandInView]) -> list[StandInView]:
    """``views`` without repeats, in order: a command made of several runs names each stand-in once."""
    kept: list[StandInView] = []
    for view in views:
        if view not in kept:
            kept.append(view)
    return kept


def notice_from_notes(notes: Sequence[str], shown: str) -> str:
    """:func:`notice_of` for the lines of :func:`note_lines` (what a command keeps in its JSON, e.g. ablate's rows)."""
    views = [
        StandInView(component=component, reason=reason)
        for component, _, reason in (note.removeprefix(STAND_IN_NOTE).partition(": ") for note in notes)
    ]
    return notice_of(distinct(views), shown)
