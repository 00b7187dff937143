"""Hypothesis profiles for the whole suite (the GUI tests add their fixtures in gui/).

* "ci", loaded by default: the full run, what CI runs. Every property test runs the
  examples its `fast(n)` names (tests/strategies.py); the rest is the profile Hypothesis
  itself would have loaded (its "default", or its own "ci" on a CI machine:
  derandomized, no example database), so the run is the one it was before the profiles.
* "dev": a quick development run, `pytest --hypothesis-profile=dev` (the option is
  Hypothesis's pytest plugin's): a tenth of the examples, at least 2 per property test.

`fast` scales the examples by the loaded profile's max_examples over ci's, so a new
profile needs only its max_examples.
"""
from __future__ import annotations

from hypothesis import settings

settings.register_profile("ci", settings.default, max_examples=100)
settings.register_profile("dev", settings.get_profile("ci"), max_examples=10)
settings.load_profile("ci")
