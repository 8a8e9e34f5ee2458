"""Entity-slot clashes: the claim's relation with another filler in one of its slots
(a listed sibling, another name between the claim's own neighbours)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from agent.local.contradiction.compared import compared_names, compares
from agent.local.contradiction.names import alias
from agent.local.contradiction.quantities import NUMBER_TOKEN, spell_digits
from agent.local.contradiction.terms import content, name_stems, stems, titled_stems
from agent.local.text import NEGATIONS, STOPWORDS, anchor_terms, stem, words


def siblings(texts: Iterable[str]) -> dict[str, set[str]]:
    """Terms the texts list as alternatives of one another: coordinations ("A, B and C",
    "A or B", "A vs B") and parallel compounds ("MEAN-strategy", "MAX-strategy")."""
    out: dict[str, set[str]] = {}

    def link(group: list[str]) -> None:
        group = [g for g in dict.fromkeys(group) if g and g not in STOPWORDS]
        for g in group:
            out.setdefault(g, set()).update(x for x in group if x != g)

    for text in texts:
        lowered = text.lower()
        for m in re.finditer(r"\b([a-z][\w\-]*)\s*(?:,\s*([a-z][\w\-]*)\s*)*,?\s+(?:and|or|vs\.?|versus)\s+"
                             r"([a-z][\w\-]*)", lowered):
            items = re.findall(r"[a-z][\w\-]*", m.group(0))
            link([stem(i) for i in items if i not in {"and", "or", "vs", "versus"}])
        # Parallel compounds share a head: "mean-strategy" and "max-strategy".
        heads: dict[str, list[str]] = {}
        for w in re.findall(r"\b([a-z0-9]+)-([a-z]+)\b", lowered):
            heads.setdefault(w[1], []).append(stem(w[0]))
        for group in heads.values():
            if len(set(group)) > 1:
                link(group)
    return out


_PRONOUN_LED = re.compile(r"\s*(?:it|they|this|these|its|their|he|she)\b", re.IGNORECASE)


def term_substitution(claim: str, sentence: str, sibling_map: dict[str, set[str]], *,
                      context: str = "") -> bool:
    """The sentence states the claim's relation with a sibling of one of its terms in its
    place: a claim term missing from the sentence, a listed alternative of it present,
    and the rest of the claim covered by the sentence and its context (the previous
    sentence and the document title)."""
    claim_terms = set(content(claim))
    sent = stems(sentence)
    bag = sent | stems(context)
    # Only a value can be substituted: a name, acronym, identifier or number of the claim
    # ("MAX" against "MEAN"). Common nouns have siblings in every paper ("documents and
    # queries"), so a sentence that merely speaks of queries would contradict any claim
    # about documents.
    values = set(anchor_terms(claim))
    # A claim begins with its subject: a capitalised first word is a name too ("Peak ...").
    first = re.match(r"\s*([A-Z][\w\-]+)", claim)
    subject = next(iter(anchor_terms(claim)), "")
    if first and first.group(1).lower() not in STOPWORDS:
        subject = stem(first.group(1).lower())
        values.add(subject)
    # A sentence that opens with a pronoun ("It outperforms ANCE ...") may be about the
    # claim's subject itself (its first name): its siblings there stand in another slot.
    pronoun_led = bool(_PRONOUN_LED.match(sentence))
    # An identifier (an acronym, a name with a capital or digit inside it: "CacheBlend")
    # can only be replaced by a name: "full KV recompute" lists "full" beside a system's
    # name as a sibling, but "full" names nothing (a capitalised word, "Peak", "Long", may
    # be a common one, replaced by a common word). Nor is a system the sentence names to
    # compare with a rival ("we compare against the BERT reranker"), unless the claim compares too.
    identifiers = _identifiers(claim)
    lead = re.match(r"\s*([A-Z][\w\-]+)", sentence)
    sent_names = name_stems(sentence) | ({stem(lead.group(1).lower())} if lead else set())
    compared = set() if compares(claim) else compared_names(sentence)
    claim_seq = list(dict.fromkeys(_slot_terms(claim)))
    sent_seq = _slot_terms(sentence)
    for term in (claim_terms - sent) & values - titled_stems(claim):
        rivals = (sibling_map.get(term, set()) & sent) - claim_terms - compared
        if term in identifiers:
            rivals &= sent_names
        # The rival stands where the claim's term stood: next to a word that is next to it in
        # the claim ("the default mode is average" against "Peak ... is the default mode"),
        # not anywhere in a sentence that shares the claim's words.
        rivals = {r for r in rivals if _in_slot(claim_seq, term, sent_seq, r)}
        if not rivals or (pronoun_led and term == subject):
            continue
        rest = claim_terms - {term}
        if rest and len(rest & bag) / len(rest) >= 0.6:
            return True
    return False


def _identifiers(text: str) -> set[str]:
    """Stems of the text's identifiers: a word with a digit or a capital after its first letter."""
    return {stem(t.lower()) for t in re.findall(r"[\w\-]+", text)
            if any(c.isdigit() for c in t) or any(c.isupper() for c in t[1:])}


def _in_slot(claim_seq: list[str], term: str, sent_seq: list[str], rival: str) -> bool:
    """Whether `rival` stands in the sentence within _SLOT_REACH content words of a neighbour
    of `term` in the claim (one of the _SLOT_REACH claim words on either side of it that the
    sentence holds); a hyphenated word counts for each of its parts."""
    if term not in claim_seq:
        return False
    held = set(sent_seq)
    i = claim_seq.index(term)
    near = {t for t in claim_seq[max(0, i - _SLOT_REACH):i + 1 + _SLOT_REACH] if t != term and t in held}
    spots = [k for k, t in enumerate(sent_seq) if t == rival or rival in t.split("-")]
    return any(sent_seq[j] in near for k in spots
               for j in range(max(0, k - _SLOT_REACH - 1), min(len(sent_seq), k + _SLOT_REACH + 2)) if j != k)


def _slot_terms(text: str) -> list[str]:
    """Content stems in order, repeats kept, single digits too ("8 heads")."""
    return [stem(w) for w in words(spell_digits(text))
            if w not in STOPWORDS and w not in NEGATIONS and (len(w) > 1 or w.isdigit())]


_SLOT_REACH = 2  # a neighbour of the replaced term is at most this many content words away
_SLOT_WIDTH = 4  # content words a filler between two neighbours may have


def _slot_fills(claim: str, sentence: str) -> list[tuple[str, float, set[str]]]:
    """Each claim term the sentence lacks, with how well the sentence frames another filler
    in its place (1: both neighbours around new words, 0.5: one neighbour next to them, 0:
    neither) and those new words; [] when under half of the claim's terms are there at all."""
    claim_seq = list(dict.fromkeys(_slot_terms(claim)))
    sent_seq = _slot_terms(sentence)
    held = set(sent_seq)
    claim_set = set(claim_seq)
    if not claim_seq or sum(t in held for t in claim_seq) / len(claim_seq) < 0.5:
        return []
    out = []
    for i, term in enumerate(claim_seq):
        if term in held:
            continue
        left = next((claim_seq[j] for j in range(i - 1, max(-1, i - 1 - _SLOT_REACH), -1) if claim_seq[j] in held),
                    None)
        right = next((claim_seq[j] for j in range(i + 1, min(len(claim_seq), i + 1 + _SLOT_REACH))
                      if claim_seq[j] in held), None)
        score = 0.0
        fill: set[str] = set()
        lefts = [k for k, t in enumerate(sent_seq) if t == left] if left else []
        rights = [k for k, t in enumerate(sent_seq) if t == right] if right else []
        for a in lefts:
            for b in rights:
                new = set(sent_seq[a + 1:b]) - claim_set
                if 1 <= b - a - 1 <= _SLOT_WIDTH and new:
                    score, fill = 1.0, fill | new
        if not score:
            for a in lefts:
                new = set(sent_seq[a + 1:a + 3]) - claim_set
                if new:
                    score, fill = 0.5, fill | new
            for b in rights:
                new = set(sent_seq[max(0, b - 2):b]) - claim_set
                if new:
                    score, fill = 0.5, fill | new
        out.append((term, score, fill))
    return out


def slot_filler(claim: str, sentence: str) -> tuple[float, float]:
    """Same relation, different filler: the sentence holds the content words around one of
    the claim's terms but not that term, and other content words where it stood ("relevant
    information in the middle of the context" against "relevant information at the
    beginning or end of the context"). Returns (score, score when the replaced term is a
    name, acronym or number): 1 when both neighbours frame the new words, 0.5 when one
    neighbour is followed (or preceded) by them; 0 when under half of the claim's terms are
    in the sentence at all. Surface only: a synonym in the slot scores like a rival term,
    so this is a feature for agent.local.entailment to weigh, never a verdict alone."""
    values = set(anchor_terms(claim))
    best = best_value = 0.0
    for term, score, _ in _slot_fills(claim, sentence):
        best = max(best, score)
        if term in values:
            best_value = max(best_value, score)
    return best, best_value


def value_substitution(claim: str, sentence: str, *, context: str = "", frame: float = 1.0,
                       fixed: frozenset[str] = frozenset()) -> bool:
    """The sentence states the claim's relation about the same things with another name in
    the place of one of the claim's names ("X fetches its results from the Bing API"
    against "X fetches its results from the Google API"). Needs, all of:
    - a name of the claim (an acronym, identifier or capitalised word; numbers are the
      number cue's) missing from the sentence and its context (the sentence before, the
      title), framed by the claim's own neighbours on both sides in the sentence
      (_slot_fills score 1);
    - between them, a name the claim does not hold and that is no alias of the replaced one
      ("SBERT" for "Sentence-BERT", "Llama-2" for "Llama");
    - every other name of the claim in the sentence or its context: the same subject (a
      sentence about another system using the other name denies nothing).
    With frame=0.5, one neighbour next to the other name is enough ("reranks passages with
    T5" against "reranks passages with BERT"); with frame=0, the other name may stand
    anywhere in the sentence ("Lumen reranks passages with T5" against "Lumen uses BERT to
    rerank passages"); either way the sentence and its context must also hold every other
    content term of the claim. A weak frame does not tell a rival from a second value of a
    relation that has several ("uses T5" and "uses BERT"), so the premise check uses it only
    for a premise no sentence asserts (agent.local.premise_check).
    `fixed`: stems that are never replaced (the kind of thing a question asks for: "GPUs" in
    "How many GPUs were used ...", agent.local.planner.asked_noun)."""
    names = {a for a in anchor_terms(claim) if not NUMBER_TOKEN.match(a)}
    if not names:
        return False
    # A claim begins with its subject: a capitalised first word is a name too ("Lumen ...").
    first = re.match(r"\s*([A-Z][\w\-]+)", claim)
    if first and first.group(1).lower() not in STOPWORDS:
        names.add(stem(first.group(1).lower()))
    sent_names = set(anchor_terms(sentence))
    bag = stems(sentence) | stems(context) | set(anchor_terms(context)) | sent_names
    claim_terms = set(content(claim)) | names
    fills = _slot_fills(claim, sentence)
    if not frame:
        # No frame at all: any name of the sentence may stand in the missing one's place.
        fills = [(term, 0.0, set(_slot_terms(sentence))) for term, _, _ in fills]
    titled = titled_stems(claim)
    # A name the sentence sets beside its subject to compare ("than BERT", "the BM25
    # baseline") is another system, not another filler of the claim's slot.
    compared = set() if compares(claim) else compared_names(sentence)
    for term, score, fill in fills:
        if score < frame or term not in names or term in bag or term in fixed or term in titled:
            continue
        # A number is no rival name (another number is the number cue's).
        rivals = {r for r in (fill & sent_names) - claim_terms - compared
                  if any(c.isalpha() for c in r) and not alias(r, term)}
        if not rivals or any(alias(r, n) for r in rivals for n in names):
            continue
        if not all(n in bag or any(alias(n, b) for b in sent_names) for n in names - {term}):
            continue
        if score < 1.0 and not (claim_terms - names) <= bag:
            continue
        return True
    return False
