"""The BM25 tokenizer: Unicode-normalised, lowercased, English stopwords out, Snowball stems.

Identifiers are kept whole *and* split into their parts, so `GPT-4` matches a query for
"GPT-4" exactly (token `gpt-4`) and still matches "GPT" alone (token `gpt`). An
identifier is a run of letters and digits joined by `-`, `.`, `=`, `/`, `_` or `:`
(`all-MiniLM-L6-v2`, `k=60`, `2401.15884`, `text-embedding-3-small`); a token that mixes
letters and digits without a separator (`BM25`, `L6`) is one token already.
Whole identifiers are not stemmed (a stemmer would turn `v2` forms into noise); plain
words and identifier parts are.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# A word, optionally followed by joiner+word groups. The joiner must sit between two
# word characters, so a sentence-final period or a trailing hyphen is not part of it.
_TOKEN_RE = re.compile(r"[^\W_]+(?:[-.=/_:][^\W_]+)*")
_PART_RE = re.compile(r"[^\W_]+")

# English stopwords: the NLTK list plus a few modal verbs; contractions are split at the
# apostrophe by the token pattern, so their halves ("don", "t") are listed too. The negations ("not", "no",
# "nor") are in it too: they never help BM25 find a passage, and whether a passage supports
# or contradicts a claim is the auditor's job (docs/retrieval.md).
_STOPWORD_TEXT = """
    a about above after again against all am an and any are aren't as at be because been before
    being below between both but by can could couldn't did didn't do does doesn't doing don't down
    during each few for from further had hadn't has hasn't have haven't having he her here hers
    herself him himself his how i if in into is isn't it it's its itself just let's me more most
    my myself no nor not of off on once only or other ought our ours ourselves out over own same
    she should shouldn't so some such than that that's the their theirs them themselves then there
    there's these they this those through to too under until up very was wasn't we were weren't
    what when where which while who whom why will with won't would wouldn't you your yours
    yourself yourselves s t d ll m o re ve y also may might must shall us
    aren couldn didn doesn don hadn hasn haven isn let shouldn wasn weren won wouldn
"""
STOPWORDS: frozenset[str] = frozenset(_STOPWORD_TEXT.split())


@lru_cache(maxsize=1)
def _stemmer():
    import Stemmer

    return Stemmer.Stemmer("english")


# Stemming is the slow part of tokenizing; words repeat a lot (Zipf), so a bounded cache
# makes indexing a large collection several times faster.
@lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    return _stemmer().stemWord(word)


def normalize(text: str) -> str:
    """NFKC (ligatures, full-width forms, compatibility digits) then casefold."""
    return unicodedata.normalize("NFKC", text).casefold()


def tokenize(text: str) -> list[str]:
    """BM25 terms of `text`, in order; identifiers contribute their whole form and their parts."""
    out: list[str] = []
    for match in _TOKEN_RE.finditer(normalize(text)):
        token = match.group()
        parts = _PART_RE.findall(token)
        if len(parts) > 1:
            out.append(token)
        for part in parts:
            if part not in STOPWORDS:
                out.append(_stem(part))
    return out


@lru_cache(maxsize=4096)
def query_terms(text: str) -> tuple[str, ...]:
    """tokenize(text) as a tuple, cached: an agent asks the same queries again and again."""
    return tuple(tokenize(text))
