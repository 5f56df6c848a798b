"""Draws docs/pose-placement.png: where to put the phone for body-pose evidence, seen from above.

The wedges are the measured tolerance (``pose.plane_tolerance_deg``, 20°) within which a 2D knee or ankle angle
is quoted as the body's own angle (bench/pose_accuracy.py: within 10° at the 90th percentile on the Pose2Sim
take); elsewhere every angle is quoted as seen in the picture, with a view part in its interval.

Usage: python bench/pose_placement_figure.py [--out docs/pose-placement.png]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Ellipse, Wedge  # noqa: E402

TOLERANCE_DEG = 20.0


def draw(out: Path) -> None:
    fig, ax = plt.subplots(figsize=(7.2, 5.6), dpi=110)
    ax.set_aspect("equal")
    ax.axis("off")
    for centre_deg in (0.0, 180.0):  # in front of and behind the person (who faces +x)
        ax.add_patch(Wedge((0, 0), 3.2, centre_deg - 90 + TOLERANCE_DEG, centre_deg + 90 - TOLERANCE_DEG, color="#999999", alpha=0.15))
    for centre_deg in (90.0, 270.0):  # their left and right sides
        ax.add_patch(Wedge((0, 0), 3.2, centre_deg - TOLERANCE_DEG, centre_deg + TOLERANCE_DEG, color="#2e9d4f", alpha=0.32))
    ax.add_patch(Ellipse((0, 0), 0.5, 1.1, color="#444444"))  # shoulders, seen from above
    ax.add_patch(Ellipse((0, 0), 0.28, 0.28, color="#d9a066"))  # head
    ax.annotate("", xy=(0.9, 0), xytext=(0.2, 0), arrowprops=dict(arrowstyle="-|>", color="#444444", lw=2))
    ax.text(0.95, 0.12, "facing", fontsize=9, color="#444444")
    for x, side in ((0, 3.55), (0, -3.55)):
        ax.text(x, side, "phone here: side-on, within ±20°\nknee and ankle angles = the body's own",
                ha="center", va="center", fontsize=9.5, color="#1d6b34", fontweight="bold")
    ax.text(2.9, 0.0, "front: angles only\n\"as seen in the picture\"\n(± a view part)", ha="left", va="center", fontsize=9, color="#555555")
    ax.text(-2.9, 0.0, "back: the same", ha="right", va="center", fontsize=9, color="#555555")
    ax.text(0, -4.5, "Seen from above. Phone at hip height, level, 3 m or more away, the whole body in the picture;\n"
            "A and B filmed from the same place.", ha="center", fontsize=8.5, color="#333333")
    ax.set_xlim(-5.2, 5.2)
    ax.set_ylim(-4.9, 4.2)
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "docs" / "pose-placement.png")
    draw(parser.parse_args().out)


if __name__ == "__main__":
    main()
