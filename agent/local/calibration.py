"""The declared calibration splits of the local roles' thresholds.

Everything reported as a held-out figure comes from the other side of these splits:
- devbench: the floor(n/2) questions whose sha256("grounded-calibration:" + question id)
  is smallest are the calibration half ("calibration"); the rest is held out ("test");
- SciFact: labelled train claims with id % 5 in {0, 1, 2} calibrate, {3, 4} are held out.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

CALIBRATION = "calibration"
HELD_OUT = "test"  # the benchmark's default split, so `manage.py benchmark` runs the held-out half
_SALT = "grounded-calibration:"


def _rank(question_id: str) -> str:
    return hashlib.sha256((_SALT + question_id).encode()).hexdigest()


def devbench_splits(question_ids: Iterable[str]) -> dict[str, str]:
    """question id -> CALIBRATION or HELD_OUT; at most half of the questions calibrate."""
    ids = sorted(set(question_ids), key=_rank)
    calibrate = set(ids[: len(ids) // 2])
    return {q: CALIBRATION if q in calibrate else HELD_OUT for q in ids}


def scifact_split(claim_id: int) -> str:
    return CALIBRATION if claim_id % 5 in (0, 1, 2) else HELD_OUT
