"""Check the blind set: every evidence span is verbatim in its paper's pypdf text, on its page.

    .venv/bin/python bench/blind/check_spans.py                 # exit 1 on any problem
    .venv/bin/python bench/blind/check_spans.py --cache /tmp/h7/txt

"Verbatim" means: after collapsing every run of whitespace to one space (pypdf breaks lines
where the PDF does), the span is a substring of the page's text. Nothing else is forgiven:
hyphenation, ligatures and case must be as pypdf extracted them, so a span that passes here
was copied, not remembered. The checks and this set's rules live in bench/_blind_spans.py.

It also checks the shape of the set: the fields, the expected outcome of each category, and
that answerable questions spread over at least nine papers.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _blind_spans import set_cli  # bench/_blind_spans.py holds the checks and this set's rules

problems, main = set_cli(__file__)

if __name__ == "__main__":
    main(__doc__)
