"""``viddiff config list|show``: the configuration presets shipped with the package."""

from __future__ import annotations

import argparse

from viddiff.config import resolve_config_path
from viddiff.configs import preset_names, preset_summary


def cli_config_list(args: argparse.Namespace) -> int:
    names = preset_names()
    width = max(len(name) for name in names)
    for name in names:
        print(f"{name:<{width}}  {preset_summary(name)}")
    print(f"\nuse one with --config NAME (e.g. --config {names[0]}); `viddiff config show NAME` prints it")
    return 0


def cli_config_show(args: argparse.Namespace) -> int:
    """The preset's YAML as shipped, comments included (they say where each value comes from)."""
    print(resolve_config_path(args.name).read_text(), end="")
    return 0
