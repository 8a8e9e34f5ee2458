"""Check the third blind set: the checks of bench/blind2 (verbatim spans on their pages, counts,
balanced calibration/test splits, out-of-scope patterns absent from every paper) with this set's
own bar of at least 15 papers behind the answerable questions.

    .venv/bin/python bench/blind3/check_spans.py                 # exit 1 on any problem
    .venv/bin/python bench/blind3/check_spans.py --cache /tmp/qset3/txt

The checks live in bench/_blind_spans.py, shared by all three sets.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _blind_spans import set_cli  # bench/_blind_spans.py holds the checks and this set's rules

problems, main = set_cli(__file__)

if __name__ == "__main__":
    main(__doc__)
