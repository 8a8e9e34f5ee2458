"""Check the second blind set: the checks of bench/blind/check_spans.py with this set's counts,
plus its own rules: a `split` on every question, 24 calibration / 24 test balanced per category,
and every out-of-scope question's `checked_absent` pattern matching no paper's text.

    .venv/bin/python bench/blind2/check_spans.py                 # exit 1 on any problem
    .venv/bin/python bench/blind2/check_spans.py --cache /tmp/qset/txt

Spans are "verbatim" exactly as in bench/blind: whitespace collapsed, nothing else forgiven
(the checks live in bench/_blind_spans.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _blind_spans import set_cli  # bench/_blind_spans.py holds the checks and this set's rules

problems, main = set_cli(__file__)

if __name__ == "__main__":
    main(__doc__)
