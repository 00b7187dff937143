"""Take the documentation's screenshots (docs/screenshots/*.png) again, each with one
`armdyn` command line in the scripted mode (docs/cli.md): a run, a panel (`--panel`),
a window size, `--screenshot`.

    .venv/bin/python scripts/screenshots.py              # every picture
    .venv/bin/python scripts/screenshots.py inspect lab-dh   # some of them
    .venv/bin/python scripts/screenshots.py --list       # the command lines only

Without a display it runs each command under `xvfb-run` (the screen is larger than
any window size, so nothing is cut). The pictures that need a hand on the mouse
(push.png: dragging the arm during a live free fall) are listed in BY_HAND and left
as they are; those of the Measured Motion and Identify docks, which need a log written
first, are taken by scripts/measured_screenshots.py (BY_SCRIPT). `tests/test_docs.py`
checks that every picture the docs show is made here or listed there, and that every
command line is one `armdyn` accepts.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "screenshots"
LARGE, SMALL = "1600x1000", "1280x800"
#: Run B of compare.png: the bundled PUMA with its elbow link twice as heavy (written
#: by `heavy_elbow_puma` into a temporary folder; the name stands for its path).
HEAVY_ELBOW = "HEAVY_ELBOW"

#: name -> the arguments of `armdyn` (without --screenshot).
SHOTS: dict[str, list[str]] = {
    "main-window": ["puma560_saha", "--inverse", "2", "--size", LARGE],
    "main-window-1280x800": ["puma560_saha", "--inverse", "2", "--size", SMALL],
    "free-fall": ["puma560_saha", "--free-fall", "4", "--size", LARGE],
    "inspect": ["puma560_saha", "--inverse", "2", "--panel", "inspect", "--size", LARGE],
    "mechanism-fivebar": ["fivebar_saha", "--inverse", "20", "--size", LARGE],
    "mechanism-fivebar-1280x800": ["fivebar_saha", "--inverse", "20", "--size", SMALL],
    "mechanism-scraper-1280x800": ["carpet_scraper_saha", "--inverse", "2", "--size", SMALL],
    "compare": ["puma560_saha", "--free-fall", "2", "--panel", "compare", "--compare-with",
                HEAVY_ELBOW, "--size", LARGE],
    "sweep": ["puma560_saha", "--inverse", "2", "--panel", "sweep", "--vary",
              "payload.mass=0:5:6", "--vary", "T=1:3:5", "--size", LARGE],
    "sweep-1280x800": ["puma560_saha", "--inverse", "2", "--panel", "sweep", "--vary",
                       "payload.mass=0:5:6", "--vary", "T=1:3:5", "--size", SMALL],
    "presentation": ["puma560_saha", "--inverse", "2", "--panel", "presentation", "--size",
                     LARGE],
    "lab-recursion": ["puma560_saha", "--panel", "lab:recursion", "--size", LARGE],
    "lab-dh": ["puma560_saha", "--panel", "lab:dh", "--size", LARGE],
    "lab-inertia": ["puma560_saha", "--panel", "lab:inertia", "--size", LARGE],
    "lab-power": ["puma560_saha", "--free-fall", "2", "--panel", "lab:power", "--size", LARGE],
    # floating systems: the astronaut (the human, gravity off) moves its arms and its body
    # turns in space, its momentum kept; the car falls onto its road on its tyres
    "floating-human": ["astronaut", "--inverse", "3", "--size", LARGE],
    "car-road": ["car_jalon", "--free-fall", "1", "--size", LARGE],
}
#: Pictures no command line can take (what they show needs the mouse).
BY_HAND = {"push": "Ctrl+drag on the arm during a live free fall (Run > Free fall, Live)",
           "run-measured": "the Run dock of a PUMA (1600x1000) after Motion: Measured "
                           "motion (log), Open measured motion... on a 200 Hz log of 4 s"}
#: Pictures another script takes (what they show needs a log it writes first).
BY_SCRIPT = {name: "scripts/measured_screenshots.py"
             for name in ("measured", "measured-1280x800", "identify", "identify-1280x800")}


def heavy_elbow_puma(folder: Path) -> Path:
    """The bundled PUMA 560 with link 3's mass doubled (inertia and mass centre kept)."""
    from armdyn.core import load_robot, save_robot

    puma = load_robot(ROOT / "robots" / "puma560_saha.toml")
    links = list(puma.links)
    links[2] = dataclasses.replace(links[2], mass=2 * links[2].mass)
    heavy = dataclasses.replace(puma, name=f"{puma.name}, elbow mass x 2", links=tuple(links))
    path = folder / "puma560_heavy_elbow.toml"
    save_robot(heavy, path)
    return path


def command(name: str, heavy_elbow: Path | None = None) -> list[str]:
    """The full command line of picture `name`."""
    args = [str(heavy_elbow) if a == HEAVY_ELBOW and heavy_elbow else a for a in SHOTS[name]]
    argv = [sys.executable, "-m", "armdyn.gui.app", *args,
            "--screenshot", str(OUT / f"{name}.png")]
    if not os.environ.get("DISPLAY"):
        argv = ["xvfb-run", "-a", "-s", "-screen 0 1920x1200x24", *argv]
    return argv


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("names", nargs="*", help=f"pictures to take (default all): {', '.join(SHOTS)}")
    p.add_argument("--list", action="store_true", help="print the command lines and exit")
    args = p.parse_args(argv)
    unknown = [n for n in args.names if n not in SHOTS]
    if unknown:
        p.error(f"no such picture: {', '.join(unknown)}"
                + (f" ({BY_HAND[unknown[0]]})" if unknown[0] in BY_HAND else "")
                + (f" (taken by {BY_SCRIPT[unknown[0]]})" if unknown[0] in BY_SCRIPT else ""))
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        heavy = heavy_elbow_puma(Path(tmp))
        for name in args.names or SHOTS:
            line = command(name, heavy)
            print(shlex.join(line), flush=True)
            if args.list:
                continue
            if subprocess.run(line, cwd=ROOT).returncode != 0:
                failed.append(name)
    if failed:
        print(f"screenshots: failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
