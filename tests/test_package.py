"""The public names `import viddiff` promises (design.md §3) resolve, lazily."""

import subprocess
import sys

import viddiff


def test_public_api_names_resolve():
    from viddiff.api import VidDiff, compare, describe
    from viddiff.config import Config
    from viddiff.benchmarks import evaluate_dataset, load_benchmark
    from viddiff.eval import evaluate

    assert viddiff.compare is compare and viddiff.describe is describe and viddiff.VidDiff is VidDiff
    assert viddiff.Config is Config and viddiff.load_benchmark is load_benchmark
    assert viddiff.evaluate is evaluate and viddiff.evaluate_dataset is evaluate_dataset


def test_import_is_cheap():
    """`import viddiff` (and so `viddiff --help`) must not pull in torch or the openai SDK."""
    code = "import sys, viddiff, viddiff.cli; print('torch' in sys.modules, 'openai' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False"]
