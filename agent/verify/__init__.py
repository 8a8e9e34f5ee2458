"""Citation verification: support, not presence.

A package by topic: `quotes` (finding quotes, answer-eligible evidence), `form` (sentences that
assert nothing), `claims` (the numbers and names a sentence asserts), `pairing` (which name
each number belongs to), `slots` (the relation each number stands in), `scope` (how many things
the subject speaks of), `supported` (the support check), `verifier` (CitationVerifier).

Rules (DESIGN.md, step 5), applied by `CitationVerifier` to every draft, whatever wrote it:
- a marker that points outside the sources handed to the generator is dropped;
- a quote counts only if it occurs in the cited chunk's text, compared case- and
  whitespace-insensitively (hyphens at line breaks are tolerated: "perfor- mance"), and
  only if it is answer-eligible evidence (`eligibility`): a sentence-level span of prose,
  never a section heading ("5.4 Regularization"), a caption label ("Table 3:") or a
  fragment of a few words;
- a sentence of an answer that asserts nothing (a question, the question restated, a repeat,
  another script's letters, only numbers and symbols) is removed first (`form`, rules there);
- a sentence of an answer must be SUPPORTED by its verified quotes (`support`):
  1. every number it states is in the quotes, up to formatting ("28.40" = "28.4",
     "1,000" = "1000", "300K" = "300000", "six" = "6") and one unit conversion
     (a percentage p% = p/100);
  2. every number is paired with the name its quotes pair it with (`mispaired_numbers`): a
     quote "ANCE and TAS-B have a Hole@10 of 14.4% and 31.8%" does not support "TAS-B had
     a Hole@10 of 14.4%"; only pairings a quote states unambiguously count (parallel lists,
     a number written after its name, a clause with one name);
  2b. every number stays in the slot its quotes give it (`misslotted_numbers`): not one end of a
     range ("from 5 to 20") as the value, not a difference ("by 7.2 points") as a score or the
     reverse, not a percentage as a count of things, not a count of another noun;
  2c. a subject that speaks of several things ("They both", "Both models") needs a quote that
     may speak of several, and a model's such sentence that names nothing answers a question
     about one thing with a claim about several (`scope.wider_subject`);
  3. every name or identifier it states (acronyms, mixed-case or digit-bearing tokens,
     capitalised words inside the sentence) is in the quotes or in the cited chunk's section
     heading or document title; a name the question itself uses is also accepted when the
     quote speaks of the paper's own work ("we", "our model") and the cited chunk mentions
     the name (the subject of "we"), never for a quote about another method;
  4. unless the sentence is copied from its quotes, its support score (agent.local.scoring:
     key-term coverage + embedding similarity, against the quotes and the document title)
     clears SUPPORT_MIN, calibrated by bench/calibrate_verifier.py on SciFact.
  A sentence that fails is dropped, with the reason in `Answer.dropped`;
- a refusal's uncited framing sentences are kept (they state what was searched); its
  "closest evidence" is only checked for presence and eligibility: it asserts nothing;
- markers are taken from the draft's structured citations only, never from text: a "[3]"
  inside chunk text (papers cite their own references that way) is neutralised.
"""


from __future__ import annotations

from agent.verify.claims import Quantity, missing_names, missing_numbers, names, quantities
from agent.verify.joining import DocumentVocabulary, Joiner, line_break_joiner
from agent.verify.pairing import mispaired_numbers, pairings
from agent.verify.quotes import (
    MIN_QUOTE_WORDS,
    MIN_SHORT_SENTENCE_WORDS,
    clean_quote,
    eligibility,
    find_quote,
    neutralise_markers,
    normalise,
    quote_span,
    strip_markers,
)
from agent.verify.supported import (
    SUPPORT_MIN,
    W_COVERAGE,
    EmbedFn,
    SupportResult,
    default_embed,
    support,
    support_score,
)
from agent.verify.verifier import CitationVerifier

__all__ = [
    "MIN_QUOTE_WORDS",
    "MIN_SHORT_SENTENCE_WORDS",
    "SUPPORT_MIN",
    "W_COVERAGE",
    "CitationVerifier",
    "DocumentVocabulary",
    "EmbedFn",
    "Joiner",
    "Quantity",
    "SupportResult",
    "clean_quote",
    "default_embed",
    "eligibility",
    "find_quote",
    "line_break_joiner",
    "mispaired_numbers",
    "missing_names",
    "missing_numbers",
    "names",
    "neutralise_markers",
    "normalise",
    "pairings",
    "quantities",
    "quote_span",
    "strip_markers",
    "support",
    "support_score",
]
