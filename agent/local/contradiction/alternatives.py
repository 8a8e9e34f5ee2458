"""Instead-of frames: "A instead of / rather than / in place of B", "replacing B with A",
"not B but A", "A, not B", "dispensing with B" (or eschewing, forgoing, abandoning it), and a sentence that chooses what a claim set aside."""

from __future__ import annotations

import re
from functools import lru_cache

from agent.local.contradiction.negation import negated_stems
from agent.local.contradiction.terms import content

_ALTERNATIVE = [
    # (pattern, which group is chosen, which is rejected, whether the chosen clause must
    # restate the claim: see alternatives_led)
    (re.compile(r"(?P<a>[^,;:()]{3,80}?)\s+(?:instead of|rather than|in place of|as opposed to)\s+"
                r"(?P<b>[^,;:().]{3,80})", re.IGNORECASE), "a", "b", False),
    # Fronted: "Instead of storing the index on disk, X keeps it in memory."
    (re.compile(r"(?:^|[.;:]\s+)(?:instead of|rather than|in place of)\s+(?P<b>[^,;:()]{3,80}?),\s*"
                r"(?P<a>[^,;:().]{3,80})", re.IGNORECASE), "a", "b", False),
    # A choice of A over B sets B aside: "X opts for sparse retrieval over dense retrieval".
    (re.compile(r"\b(?:prefer(?:s|red|ring)?|favou?r(?:s|ed|ing)?|cho(?:se|ose|oses|osing)|"
                r"opt(?:s|ed|ing)?\s+for)\s+(?P<a>[^,;:()?.]{2,60}?)\s+over\s+(?P<b>[^,;:().]{3,80})",
                re.IGNORECASE), "a", "b", False),
    (re.compile(r"\breplac(?:e|es|ed|ing)\s+(?P<b>[^,;:()]{3,80}?)\s+(?:with|by)\s+(?P<a>[^,;:().]{3,80})",
                re.IGNORECASE), "a", "b", False),
    (re.compile(r"\bnot\s+(?P<b>[^,;:()]{3,60}?)\s*,?\s+but\s+(?P<a>[^,;:().]{3,80})", re.IGNORECASE), "a", "b", False),
    # The contrast the other way round, after a comma: "X keeps the keys in memory, not on
    # disk", "... on NQ, and not on MARCO", "trained with SFT only, without RLHF". "Not only
    # / just" adds, "not always" hedges.
    (re.compile(r"(?P<a>[^,;:()]{3,80}?)\s*,\s*(?:and\s+|but\s+)?(?:not|without)\s+"
                r"(?!(?:only|just|merely|simply|least|always|all|even|yet|shown)\b)"
                r"(?P<b>[^,;:().]{3,80})", re.IGNORECASE), "a", "b", True),
    (re.compile(r"\b(?:dispens(?:e|es|ed|ing)|do(?:es)? away|did away|doing away)\s+with\s+(?P<b>[^,;:().]{3,80})",
                re.IGNORECASE), "", "b", False),
    # Verbs that set a thing aside as "dispensing with" does ("a model eschewing recurrence",
    # "we forgo fine-tuning", "abandoning the encoder"): general English, not a benchmark's.
    (re.compile(r"\b(?:eschew(?:s|ed|ing)?|fore?go(?:es|ing|ne)?|forwent|abandon(?:s|ed|ing)?)\s+"
                r"(?P<b>[^,;:().]{3,80})", re.IGNORECASE), "", "b", False),
]
# Words without which each _ALTERNATIVE pattern cannot match (a quick test before the scan).
_ALTERNATIVE_WORDS = [("instead of", "rather than", "in place of", "as opposed to"),
                      ("instead of", "rather than", "in place of"), ("over",), ("replac",), ("not",),
                      (", not", ", and not", ", but not", ", without", ", but without", ", and without"),
                      ("dispens", "away"), ("eschew", "forgo", "forego", "forgoing", "forwent", "abandon")]


def _head(phrase: str, *, last: bool) -> set[str]:
    """The content words of `phrase` next to the connective: the 2 before it ("trained with
    plain SGD rather than") or the 3 after it ("instead of greedy decoding")."""
    terms = content(phrase)
    return set(terms[-2:] if last else terms[:3])


def alternatives(text: str) -> list[tuple[frozenset[str], frozenset[str]]]:
    """(chosen, rejected) term sets the text states ("A instead of B" -> ({A}, {B}))."""
    return [(a, b) for a, b, _, _ in alternatives_led(text)]


@lru_cache(maxsize=4096)  # a premise is compared with every candidate sentence
def alternatives_led(text: str) -> tuple[tuple[frozenset[str], frozenset[str], str, frozenset[str] | None], ...]:
    """alternatives(), each with the first content word of what is set aside: the thing
    rejected ("instead of greedy decoding" -> "greedi"), or a predicate ("not required for
    X but ...", "does not block X but ...") that rejects no thing of its own; and, for "A,
    not B", every content word of A's clause (None for the other frames). That contrast
    sets B aside only within A's relation ("Kestrel keeps the keys in memory, not on disk"),
    so a claim it denies must share that relation, not just the word B: "crh-1 is required
    for memory, but not for learning" says nothing of how well an animal learns."""
    out = []
    lowered = text.lower()
    for (pattern, chosen, rejected, framed), words_needed in zip(_ALTERNATIVE, _ALTERNATIVE_WORDS):
        # The patterns scan every position of the text: skip those whose words are absent.
        if not any(w in lowered for w in words_needed):
            continue
        for m in pattern.finditer(text):
            a = _head(m.group(chosen), last=True) if chosen else set()
            terms = content(m.group(rejected))
            if terms:
                frame = frozenset(content(m.group(chosen))) if framed else None
                out.append((frozenset(a), frozenset(terms[:3]), terms[0], frame))
    return tuple(out)


# A verb of choosing, and how many words after it the chosen thing may stand.
_CHOICE = re.compile(r"\b(?:chose|choose|chosen|choosing|opt(?:s|ed)?\s+for|select(?:s|ed)?|prefer(?:s|red)?|"
                     r"adopt(?:s|ed)?|settled?\s+on|decided?\s+(?:to\s+)?(?:use|keep)|kept|retain(?:s|ed)?|"
                     r"went\s+with|go(?:es)?\s+with)\b", re.IGNORECASE)
_CHOICE_REACH = 4


def chooses_rejected(claim: str, sentence: str) -> bool:
    """The claim sets B aside for A ("used A instead of B") and the sentence says B was the
    one chosen ("We chose the B version because ..."): a verb of choosing followed, within
    a few words and not negated, by a term only B has, and by none only A has."""
    pairs = alternatives(claim)
    if not pairs or not _CHOICE.search(sentence):
        return False
    negated = negated_stems(sentence)
    for m in _CHOICE.finditer(sentence):
        after = content(sentence[m.end():])[:_CHOICE_REACH]
        for chosen, rejected in pairs:
            only_b, only_a = rejected - chosen, chosen - rejected
            if only_b & set(after) and not only_a & set(after) and not only_b & negated:
                return True
    return False
