"""The configuration presets ship with the package and are taken by name: ``--config cpu-fast``,
``viddiff config list``, ``viddiff config show NAME``; a path still works, and a wheel installed outside
any checkout finds them."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from viddiff.config import ConfigError, load_config
from viddiff.configs import preset_names, presets_dir

REPO = Path(__file__).resolve().parents[1]
VIDDIFF = [sys.executable, "-m", "viddiff.cli"]


def test_the_repository_configs_folder_is_the_shipped_one() -> None:
    """Docs and tests name configs/paper.yaml: at the repo root it is the same file the package ships."""
    assert (REPO / "configs" / "paper.yaml").resolve() == (presets_dir() / "paper.yaml").resolve()
    assert {"paper", "cpu-fast", "cpu-balanced", "vidpair-gpt4o"} <= set(preset_names())


@pytest.mark.parametrize("name", ["paper", "paper.yaml", "cpu-fast"])
def test_a_preset_by_name_equals_its_file(name: str) -> None:
    assert load_config(name) == load_config(presets_dir() / f"{name.removesuffix('.yaml')}.yaml")


def test_a_file_in_the_working_directory_wins_over_a_preset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("paper").write_text("localizer:\n  method: uniform\n")
    assert load_config("paper").localizer.method == "uniform"


def test_an_unknown_name_lists_the_presets() -> None:
    with pytest.raises(ConfigError, match=r"neither a YAML file nor a preset name; presets: .*cpu-fast.*paper"):
        load_config("papr")


def test_config_list_and_show() -> None:
    listing = subprocess.run([*VIDDIFF, "config", "list"], capture_output=True, text=True, check=True).stdout
    for name in preset_names():
        assert any(line.startswith(f"{name} ") for line in listing.splitlines()), listing
    assert "IF-VidCap" in listing  # each name comes with what it is for, from the file's first comment
    shown = subprocess.run([*VIDDIFF, "config", "show", "cpu-fast"], capture_output=True, text=True, check=True).stdout
    assert shown == (presets_dir() / "cpu-fast.yaml").read_text()
    missing = subprocess.run([*VIDDIFF, "config", "show", "nope"], capture_output=True, text=True)
    assert missing.returncode == 2 and "presets: " in missing.stderr


def test_config_list_gives_each_preset_a_whole_sentence() -> None:
    """A colon or an abbreviation inside the leading comment does not cut the description short."""
    listing = subprocess.run([*VIDDIFF, "config", "list"], capture_output=True, text=True, check=True).stdout
    summaries = {line.split()[0]: line.split(maxsplit=1)[1] for line in listing.splitlines()[: len(preset_names())]}
    assert summaries["ifvidcap"].endswith("2 frames per second (docs/captioning.md).")
    assert "(paper App. G, Table 5: 2 fps," in summaries["ifvidcap-vllm-qwen2.5-vl"]
    assert summaries["ifvidcap-vllm-qwen2.5-vl"].endswith("the video sent natively.")
    for name, summary in summaries.items():
        assert summary.endswith("."), (name, summary)
        assert summary.count("(") == summary.count(")"), (name, summary)


def test_preset_comments_name_presets_not_checkout_paths() -> None:
    """`--config configs/x.yaml` works only in a checkout; `--config x` works wherever viddiff is installed."""
    shown = subprocess.run([*VIDDIFF, "config", "show", "cpu-fast"], capture_output=True, text=True, check=True).stdout
    assert "--config cpu-fast\n" in shown
    for name in preset_names():
        assert "--config configs/" not in (presets_dir() / f"{name}.yaml").read_text(), name


def test_a_run_takes_the_preset_by_name(tmp_path: Path) -> None:
    """`--config NAME` on a real command line (and a misspelt one is refused, exit 2)."""
    proc = subprocess.run(
        [*VIDDIFF, "cache", "stats", "--config", "cpu-fast", "--set", f"cache.path={tmp_path / 'c.sqlite'}"],
        capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr
    wrong = subprocess.run([*VIDDIFF, "cache", "stats", "--config", "cpu-fats"], capture_output=True, text=True)
    assert wrong.returncode == 2 and "cpu-fats is neither a YAML file nor a preset name" in wrong.stderr


@pytest.mark.slow
def test_an_installed_wheel_outside_the_checkout_finds_the_presets(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    for name in ("setup.cfg", "pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    shutil.copytree(REPO / "viddiff", source / "viddiff", ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", str(source), "-w",
         str(tmp_path / "wheel")],
        check=True, capture_output=True, cwd=tmp_path,
    )
    wheel = next((tmp_path / "wheel").glob("viddiff-*.whl"))
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
        check=True, capture_output=True,
    )
    code = "import viddiff; from viddiff.config import load_config; print(viddiff.__file__, load_config('cpu-fast').localizer.clip.model)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(target)},
    ).stdout.split()
    assert out == [str(target / "viddiff" / "__init__.py"), "ViT-B-32"]
