"""Do two relevant sentences of different chunks disagree about one need?

The auditor (agent.local.auditor) reports a conflict when the sentence that answers a need
and another relevant sentence of another chunk fire a surface cue of
agent.local.contradiction ("negation", "alternative", "antonym", "number"). A cue alone
also fires between sentences that agree or speak of different things ("GPT-2 was not
fine-tuned" / "BERT was not fine-tuned on ..."), so a pair is a conflict only when, beyond
the cue:

1. both sentences answer the need: the other sentence's P(answers) (agent.local.selection)
   is at least `conflict_answers_min`, like the answering one's;
2. they do not name different things: when each sentence names something (a model, a
   dataset, a method: agent.local.text.anchor_terms, quantities left out), one of them
   names something the other names (itself, or the sentence before it when it opens by
   referring back: "It was ...")
   (`conflict_same_names`; "For T5, we used a learning rate of 1e-3" / "For BERT, ... 1e-6"
   are two settings, not a disagreement);
3. a "number" cue needs the same statement with another number: the two share at least
   `conflict_number_jaccard` of their terms;
4. any cue needs a share of terms of at least `conflict_jaccard_min`.

The thresholds are AuditorParams fields, chosen by bench/conflicts.py on the calibration
halves' conflicts labelled by reading (bench/conflict_labels.jsonl) and on SciFact
calibration claims against the sentences of the abstracts they cite.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent.local.contradiction import contradiction_cue
from agent.local.text import anchor_terms, term_set

if TYPE_CHECKING:
    from agent.local.auditor import AuditorParams
    from agent.local.candidates import Candidate
    from agent.types import Source

_REFERRING = re.compile(r"\s*(it|its|they|their|this|these|such|both|the latter|the former)\b", re.IGNORECASE)
_LABEL = re.compile(r"^\s*[A-Z]{4,}\s+(?=[A-Z])")
CONFLICT_CUES = ("negation", "alternative", "antonym", "number")


@dataclass(frozen=True)
class Pair:
    """The answering sentence (a) of a need and another relevant sentence (b) of another chunk."""

    fact: str
    quote_a: str
    quote_b: str
    context_a: str = ""
    context_b: str = ""
    answers_a: float = 1.0  # P(answers the need), agent.local.selection
    answers_b: float = 1.0
    support_b: float = 1.0


def previous_sentence(cand: Candidate, sources: list[Source]) -> str:
    """The candidate's context without its document title: a title names what the whole
    paper is about, not which of its things one sentence speaks of."""
    title = sources[cand.source_index].document_title
    return cand.context.removesuffix(title).strip() if title else cand.context


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def pair_cue(pair: Pair, sibling_map: dict[str, set[str]] | None = None) -> str:
    """The contradiction cue of the pair among CONFLICT_CUES, or ""."""
    cue = contradiction_cue(pair.quote_a, pair.quote_b, sibling_map=sibling_map)
    return cue if cue in CONFLICT_CUES else ""


def _names(text: str) -> set[str]:
    """The names, acronyms and identifiers of a text (agent.local.text.anchor_terms), not
    its quantities ("1.5%", "400mg") nor a leading section label ("CONCLUSIONS The ...")."""
    text = _LABEL.sub("", text)
    return {t for t in anchor_terms(text) if not t[0].isdigit()}


def _with_referent(quote: str, context: str) -> str:
    """The sentence, with the one before it when it opens by referring back ("It was ...")."""
    return f"{quote} {context}" if _REFERRING.match(quote) else quote


def names_apart(pair: Pair) -> bool:
    """Each sentence names something (a model, a dataset, a method) and neither names,
    even in its context, anything the other names: "For T5, we used a learning rate of
    1e-3" and "For BERT, we used a learning rate of 1e-6" speak of different things."""
    names_a, names_b = _names(pair.quote_a), _names(pair.quote_b)
    if not names_a or not names_b:
        return False
    held_a = term_set(_with_referent(pair.quote_a, pair.context_a))
    held_b = term_set(_with_referent(pair.quote_b, pair.context_b))
    return not (names_a & held_b) and not (names_b & held_a)


def is_conflict(pair: Pair, cue: str, params: AuditorParams) -> bool:
    """Whether a pair whose cue fired is a conflict (the conditions of the module docstring)."""
    if cue not in CONFLICT_CUES:
        return False
    shared = _jaccard(term_set(pair.quote_a), term_set(pair.quote_b))
    if cue == "number" and shared < params.conflict_number_jaccard:
        return False
    if shared < params.conflict_jaccard_min:
        return False
    if pair.answers_b < params.conflict_answers_min:
        return False
    return not (params.conflict_same_names and names_apart(pair))
