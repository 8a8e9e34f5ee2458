"""The one normalisation of text (and the one folded key for comparing texts)."""

from __future__ import annotations

import re
import unicodedata

# Control characters (NUL included), soft hyphen, zero-width characters and the BOM:
# invisible in a page, but they break word matching and quoting.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u00ad\u200b-\u200d\u2060\ufeff]")
_SPACE = re.compile(r"\s+")
_NOT_ALNUM = re.compile(r"[\W_]+")


def normalise(text: str) -> str:
    """NFKC (ligatures such as "ﬁ" become "fi"), invisible characters dropped, tabs to
    spaces and every line ending to "\\n". Line structure is kept: extraction needs it."""
    text = unicodedata.normalize("NFKC", text)
    text = _CONTROL.sub("", text)
    return text.replace("\t", " ").replace("\r\n", "\n").replace("\r", "\n")


def collapse_spaces(text: str) -> str:
    """Whitespace runs to one space, stripped (a sentence as it is shown or embedded)."""
    return _SPACE.sub(" ", text).strip()


def match_key(text: str) -> str:
    """Letters and digits only, case-folded, after NFKC: "perfor-\\nmance" and "performance"
    compare equal, so a quote matches its passage whatever the extractor did with spaces."""
    return _NOT_ALNUM.sub("", unicodedata.normalize("NFKC", text).casefold())
