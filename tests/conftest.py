"""Hypothesis profiles for the whole suite (the GUI tests add their fixtures in gui/).

* "ci", loaded by default: the full run, what CI runs. Every property test runs the
  examples its `fast(n)` names (tests/strategies.py), derandomized (the same examples
  on every run and machine, no example database): a run that passed once passes again,
  and a failure is reproduced by running the test again. Random examples found
  round-off edge cases at random (a torque of 2e-16 against 0) and failed CI by chance.
* "dev": a quick development run, `pytest --hypothesis-profile=dev` (the option is
  Hypothesis's pytest plugin's): a tenth of the examples, at least 2 per property test.

`fast` scales the examples by the loaded profile's max_examples over ci's, so a new
profile needs only its max_examples.
"""
from __future__ import annotations

from hypothesis import settings

settings.register_profile("ci", settings.default, max_examples=100, derandomize=True,
                          database=None)
settings.register_profile("dev", settings.get_profile("ci"), max_examples=10)
settings.load_profile("ci")
