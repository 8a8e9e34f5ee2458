"""Check the fourth blind set: the checks of bench/blind3 (verbatim spans on their pages, counts,
balanced calibration/test splits, out-of-scope patterns absent from every paper, at least 15
papers behind the answerable questions), written afresh because blind2's and blind3's
calibration halves had been used to choose rules too often to predict held-out behaviour.

    .venv/bin/python bench/blind4/check_spans.py                 # exit 1 on any problem
    .venv/bin/python bench/blind4/check_spans.py --cache /tmp/qset4/txt

The checks live in bench/_blind_spans.py, shared by all four sets.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _blind_spans import set_cli  # bench/_blind_spans.py holds the checks and this set's rules

problems, main = set_cli(__file__)

if __name__ == "__main__":
    main(__doc__)
