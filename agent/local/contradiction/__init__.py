"""Does a sentence contradict a claim (a question's premise, or another sentence)?

Surface cues only (no NLI model ships inside a PyPI package), but general ones rather
than a word list fitted to a benchmark:

- negation scope: the sentence negates one of the claim's own terms ("we do not use X",
  "without X", "X is not ...") while the claim asserts it (a negated proposition whose
  subject is the claim's is negation.denied_clause, used by agent.local.premise_check);
- alternatives: the sentence says the claim's term was set aside for another one
  ("A instead of / rather than / in place of B", "replacing B with A", "not B but A",
  "dispensing with B"), or, for a claim that sets B aside for A, that B was the one
  chosen ("we chose B");
- substitution: the sentence holds the claim's relation but another value in its place,
  where "another value" is a number of the same kind next to the same word, or a term
  that the evidence itself lists as an alternative of the claim's term (siblings in a
  coordination: "MEAN-strategy ... and MAX-strategy", "A, B or C");
- another name in the same frame: the sentence holds the words on both sides of one of
  the claim's names, with a different name between them that is no alias of it ("fetches
  results from the Google API" against "... from the Bing API"), about the same subject;
- opposites of direction and degree (increase/decrease, higher/lower; agent.local.text), in
  the claim word's own slot: next to a word that stands next to it in the claim;
- orderings reversed: a comparison the other way round ("A is faster than B" / "B is faster
  than A"), a ranking the other way round whatever words rank ("A was preferred over B" /
  "A performs worse than B"), a verdict moved to another place in a sequence ("best in the
  middle" / "best at the beginning or end", "degrades in the middle").

Negation scope ignores "not only", "not just", "if not", "no matter" (they add or hedge), and a
fronted "without X," (an ablation's what-if: "Without X, Y tends to ..."); a parenthesis glossing
a name in the claim ("the Y (T5 reranking) paper") is not asserted.
Modules by topic: negation (scope, negated clauses), alternatives (instead-of frames),
quantities (numbers), opposites (order, direction, antonyms), slots and names (entity-slot clashes; a
name must be replaced by a name, in the claim's slot, and not by one the sentence compares with: compared),
origin and roles (the premise check's own: a cited origin, a name given another role in a list).

Each cue needs the sentence to be about the claim (the auditor checks relevance with its
calibrated threshold); the cue only says how it disagrees.
"""

from __future__ import annotations

from agent.local.contradiction.alternatives import alternatives, alternatives_led, chooses_rejected
from agent.local.contradiction.names import acronym_of, alias
from agent.local.contradiction.negation import denied_findings, negated_stems
from agent.local.contradiction.opposites import (
    antonym_in_slot,
    direction,
    direction_clash,
    moved_position,
    rankings,
    reversed_comparison,
    reversed_ranking,
)
from agent.local.contradiction.quantities import number_substitution, spell_digits, substituted_numbers
from agent.local.contradiction.slots import siblings, slot_filler, term_substitution, value_substitution
from agent.local.contradiction.terms import (
    content,
    different_words,
    glossed_stems,
    kind_of,
    name_stems,
    spelled_by,
    titled_stems,
)

__all__ = [
    "acronym_of", "alias", "alternatives", "antonym_in_slot", "chooses_rejected", "contradiction_cue", "direction",
    "direction_clash", "moved_position", "negated_stems", "number_substitution", "rankings", "reversed_comparison",
    "reversed_ranking", "siblings",
    "slot_filler", "spell_digits", "substituted_numbers", "term_substitution", "value_substitution",
]


def contradiction_cue(claim: str, sentence: str, *, sibling_map: dict[str, set[str]] | None = None,
                      context: str = "") -> str:
    """How the sentence disagrees with the claim: "negation", "alternative", "number",
    "order" (a comparison reversed), "substitution" (a listed sibling), "entity" (another
    name in the claim's own frame), "antonym", or "" when no cue is found."""
    claim_terms = set(content(claim))
    claim_negated = negated_stems(claim)
    # The words of a quoted title name a document: the claim asserts nothing with them.
    # Nor does a parenthesis glossing a name ("the monoT5 (T5 reranking) paper").
    asserted = claim_terms - claim_negated - titled_stems(claim) - glossed_stems(claim)
    # A claim's own "A instead of B" asserts A, not B.
    for chosen, rejected in alternatives(claim):
        asserted -= rejected
    # The more specific cue first: "not by A but by B" is an alternative, not just a negation.
    shared = asserted & set(content(sentence))
    # An acronym of the claim that the sentence writes out ("RLHF" / "reinforcement learning
    # from human feedback") is set aside when its first word is.
    written_out = {first for t in asserted if (first := _first_spelled(t, sentence))}
    for chosen, rejected, lead, frame in alternatives_led(sentence):
        # What is set aside must be the claim's own term, not a predicate that merely
        # shares a word with it ("TNF is not required for granuloma formation, but ..."),
        # and the sentence must share more of the claim than that term: "Replacing BERT with
        # RoBERTa did not help" says nothing of a claim about what BERT's authors caution.
        # What is chosen must be something the claim does not assert already ("X uses A and B"
        # is not denied by "X uses A rather than B alone"); a word it shares with the claim
        # ("decodes" in "decodes greedily rather than with beam search") is the shared relation.
        # "A, not B" sets B aside within A's relation: the claim must share two words of A's
        # clause (its subject and relation), not the word B alone.
        if frame is not None and len((frame & asserted) - rejected) < 2:
            continue
        if (lead in asserted or lead in written_out) and (not chosen or chosen - asserted) and shared - rejected:
            return "alternative"
    # The claim's "A instead of B" against a sentence saying B was the one chosen.
    if chooses_rejected(claim, sentence):
        return "alternative"
    # What the sentence negates, and what a negated finding denies beyond that reach ("we do
    # not observe patterns in the assignment of experts based on the topic"), unless the
    # sentence states it elsewhere ("... of 60-74 mm Hg, with no evidence of a J-shaped
    # increased risk at lower blood pressures" does not deny blood pressure).
    sent_negated = negated_stems(sentence)
    sent_negated |= denied_findings(sentence)
    # The sentence negates something the claim asserts, and the claim negates nothing there:
    # a claim term itself, a kind of what is negated ("without any training" denies
    # fine-tuning), or the words an acronym the sentence negates spells ("... of the LM"
    # against "the language model"), which count as one term, the acronym.
    hit = (asserted & sent_negated) | {t for t in asserted if kind_of(t) in sent_negated}
    hit -= claim_negated
    # The same stem as another word: "human annotators" are not denied by "without human annotations".
    hit -= different_words(claim, sentence)
    units = len(hit)
    for n in sent_negated - asserted:
        spelled = (spelled_by(n, claim) & asserted) - claim_negated
        if spelled - hit:
            hit |= spelled
            units += 1
    # One shared word is weak ("X is not recommended" against a premise that merely
    # mentions a recommendation): two negated terms of the claim are needed, and not only
    # its names ("we compare LLaMA without RALM" denies nothing RALM is said to do).
    if units >= 2 and hit - name_stems(claim):
        return "negation"
    if number_substitution(claim, sentence):
        return "number"
    # A ranking reversed, whatever words rank ("A was preferred over B" / "A is worse than
    # B"), or a verdict moved to another place ("best in the middle" / "best at the end").
    if reversed_comparison(claim, sentence) or reversed_ranking(claim, sentence) or moved_position(claim, sentence):
        return "order"
    if sibling_map and term_substitution(claim, sentence, sibling_map, context=context):
        return "substitution"
    if value_substitution(claim, sentence, context=context):
        return "entity"
    if antonym_in_slot(claim, sentence):
        return "antonym"
    return ""


def _first_spelled(acronym: str, sentence: str) -> str:
    """The stem of the first of the sentence's words whose initials spell the acronym
    (terms.spelled_by), "" when none do."""
    from agent.local.text import stem, words

    spelled = spelled_by(acronym, sentence)
    return next((stem(w) for w in words(sentence) if stem(w) in spelled), "")
