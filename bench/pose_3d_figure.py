"""Draws docs/pose-two-phones.png: where to put two phones, and the checkerboard, for 3D body angles (issue 41).

The green band is where the second phone gives the best angles: its line of sight 45–110° from the first's
(bench/pose_3d.py: the Pose2Sim pairs 47°, 70° and 109° apart had median knee errors of 4° and hip errors of
2–3°; the pairs 144° and 148° apart, nearly facing each other, were the worst, with hip errors up to 7° and more
refused synchronisations, since two opposite rays cannot fix depth along them).

Usage: python bench/pose_3d_figure.py [--out docs/pose-two-phones.png]
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Ellipse, Rectangle, Wedge  # noqa: E402

DISTANCE_M = 3.2


def phone(ax: "plt.Axes", angle_deg: float, label: str, at: tuple[float, float]) -> tuple[float, float]:
    """A phone ``DISTANCE_M`` from the person at ``angle_deg`` (0 = in front), looking at them."""
    a = math.radians(angle_deg)
    x, y = DISTANCE_M * math.cos(a), DISTANCE_M * math.sin(a)
    ax.add_patch(Rectangle((x - 0.12, y - 0.2), 0.24, 0.4, angle=0, color="#1f4e79"))
    ax.plot([x, 0], [y, 0], color="#1f4e79", lw=1, ls=":")
    ax.text(x + at[0], y + at[1], label, ha="center", va="center", fontsize=9.5, color="#1f4e79", fontweight="bold")
    return x, y


def draw(out: Path) -> None:
    fig, ax = plt.subplots(figsize=(7.4, 6.0), dpi=110)
    ax.set_aspect("equal")
    ax.axis("off")
    main_deg = 20.0  # the main phone: in front, a little to the person's left
    for sign in (1, -1):  # the second phone 45–110° round from the first, either way
        start, end = sorted((main_deg + sign * 45, main_deg + sign * 110))
        ax.add_patch(Wedge((0, 0), 3.9, start, end, width=1.6, color="#2e9d4f", alpha=0.28))
    ax.add_patch(Ellipse((0, 0), 0.5, 1.1, color="#444444"))  # shoulders, seen from above
    ax.add_patch(Ellipse((0, 0), 0.28, 0.28, color="#d9a066"))  # head
    ax.annotate("", xy=(0.9, 0), xytext=(0.2, 0), arrowprops=dict(arrowstyle="-|>", color="#444444", lw=2))
    ax.text(0.55, -0.28, "facing", fontsize=8.5, color="#444444")
    phone(ax, main_deg, "phone 1\n(main view)", (0.15, -0.65))
    phone(ax, main_deg + 80, "phone 2", (0.75, 0.0))
    # the board: upright, where the person will stand, facing between the two phones
    board_deg = math.radians(main_deg + 40)
    bx, by = 0.9 * math.cos(board_deg), 0.9 * math.sin(board_deg)
    ax.add_patch(Rectangle((bx - 0.35, by - 0.05), 0.7, 0.1, angle=main_deg + 40 - 90, rotation_point="center", color="#b5651d"))
    ax.text(0.9, 1.55, "checkerboard, upright,\nseen whole by both\n(before the take)", fontsize=8.5, color="#8a4b12")
    ax.text(-3.1, 4.1, "phone 2 anywhere in the green bands:\nlines of sight 45–110° apart", ha="center", fontsize=9,
            color="#1d6b34", fontweight="bold")
    ax.text(-3.0, -2.6, "avoid facing each other\n(more than ~135° apart):\ndepth along their line is lost", ha="center",
            fontsize=8.5, color="#8b1a1a")
    ax.text(0, -4.55, "Seen from above. Both phones at hip height, still (tripods), 3 m or more away, the whole body in both\n"
            "pictures; start both recordings before the movement and clap once where both hear it (or both see it).",
            ha="center", fontsize=8.3, color="#333333")
    ax.set_xlim(-4.9, 4.9)
    ax.set_ylim(-4.9, 4.6)
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "docs" / "pose-two-phones.png")
    draw(parser.parse_args().out)


if __name__ == "__main__":
    main()
