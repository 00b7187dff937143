"""Per-joint colours shared by the 3D view and the plots (colour-blind friendly)."""
from __future__ import annotations

# Okabe-Ito palette, then Tableau-like extras for long chains.
_PALETTE = [
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9",
    "#F0E442", "#000000", "#8C564B", "#7F7F7F", "#17BECF", "#BCBD22",
]


def joint_color(i: int) -> str:
    """Hex colour of joint/link i (0-based)."""
    return _PALETTE[i % len(_PALETTE)]


def joint_rgb(i: int) -> tuple[float, float, float]:
    """Colour of joint i as floats in [0, 1]."""
    h = joint_color(i).lstrip("#")
    return tuple(int(h[k:k + 2], 16) / 255.0 for k in (0, 2, 4))
