"""``viddiff serve keys create`` wall time and what it imports, against another checkout's code.

The command inserts one row; everything else it pays for is imports. Each round runs ``keys create`` once with
this tree's code and once with ``--baseline-src``'s (alternating, so machine load falls on both alike), each in
a fresh interpreter, and prints the median seconds, the ratio and whether the heavy modules were loaded.

Usage:
    git archive BASE_COMMIT | tar -x -C /tmp/before        # the code before the change
    python bench/keys_command.py --baseline-src /tmp/before [--rounds 7]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HEAVY = ("torch", "open_clip", "openai", "av", "fastapi", "viddiff.api")
PROGRAM = """
import json, sys
from viddiff.cli import main
main(["serve", "keys", "create", sys.argv[1], "--data-dir", sys.argv[2]])
print(json.dumps([m for m in sys.argv[3:] if m in sys.modules]))
"""


def run_once(src: Path, name: str, data_dir: str) -> tuple[float, list[str]]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    started = time.perf_counter()
    # run in data_dir: `python -c` puts the working directory first on sys.path, before PYTHONPATH
    done = subprocess.run([sys.executable, "-c", PROGRAM, name, data_dir, *HEAVY], env=env, cwd=data_dir,
                          capture_output=True, text=True, check=True)
    seconds = time.perf_counter() - started
    return seconds, json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline-src", type=Path, required=True, metavar="PATH")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    sources = {"this tree": REPO, "baseline": args.baseline_src.resolve()}
    times: dict[str, list[float]] = {way: [] for way in sources}
    loaded: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory() as data_dir:
        for i in range(args.rounds):
            for way, src in sources.items():
                seconds, heavy = run_once(src, f"bench-{way.replace(' ', '-')}-{i}", data_dir)
                times[way].append(seconds)
                loaded[way] = heavy
    for way in sources:
        print(f"{way:10s} median {statistics.median(times[way]):.2f} s  (min {min(times[way]):.2f}, "
              f"max {max(times[way]):.2f})  heavy modules loaded: {', '.join(loaded[way]) or 'none'}")
    ratio = statistics.median(times["baseline"]) / statistics.median(times["this tree"])
    print(f"baseline / this tree: {ratio:.2f}x  (load average {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
