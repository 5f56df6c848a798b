"""``viddiff serve`` (``viddiff serve keys ...`` is :mod:`viddiff.serve.keys_command`)."""

from __future__ import annotations

import argparse
import ipaddress
import logging
from pathlib import Path

from viddiff.api import VidDiff
from viddiff.config import Config, config_from_args
from viddiff.errors import ViddiffError
from viddiff.serve.executor import LocalExecutor
from viddiff.serve.keys_command import STORE_FILE
from viddiff.serve.ownership import DataDirOwner

log = logging.getLogger(__name__)
GRACEFUL_SHUTDOWN_S = 5
"""Seconds a stopping server waits for open connections (event streams never end by themselves) before it
closes them; running comparisons are then left unfinished, to be re-run by the next start."""


def require_serve_extra() -> None:
    """One clear error when the web packages are missing, instead of an ImportError deep in a stack."""
    missing = []
    for module in ("fastapi", "uvicorn", "python_multipart", "prometheus_client", "fastapi_offline"):
        try:
            __import__(module)
        except ImportError:
            missing.append(module.replace("_", "-"))
    if missing:
        raise ViddiffError(
            f"viddiff serve needs the serve extra ({', '.join(missing)} not installed): pip install \"viddiff[serve]\""
        )


def service_config(cfg: Config, data_dir: Path, workers: int | None, ray: str | None = None) -> Config:
    """The config a server runs with: the model-call cache under ``data_dir`` unless ``cache.path`` is set;
    ``ray``: ``--ray ADDRESS`` (``local``: a cluster of this machine's own)."""
    updates = {}
    if cfg.cache.path is None:
        updates["cache"] = cfg.cache.model_copy(update={"path": str(data_dir / "cache.sqlite")})
    if workers is not None:
        updates["serve"] = cfg.serve.model_copy(update={"workers": workers})
    if ray is not None:
        updates["ray"] = cfg.ray.model_copy(update={"address": ray})
    return cfg.model_copy(update=updates)


def make_vid_diff_factory(cfg: Config, cache=None):
    """``make(pose)``: the shared ``VidDiff``, or (``pose=True``) one with ``pose.evidence`` on that shares
    the first one's cache, model client and CLIP, so only the pose estimator is loaded again. ``cache``: the
    cache to use (a Ray actor's :class:`viddiff.runs.ray_cache.RemoteCache`) instead of opening ``cache.path``."""
    made: list[VidDiff] = []

    def make(pose: bool) -> VidDiff:
        if not pose:
            made.append(VidDiff(cfg, cache=cache))
            return made[-1]
        pose_cfg = cfg.model_copy(update={"pose": cfg.pose.model_copy(update={"evidence": True})})
        if not made:
            return VidDiff(pose_cfg, cache=cache)
        base = made[0]
        return VidDiff(pose_cfg, cache=base.cache, client=base.client, embedder=base.embedder)

    return make


def build_app(data_dir: Path, cfg: Config, *, dev: bool = False):
    """The FastAPI app of a server on ``data_dir`` (its service starts with the app's lifespan)."""
    require_serve_extra()
    from viddiff.serve.app import create_app
    from viddiff.serve.service import Service

    if cfg.ray.address is not None:
        from viddiff.serve.ray_executor import RayExecutor

        executor = RayExecutor(cfg, make_vid_diff_factory)
    else:
        executor = LocalExecutor(make_vid_diff_factory(cfg), cfg.serve.workers)
    service = Service(data_dir, cfg, executor, dev=dev)
    app = create_app(service)
    app.state.readiness = service.readiness  # for ReadyServer
    return app


def cli_serve(args: argparse.Namespace) -> int:
    require_serve_extra()
    import uvicorn

    from viddiff.serve.http_limits import uvicorn_options
    from viddiff.serve.log_format import use_log_format
    from viddiff.serve.readiness import ReadyServer
    from viddiff.serve.security import SERVER_HEADERS

    use_log_format(args.log_format, args.log_level)
    data_dir = Path(args.data_dir).expanduser()
    if args.dev and not _is_loopback(args.host):
        raise ViddiffError(f"--dev serves without keys, so only on 127.0.0.1; drop --host {args.host} or --dev")
    cfg = service_config(config_from_args(args), data_dir, args.workers, getattr(args, "ray", None))
    with DataDirOwner(data_dir, args.host, args.port):
        app = build_app(data_dir, cfg, dev=args.dev)
        if args.dev:
            log.warning("--dev: requests from this machine need no key")
        # uvicorn's records go through the same handler and format as viddiff's; viddiff writes the access lines
        uvicorn_level = "warning" if args.log_level in (None, "info") else args.log_level  # its info lines repeat ours
        config = uvicorn.Config(
            app, host=args.host, port=args.port, log_config=None, log_level=uvicorn_level, access_log=False,
            proxy_headers=args.proxy_headers, forwarded_allow_ips=args.forwarded_allow_ips,
            timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S, headers=SERVER_HEADERS, **uvicorn_options(cfg.serve),
        )

        def announce(port: int) -> None:
            print(f"viddiff serve: http://{args.host}:{port}/ (API docs at /docs; data in {data_dir}; "
                  "/readyz answers 200 once the models are loaded)", flush=True)

        server = ReadyServer(config, app.state.readiness, announce)
        try:
            server.run()
        except KeyboardInterrupt:  # uvicorn re-raises the Ctrl-C it stopped on, once stopped (as uvicorn.run, quiet)
            pass
        if server.failure is not None:
            raise ViddiffError(f"viddiff serve stopped: {server.failure}")
    return 0


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"
