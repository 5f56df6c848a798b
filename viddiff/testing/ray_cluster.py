"""A real two-node Ray cluster on one machine, the second node sharing no files with the head, for tests and
benches of Ray across machines.

The head is ``ray start --head``. The second node is ``ray start --address HEAD`` inside a mount namespace of
its own (``unshare -m``) with an empty tmpfs over each of the ``hidden`` folders (the head's ``--data-dir``,
its cache), on the loopback address 127.0.0.2, offering the custom resource :data:`SECOND_NODE` so that actors
can be pinned to it. Killing it (:meth:`TwoNodeCluster.kill_second_node`) is SIGKILL to every process of the
node, as when its machine is lost. Needs Linux, root (or user namespaces) and ``unshare``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Iterator, Optional

SECOND_NODE = "second_node"
"""The custom resource only the second node has (``ray.resources={"second_node": 1}`` pins actors there)."""
SECOND_NODE_IP = "127.0.0.2"
CLUSTER_ENV = {
    "RAY_AUTH_MODE": "token",  # what Ray 2.60 does by default (~/.ray/auth_token, made if missing): every process agrees
    "RAY_memory_monitor_refresh_ms": "0",  # a shared test machine's memory is not these actors'
    "RAY_health_check_period_ms": "500",  # a killed node is declared dead in about 2 s, not 15
    "RAY_health_check_timeout_ms": "500",
    "RAY_health_check_failure_threshold": "3",
}
"""Set for the cluster's processes, and to be set for its drivers."""


def unavailable_reason() -> Optional[str]:
    """Why a two-node cluster cannot be started here, or ``None``."""
    if not sys.platform.startswith("linux") or shutil.which("unshare") is None:
        return "needs Linux with unshare"
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True)
    if probe.returncode != 0:
        return f"unshare -m is not allowed here ({probe.stderr.decode(errors='replace').strip()})"
    return None


class TwoNodeCluster:
    """``with TwoNodeCluster(hidden=[data_dir]) as cluster: ray.init(address=cluster.address)``."""

    def __init__(self, hidden: list[Path], head_cpus: int = 2, node_cpus: int = 2):
        self.hidden = [Path(p) for p in hidden]
        self._head_cpus, self._node_cpus = head_cpus, node_cpus
        self._root = Path(tempfile.mkdtemp(prefix="vdray"))  # short: Ray's socket paths must stay short
        self._port = _free_port()
        self.address = f"127.0.0.1:{self._port}"
        self._head: Optional[subprocess.Popen] = None
        self._node: Optional[subprocess.Popen] = None
        self.shared = self._root / "shared"
        """A folder both nodes read (storage every node mounts, as a dataset on a network filesystem)."""
        self.shared.mkdir()

    def start(self) -> "TwoNodeCluster":
        ray_cli = str(Path(sys.executable).with_name("ray"))
        env = {**os.environ, **CLUSTER_ENV}
        self._head = subprocess.Popen(
            [ray_cli, "start", "--head", "--port", str(self._port), "--node-ip-address", "127.0.0.1",
             "--num-cpus", str(self._head_cpus), "--temp-dir", str(self._root / "head"), "--include-dashboard",
             "false", "--disable-usage-stats", "--block"],
            env=env, stdout=subprocess.DEVNULL, stderr=open(self._root / "head.log", "wb"),
        )
        self._wait_for_head()
        self.start_second_node()
        return self

    def start_second_node(self) -> None:
        """(Again, after :meth:`kill_second_node`:) the second node joins the head."""
        ray_cli = str(Path(sys.executable).with_name("ray"))
        mounts = " && ".join(f"mount -t tmpfs none {_quoted(p)}" for p in self.hidden if p.exists())
        join = (
            f"exec {_quoted(Path(ray_cli))} start --address {self.address} --node-ip-address {SECOND_NODE_IP} "
            f"--num-cpus {self._node_cpus} --resources '{{\"{SECOND_NODE}\": 1}}' "
            f"--temp-dir {_quoted(self._root / 'node')} --disable-usage-stats --block"
        )
        self._node = subprocess.Popen(
            ["unshare", "-m", "sh", "-c", f"{mounts} && {join}" if mounts else join],
            env={**os.environ, **CLUSTER_ENV}, stdout=subprocess.DEVNULL,
            stderr=open(self._root / "node.log", "ab"),
        )

    def kill_second_node(self) -> None:
        """SIGKILL to every process of the second node at once, as when its machine is lost."""
        if self._node is not None:
            _kill_tree(self._node.pid)
            self._node.wait(30)
            self._node = None

    def stop(self) -> None:
        self.kill_second_node()
        if self._head is not None:
            _kill_tree(self._head.pid)
            self._head.wait(30)
            self._head = None
        shutil.rmtree(self._root, ignore_errors=True)

    def log(self) -> str:
        """The two ``ray start`` processes' output (for a failing test's message)."""
        return "\n".join(p.read_text(errors="replace") for p in sorted(self._root.glob("*.log")))

    def _wait_for_head(self, timeout_s: float = 60.0) -> None:
        import socket

        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            assert self._head is not None
            if self._head.poll() is not None:
                raise RuntimeError(f"ray start --head ended: {self.log()}")
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self._port)) == 0:
                    return
            time.sleep(0.2)
        raise RuntimeError(f"the Ray head did not open port {self._port}: {self.log()}")

    def __enter__(self) -> "TwoNodeCluster":
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(
        self, exc_type: Optional[type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]
    ) -> None:
        self.stop()


@contextlib.contextmanager
def driven_cluster(hidden: list[Path], head_cpus: int = 2, node_cpus: int = 2) -> Iterator[TwoNodeCluster]:
    """A :class:`TwoNodeCluster` with this process connected as its driver (``ray.init``), both nodes up."""
    import ray

    saved = {name: os.environ.get(name) for name in CLUSTER_ENV}
    os.environ.update(CLUSTER_ENV)
    _reread_ray_settings()
    try:
        with TwoNodeCluster(hidden, head_cpus, node_cpus) as cluster:
            ray.init(address=cluster.address, log_to_driver=False)
            try:
                deadline = time.monotonic() + 90
                while sum(node["Alive"] for node in ray.nodes()) < 2:
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"the second Ray node did not join: {cluster.log()}")
                    time.sleep(0.2)
                yield cluster
            finally:
                ray.shutdown()
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        _reread_ray_settings()


def _reread_ray_settings() -> None:
    """Ray reads ``RAY_AUTH_MODE`` and its other variables once per process (and a local ``ray.init()`` turns
    token mode on for the rest of it): the driver re-reads them, as Ray itself does when it changes the mode."""
    from ray._raylet import Config

    Config.initialize("")


def _kill_tree(pid: int) -> None:
    """SIGKILL ``pid`` and every process below it, each by its id (Ray's daemons leave their parent's group).
    The tree is read from ``/proc`` before any process is killed, while every child still has its parent."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process ended meanwhile
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    tree, todo = [], [pid]
    while todo:
        current = todo.pop()
        tree.append(current)
        todo.extend(children.get(current, []))
    for member in tree:
        with contextlib.suppress(ProcessLookupError):
            os.kill(member, signal.SIGKILL)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _quoted(path: Path) -> str:
    import shlex

    return shlex.quote(str(path))
