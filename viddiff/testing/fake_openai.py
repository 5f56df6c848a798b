"""A local OpenAI-compatible chat server for tests and benchmarks.

It is a real HTTP server on 127.0.0.1 (real sockets, so the real ``openai``
client is exercised end to end) that answers ``POST /v1/chat/completions``
with whatever a *responder* function returns, and ``GET /v1/models``.

It checks that requests are well formed the way a strict provider would:
a missing ``Authorization`` header is a 401; every image must be a base64
data URL whose MIME type matches the decoded bytes, otherwise 400. It can
inject failures deterministically (:class:`FaultPlan`) and records every
request (:attr:`FakeOpenAIServer.requests`) and the peak number of requests
in flight (:attr:`FakeOpenAIServer.max_in_flight`). Every response carries the
``X-Viddiff-Stand-In`` header, by which reports recognise a stand-in model.

Example::

    def responder(req: ChatRequest) -> str:
        return '{"answer": "a"}' if "squat" in req.text else '{"answer": "b"}'

    with FakeOpenAIServer(responder, latency_s=0.05) as server:
        cfg = EndpointsConfig(default=EndpointConfig(base_url=server.base_url))
        ...  # OPENAI_API_KEY must be set (any value)
        assert len(server.requests) == 1
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import random
import socket
import threading
import time
import traceback
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from types import TracebackType
from typing import Any, Callable, Optional, Sequence, Union

from PIL import Image

from viddiff.report.standins import STAND_IN_HEADER
from viddiff.testing.http_server import LocalHTTPServer

FAULT_KINDS = (
    "429", "500", "timeout", "malformed", "schema", "drop", "401", "403", "404", "400", "html", "trickle", "length"
)
"""Injectable failures: HTTP 429 (with Retry-After) / 500 / 401 / 403 / 404 / 400 (context length);
``timeout``: answer only after :attr:`FaultPlan.timeout_sleep_s`; ``malformed``: HTTP 200 with a
JSON body cut short; ``html``: HTTP 200 with a web page (a base_url pointing at a website);
``schema``: a valid completion whose content is JSON no caller schema expects; ``length``: HTTP 200 with
the responder's answer cut in half and ``finish_reason: "length"`` (an answer stopped at max_tokens); ``drop``: close the
connection without any response; ``trickle``: the right answer, one byte every
:attr:`FaultPlan.trickle_interval_s` (a stalled proxy: each read succeeds, the whole never ends)."""

_FORMAT_MIME = {"JPEG": "image/jpeg", "PNG": "image/png", "WEBP": "image/webp", "GIF": "image/gif"}
SCHEMA_FAULT_CONTENT = '{"fake_fault": "schema violation"}'


@dataclass
class Reply:
    """What a responder returns when it wants to set token counts (or to trickle its answer)."""

    content: str
    prompt_tokens: int = 10
    completion_tokens: int = 5
    trickle_s: Optional[float] = None
    """Send this answer one byte every ``trickle_s`` seconds (a stalled proxy, for one request only)."""


@dataclass
class ImagePart:
    """One decoded image of a request."""

    image: Image.Image
    mime: str
    detail: Optional[str]

    @property
    def size(self) -> tuple[int, int]:
        return self.image.size


@dataclass
class VideoPart:
    """One ``video_url`` part of a request (as vLLM accepts it); kept encoded, tests decode what they need."""

    mime: str
    data: bytes


@dataclass
class ChatRequest:
    """A parsed ``/v1/chat/completions`` request as the server saw it."""

    index: int
    """Arrival order, from 0 (also the counter that :class:`FaultPlan` uses)."""
    body: dict[str, Any]
    headers: dict[str, str]
    """Request headers, names lower-cased."""
    texts: list[str] = field(default_factory=list)
    """Every text part of every message, in order (string contents count as one part)."""
    images: list[ImagePart] = field(default_factory=list)
    videos: list[VideoPart] = field(default_factory=list)
    """``video_url`` parts in order (base64 ``data:video/...`` URLs only)."""
    faulted: Optional[str] = None
    """Fault kind injected into this request, if any."""
    rejected: Optional[str] = None
    """Why the server refused the request (401/400), if it did."""

    @property
    def model(self) -> str:
        return str(self.body.get("model", ""))

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages") or [])

    @property
    def response_format(self) -> Optional[dict[str, Any]]:
        return self.body.get("response_format")

    @property
    def json_schema(self) -> Optional[dict[str, Any]]:
        """The JSON schema of a ``json_schema`` response format, else ``None``."""
        rf = self.response_format or {}
        return (rf.get("json_schema") or {}).get("schema") if rf.get("type") == "json_schema" else None

    @property
    def text(self) -> str:
        """All text parts joined by newlines, for substring checks in responders."""
        return "\n".join(self.texts)

    @property
    def has_auth(self) -> bool:
        return bool(self.headers.get("authorization"))

    @property
    def api_key(self) -> Optional[str]:
        value = self.headers.get("authorization", "")
        return value[len("Bearer ") :] if value.startswith("Bearer ") else None


Responder = Callable[[ChatRequest], Union[str, Reply]]


class HTTPFault(Exception):
    """Raised by a responder to answer one request with an HTTP error, e.g. a 400 for one sample's
    over-long prompt: ``raise HTTPFault(400, "context length exceeded")``; ``headers`` are added to
    the answer (e.g. ``{"retry-after-ms": "250"}``)."""

    def __init__(self, status: int, message: str, code: Optional[str] = None, headers: Optional[dict[str, str]] = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.headers = dict(headers or {})


@dataclass
class FaultPlan:
    """Which requests fail and how, deterministically by request index.

    ``sequence`` gives the fault of the first requests in order (``"ok"`` or
    ``None`` = no fault), e.g. ``FaultPlan(sequence=["429", "500"])`` fails the
    first two requests and serves the rest. After the sequence, each request
    fails with probability ``rate`` with a kind drawn from ``kinds``, decided
    by a generator seeded with ``(seed, index)`` so a run is reproducible
    regardless of thread timing.
    """

    sequence: Sequence[Optional[str]] = ()
    rate: float = 0.0
    kinds: Sequence[str] = ("429", "500", "timeout", "malformed", "drop")
    seed: int = 0
    retry_after_s: float = 0.0
    """``Retry-After`` header value of 429 answers."""
    timeout_sleep_s: float = 1.0
    """How long a ``timeout`` fault stalls; set it above the client's timeout."""
    trickle_interval_s: float = 0.2
    """Pause between the bytes of a ``trickle`` answer."""

    def __post_init__(self) -> None:
        unknown = sorted({k for k in [*self.sequence, *self.kinds] if k not in (None, "ok", *FAULT_KINDS)})
        if unknown:
            raise ValueError(f"unknown fault kinds {unknown}; use one of {FAULT_KINDS}")
        if not 0.0 <= self.rate <= 1.0:
            raise ValueError(f"fault rate must be in [0, 1], got {self.rate}")

    def fault_for(self, index: int) -> Optional[str]:
        if index < len(self.sequence):
            kind = self.sequence[index]
            return None if kind in (None, "ok") else kind
        if self.rate <= 0 or not self.kinds:
            return None
        rng = random.Random(f"{self.seed}:{index}")
        return rng.choice(list(self.kinds)) if rng.random() < self.rate else None


class _RejectError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


class FakeOpenAIServer:
    """OpenAI-compatible server in a background thread; use as a context manager.

    ``responder`` maps a :class:`ChatRequest` to the assistant's content; if it
    is ``None`` or raises, the server answers HTTP 500 with the error text (kept
    in :attr:`responder_errors`). ``latency_s`` delays every chat answer, which
    makes concurrency observable through :attr:`max_in_flight`.
    """

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        latency_s: float = 0.0,
        faults: FaultPlan | None = None,
        models: Sequence[str] = ("fake-model",),
        port: int = 0,
        report_usage: bool = True,
    ):
        self.responder = responder
        self.report_usage = report_usage
        """``False``: completions carry no ``usage`` (as many local servers answer)."""
        self.port_requested = port
        self.latency_s = latency_s
        self.faults = faults or FaultPlan()
        self.models = list(models)
        self.requests: list[ChatRequest] = []
        self.responder_errors: list[str] = []
        self.max_in_flight = 0
        self._in_flight = 0
        self._counter = 0
        self._lock = threading.Lock()
        self._port: Optional[int] = None
        self._httpd: Optional[LocalHTTPServer] = None
        self._thread: Optional[threading.Thread] = None

    # ------------------------------------------------------------------ lifecycle

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1`` (still readable after :meth:`stop`, for messages in assertions)."""
        if self._port is None:
            raise RuntimeError("FakeOpenAIServer is not started; use it as a context manager or call start()")
        return f"http://127.0.0.1:{self._port}/v1"

    def start(self) -> "FakeOpenAIServer":
        handler = type("_BoundHandler", (_Handler,), {"server_state": self})
        httpd = LocalHTTPServer(("127.0.0.1", self.port_requested), handler)
        self._httpd = httpd
        self._port = int(httpd.server_address[1])
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-openai", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> "FakeOpenAIServer":
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def open_connections(self, settle_s: float = 5.0) -> int:
        """Connections a client still holds open, after waiting up to ``settle_s`` for hang-ups to arrive:
        a client that closed its HTTP pool leaves none."""
        if self._httpd is None:
            raise RuntimeError("FakeOpenAIServer is not started")
        return self._httpd.wait_until_closed(settle_s)

    def reset_log(self) -> None:
        """Forget logged requests, responder errors and the in-flight peak (the fault counter keeps counting)."""
        with self._lock:
            self.requests.clear()
            self.responder_errors.clear()
            self.max_in_flight = self._in_flight

    # ------------------------------------------------------------------ bookkeeping used by the handler

    def _enter(self) -> int:
        with self._lock:
            index = self._counter
            self._counter += 1
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            return index

    def _leave(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _log(self, request: ChatRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _respond(self, request: ChatRequest) -> Reply:
        if self.responder is None:
            raise RuntimeError("no responder: pass FakeOpenAIServer(responder=...)")
        result = self.responder(request)
        return result if isinstance(result, Reply) else Reply(content=str(result))


def request_from_messages(messages: list[dict[str, Any]], model: str = "in-process") -> ChatRequest:
    """The :class:`ChatRequest` this server would parse from ``messages``, for driving a responder (such as
    ``ScriptedModel``) in-process, without HTTP; malformed messages raise ``ValueError``."""
    try:
        return _parse_request(0, {"model": model, "messages": messages}, {})
    except _RejectError as exc:
        raise ValueError(str(exc)) from None


def _parse_request(index: int, body: dict[str, Any], headers: dict[str, str]) -> ChatRequest:
    """Collect texts and decode images; raise :class:`_RejectError` (400) on malformed content."""
    req = ChatRequest(index=index, body=body, headers=headers)
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _RejectError(400, "'messages' must be a non-empty list")
    if not body.get("model"):
        raise _RejectError(400, "'model' is required")
    for i, message in enumerate(messages):
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            req.texts.append(content)
            continue
        if not isinstance(content, list):
            raise _RejectError(400, f"messages[{i}].content must be a string or a list of parts")
        for j, part in enumerate(content):
            where = f"messages[{i}].content[{j}]"
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text":
                req.texts.append(str(part.get("text", "")))
            elif kind == "image_url":
                image = part.get("image_url") or {}
                req.images.append(_decode_image(str(image.get("url", "")), image.get("detail"), where))
            elif kind == "video_url":
                video = part.get("video_url") or {}
                req.videos.append(_decode_video(str(video.get("url", "")), where))
            else:
                raise _RejectError(400, f"{where}: unsupported part type {kind!r}")
    return req


def _decode_image(url: str, detail: Optional[str], where: str) -> ImagePart:
    head, sep, payload = url.partition(",")
    if not (url.startswith("data:") and sep and head.endswith(";base64")):
        raise _RejectError(400, f"{where}: image_url must be a base64 data URL (got {url[:30]!r})")
    mime = head[len("data:") : -len(";base64")]
    try:
        data = base64.b64decode(payload, validate=True)
        image = Image.open(io.BytesIO(data))
        image.load()
    except (binascii.Error, ValueError, OSError) as exc:
        raise _RejectError(400, f"{where}: image could not be decoded ({exc})") from None
    actual = _FORMAT_MIME.get(image.format or "")
    if actual != mime:
        raise _RejectError(400, f"{where}: data URL says {mime} but the bytes are {image.format}")
    if detail not in (None, "auto", "low", "high"):
        raise _RejectError(400, f"{where}: invalid detail {detail!r}")
    return ImagePart(image=image, mime=mime, detail=detail)


def _decode_video(url: str, where: str) -> VideoPart:
    head, sep, payload = url.partition(",")
    if not (url.startswith("data:video/") and sep and head.endswith(";base64")):
        raise _RejectError(400, f"{where}: video_url must be a base64 data:video/... URL (got {url[:30]!r})")
    try:
        data = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise _RejectError(400, f"{where}: video data URL has invalid base64 ({exc})") from None
    return VideoPart(mime=head[len("data:") : -len(";base64")], data=data)


def _completion(model: str, reply: Reply, finish_reason: str = "stop") -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:16]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply.content},
                "finish_reason": finish_reason,
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
            "total_tokens": reply.prompt_tokens + reply.completion_tokens,
        },
    }


_ERROR_TEXT = {
    "401": (401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided (injected fault)."),
    "404": (404, "invalid_request_error", "model_not_found", "The model does not exist (injected fault)."),
    "403": (403, "permission_error", None, "Your key may not use this model (injected fault)."),
    "400": (
        400,
        "invalid_request_error",
        "context_length_exceeded",
        "This model's maximum context length is 128000 tokens (injected fault).",
    ),
    "429": (429, "rate_limit_error", "rate_limit_exceeded", "Rate limit reached (injected fault)."),
    "500": (500, "server_error", None, "The server had an error (injected fault)."),
}


class _Handler(BaseHTTPRequestHandler):
    """Request handler; ``server_state`` is bound to the owning :class:`FakeOpenAIServer`."""

    server_state: FakeOpenAIServer
    protocol_version = "HTTP/1.1"
    timeout = 60
    disable_nagle_algorithm = True
    """Headers and body go out in separate writes; with Nagle on, delayed ACKs add ~40 ms per answer."""
    _in_flight = False

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        """Silence the default per-request stderr line."""

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        if self.path.rstrip("/") != "/v1/models":
            self._send_error(404, "invalid_request_error", None, f"unknown path {self.path}")
            return
        data = [{"id": m, "object": "model", "created": 0, "owned_by": "viddiff-fake"} for m in self.server_state.models]
        self._send_json(200, {"object": "list", "data": data})

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send_error(404, "invalid_request_error", None, f"unknown path {self.path}")
            return
        state = self.server_state
        index = state._enter()
        self._in_flight = True
        try:
            self._chat(state, index, raw)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (e.g. its timeout); nothing to answer
        finally:
            self._release()

    def _release(self) -> None:
        """End this request's in-flight span before answering, so a client that sends its next
        request as soon as it reads this answer is never counted twice."""
        if self._in_flight:
            self._in_flight = False
            self.server_state._leave()

    def _chat(self, state: FakeOpenAIServer, index: int, raw: bytes) -> None:
        headers = {k.lower(): v for k, v in self.headers.items()}
        try:
            body = json.loads(raw)
            if not isinstance(body, dict):
                raise ValueError("top level is not an object")
        except ValueError as exc:
            state._log(ChatRequest(index=index, body={}, headers=headers, rejected=f"invalid JSON body: {exc}"))
            self._send_error(400, "invalid_request_error", None, f"request body is not valid JSON: {exc}")
            return
        try:
            if not headers.get("authorization"):
                raise _RejectError(401, "missing Authorization header (no API key sent)")
            request = _parse_request(index, body, headers)
        except _RejectError as exc:
            state._log(ChatRequest(index=index, body=body, headers=headers, rejected=str(exc)))
            kind = "authentication_error" if exc.status == 401 else "invalid_request_error"
            self._send_error(exc.status, kind, None, str(exc))
            return
        request.faulted = state.faults.fault_for(index)
        state._log(request)
        if state.latency_s:
            time.sleep(state.latency_s)
        fault = request.faulted
        if fault == "drop":
            self._release()
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if fault == "timeout":
            time.sleep(state.faults.timeout_sleep_s)
        if fault == "malformed":
            self._send_bytes(200, b'{"id": "chatcmpl-broken", "choices": [', "application/json")
            return
        if fault == "html":
            page = b"<!doctype html><html><head><title>Welcome</title></head><body>It works!</body></html>"
            self._send_bytes(200, page, "text/html; charset=utf-8")
            return
        if fault in _ERROR_TEXT:
            status, kind, code, message = _ERROR_TEXT[fault]
            extra = {"Retry-After": f"{state.faults.retry_after_s:g}"} if fault == "429" else {}
            self._send_error(status, kind, code, message, extra)
            return
        if fault == "schema":
            self._send_json(200, _completion(request.model, Reply(content=SCHEMA_FAULT_CONTENT)))
            return
        try:
            reply = state._respond(request)
        except HTTPFault as exc:
            request.rejected = f"HTTP {exc.status}: {exc.message}"
            self._send_error(exc.status, "invalid_request_error", exc.code, exc.message, exc.headers)
            return
        except Exception as exc:  # a responder bug must surface as a 500 the test can see
            state.responder_errors.append("".join(traceback.format_exception_only(type(exc), exc)).strip())
            self._send_error(500, "server_error", None, f"responder failed: {exc}")
            return
        if fault == "length":
            reply = Reply(reply.content[: len(reply.content) // 2], reply.prompt_tokens, reply.completion_tokens)
        completion = _completion(request.model, reply, "length" if fault == "length" else "stop")
        if not state.report_usage:
            del completion["usage"]
        if fault == "trickle" or reply.trickle_s:
            interval = reply.trickle_s or state.faults.trickle_interval_s
            self._trickle(json.dumps(completion).encode("utf-8"), interval)
            return
        self._send_json(200, completion)

    def _trickle(self, data: bytes, interval_s: float) -> None:
        """Headers at once, then the body one byte at a time until done or the client hangs up."""
        self._release()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header(STAND_IN_HEADER, "viddiff-fake-openai")
        self.end_headers()
        self.wfile.flush()
        for i in range(len(data)):
            time.sleep(interval_s)
            self.wfile.write(data[i : i + 1])
            self.wfile.flush()

    def _send_error(
        self, status: int, kind: str, code: Optional[str], message: str, headers: Optional[dict[str, str]] = None
    ) -> None:
        body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
        self._send_json(status, body, headers)

    def _send_json(self, status: int, payload: Any, headers: Optional[dict[str, str]] = None) -> None:
        self._send_bytes(status, json.dumps(payload).encode("utf-8"), "application/json", headers)

    def _send_bytes(self, status: int, data: bytes, content_type: str, headers: Optional[dict[str, str]] = None) -> None:
        self._release()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header(STAND_IN_HEADER, "viddiff-fake-openai")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
