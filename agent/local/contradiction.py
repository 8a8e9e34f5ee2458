"""Does a sentence contradict a claim (a question's premise, or another sentence)?

Surface cues only (no NLI model ships inside a PyPI package), but general ones rather
than a word list fitted to a benchmark:

- negation scope: the sentence negates one of the claim's own terms ("we do not use X",
  "without X", "X is not ...") while the claim asserts it;
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
- opposites of direction and degree (increase/decrease, higher/lower; agent.local.text).

Each cue needs the sentence to be about the claim (the auditor checks relevance with its
calibrated threshold); the cue only says how it disagrees.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from agent.local.text import NEGATIONS, STOPWORDS, anchor_terms, antonym_clash, numbers, stem, words

_SCOPE = 5  # content words after a negation that it covers
_CLAUSE_END = re.compile(r"[,;:()]|\b(?:but|while|whereas|although)\b")
_ALTERNATIVE = [
    # (pattern, which group is chosen, which is rejected)
    (re.compile(r"(?P<a>[^,;:()]{3,80}?)\s+(?:instead of|rather than|in place of|as opposed to)\s+"
                r"(?P<b>[^,;:().]{3,80})", re.IGNORECASE), "a", "b"),
    (re.compile(r"\breplac(?:e|es|ed|ing)\s+(?P<b>[^,;:()]{3,80}?)\s+(?:with|by)\s+(?P<a>[^,;:().]{3,80})",
                re.IGNORECASE), "a", "b"),
    (re.compile(r"\bnot\s+(?P<b>[^,;:()]{3,60}?)\s*,?\s+but\s+(?P<a>[^,;:().]{3,80})", re.IGNORECASE), "a", "b"),
    (re.compile(r"\b(?:dispens(?:e|es|ed|ing)|do(?:es)? away|did away|doing away)\s+with\s+(?P<b>[^,;:().]{3,80})",
                re.IGNORECASE), "", "b"),
]
# Words without which each _ALTERNATIVE pattern cannot match (a quick test before the scan).
_ALTERNATIVE_WORDS = [("instead of", "rather than", "in place of", "as opposed to"), ("replac",), ("not",),
                      ("dispens", "away")]
# "A is faster than B": the comparative and what stands on each side of it.
_COMPARATIVE = re.compile(r"\b(?P<comp>(?:more|less|fewer)\s+[a-z]+|(?!rather\b|other\b)[a-z]+er)\s+than\s+"
                          r"(?P<after>[^,;:()?.]+)", re.IGNORECASE)
_NUMBER_TOKEN = re.compile(r"^\d+(?:[.,]\d+)*%?$")
# Counts are often spelled out ("two experts", "top-two"): read them as digits so "four of
# eight experts" meets "8 experts ... routes each token to two of them". "one" is left out:
# it is a pronoun as often as a count ("the one that", "one of").
_SPELLED = {w: str(i) for i, w in enumerate(
    ["zero", "_", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
     "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"]) if w != "_"}
# Not "hundred" or "thousand": they are scale words ("several hundred hours"), not counts.
_SPELLED.update({"thirty": "30", "forty": "40", "fifty": "50"})
_SPELLED_RE = re.compile(r"\b(" + "|".join(_SPELLED) + r")\b", re.IGNORECASE)


def spell_digits(text: str) -> str:
    """The text with spelled-out counts written as digits ("two experts" -> "2 experts")."""
    return _SPELLED_RE.sub(lambda m: _SPELLED[m.group(1).lower()], text)


def _content(text: str) -> list[str]:
    return [stem(w) for w in words(text) if w not in STOPWORDS and w not in NEGATIONS and len(w) > 1]


def _stems(text: str) -> set[str]:
    out: set[str] = set()
    for w in words(text):
        if w in STOPWORDS or w in NEGATIONS:
            continue
        out.add(stem(w))
        if "-" in w or "_" in w:
            out.update(stem(p) for p in re.split(r"[-_]", w) if len(p) > 1)
    return out


def negated_stems(text: str) -> set[str]:
    """Stems inside the scope of a negation: up to _SCOPE content words after it, within its clause."""
    out: set[str] = set()
    for clause in _CLAUSE_END.split(text):
        ws = words(clause)
        for i, w in enumerate(ws):
            # "with and without X", "whether or not": both polarities, so no negation.
            if i >= 2 and ws[i - 1] in ("and", "or") and ws[i - 2] == "with" and w == "without":
                continue
            if i >= 1 and ws[i - 1] == "or" and w == "not":
                continue
            if w in NEGATIONS or w.endswith("n't"):
                taken = 0
                for nxt in ws[i + 1:]:
                    if nxt in STOPWORDS or nxt in NEGATIONS:
                        continue
                    out.add(stem(nxt))
                    for part in re.split(r"[-_]", nxt):
                        if len(part) > 1:
                            out.add(stem(part))
                    taken += 1
                    if taken >= _SCOPE:
                        break
    return out


def _name_stems(text: str) -> set[str]:
    """The stems of the text's names (anchor terms) and of their parts ("in-context" -> "context")."""
    out: set[str] = set()
    for a in anchor_terms(text):
        out.add(a)
        out.update(stem(p) for p in re.split(r"[-_]", a) if len(p) > 1)
    return out


def _head(phrase: str, *, last: bool) -> set[str]:
    """The content words of `phrase` next to the connective: the 2 before it ("trained with
    plain SGD rather than") or the 3 after it ("instead of greedy decoding")."""
    terms = _content(phrase)
    return set(terms[-2:] if last else terms[:3])


def alternatives(text: str) -> list[tuple[frozenset[str], frozenset[str]]]:
    """(chosen, rejected) term sets the text states ("A instead of B" -> ({A}, {B}))."""
    return [(a, b) for a, b, _ in _alternatives(text)]


@lru_cache(maxsize=4096)  # a premise is compared with every candidate sentence
def _alternatives(text: str) -> tuple[tuple[frozenset[str], frozenset[str], str], ...]:
    """alternatives(), each with the first content word of what is set aside: the thing
    rejected ("instead of greedy decoding" -> "greedi"), or a predicate ("not required for
    X but ...", "does not block X but ...") that rejects no thing of its own."""
    out = []
    lowered = text.lower()
    for (pattern, chosen, rejected), words_needed in zip(_ALTERNATIVE, _ALTERNATIVE_WORDS):
        # The patterns scan every position of the text: skip those whose words are absent.
        if not any(w in lowered for w in words_needed):
            continue
        for m in pattern.finditer(text):
            a = _head(m.group(chosen), last=True) if chosen else set()
            terms = _content(m.group(rejected))
            if terms:
                out.append((frozenset(a), frozenset(terms[:3]), terms[0]))
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
        after = _content(sentence[m.end():])[:_CHOICE_REACH]
        for chosen, rejected in pairs:
            only_b, only_a = rejected - chosen, chosen - rejected
            if only_b & set(after) and not only_a & set(after) and not only_b & negated:
                return True
    return False


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


def _number_neighbours(text: str) -> dict[str, set[str]]:
    """Each number of the text with the content words right next to it ("4000 warmup steps")."""
    ws = [w for w in words(text) if w not in STOPWORDS]
    out: dict[str, set[str]] = {}
    for i, w in enumerate(ws):
        if _NUMBER_TOKEN.match(w.rstrip(".")):
            near = {stem(x) for x in ws[max(0, i - 2):i] + ws[i + 1:i + 3] if not _NUMBER_TOKEN.match(x)}
            out.setdefault(w.rstrip(".").replace(",", ""), set()).update(near)
    return out


def _comparisons(text: str) -> list[tuple[str, set[str], set[str]]]:
    """(comparative, terms before it in its clause, terms after "than") of each comparison."""
    out = []
    for m in _COMPARATIVE.finditer(text):
        before = _CLAUSE_END.split(text[: m.start()])[-1]
        comp = " ".join(stem(w) for w in m.group("comp").lower().split())
        out.append((comp, set(_content(before)[-3:]), set(_content(m.group("after"))[:3])))
    return out


def reversed_comparison(claim: str, sentence: str) -> bool:
    """The sentence makes the claim's comparison the other way round: "Lumen is faster
    than Quill" against "Quill is faster than Lumen" (or "Quill runs faster than Lumen")."""
    for comp, a, b in _comparisons(claim):
        a, b = a - b, b - a
        if not a or not b:
            continue
        for other, sa, sb in _comparisons(sentence):
            # Words on the same side in both ("parses receipts") are the shared predicate.
            ca, csa, cb, csb = a - sa, sa - a, b - sb, sb - b
            if other == comp and cb & csa and ca & csb:
                return True
    return False


def _is_year(value: str) -> bool:
    return bool(re.fullmatch(r"(?:19|20)\d\d", value))


def number_substitution(claim: str, sentence: str) -> bool:
    """The claim gives a number the sentence lacks, and the sentence puts another number
    next to the same word ("8 heads" against "16 heads"; "28.4 BLEU" against "41.0 BLEU";
    "four experts" against "two experts")."""
    claim, sentence = spell_digits(claim), spell_digits(sentence)
    claim_nums = _number_neighbours(claim)
    if not claim_nums:
        return False
    sent_nums = _number_neighbours(sentence)
    present = numbers(sentence)
    for value, near in claim_nums.items():
        if value in present or value.rstrip("%") in present:
            continue
        for other, other_near in sent_nums.items():
            # Numbers of one kind only: a share against a share, a year against a year
            # ("the 2022 World Cup" is not contradicted by "13 goals at World Cups").
            if (other != value and near & other_near and ("%" in other) == ("%" in value)
                    and _is_year(other) == _is_year(value)):
                return True
    return False


def term_substitution(claim: str, sentence: str, sibling_map: dict[str, set[str]], *,
                      context: str = "") -> bool:
    """The sentence states the claim's relation with a sibling of one of its terms in its
    place: a claim term missing from the sentence, a listed alternative of it present,
    and the rest of the claim covered by the sentence and its context (the previous
    sentence and the document title)."""
    claim_terms = set(_content(claim))
    sent = _stems(sentence)
    bag = sent | _stems(context)
    # Only a value can be substituted: a name, acronym, identifier or number of the claim
    # ("MAX" against "MEAN"). Common nouns have siblings in every paper ("documents and
    # queries"), so a sentence that merely speaks of queries would contradict any claim
    # about documents.
    values = set(anchor_terms(claim))
    # A claim begins with its subject: a capitalised first word is a name too ("Peak ...").
    first = re.match(r"\s*([A-Z][\w\-]+)", claim)
    if first and first.group(1).lower() not in STOPWORDS:
        values.add(stem(first.group(1).lower()))
    for term in (claim_terms - sent) & values:
        rivals = (sibling_map.get(term, set()) & sent) - claim_terms
        if not rivals:
            continue
        rest = claim_terms - {term}
        if rest and len(rest & bag) / len(rest) >= 0.6:
            return True
    return False


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


# Roman numerals name versions and types as digits do ("type II" / "type 2").
_ROMAN_VALUE = {"i": "1", "ii": "2", "iii": "3", "iv": "4", "v": "5", "vi": "6", "vii": "7", "viii": "8", "ix": "9",
                "x": "10"}
_ROMAN = re.compile(r"^(?:" + "|".join(sorted(_ROMAN_VALUE, key=len, reverse=True)) + r")$")


def alias(a: str, b: str) -> bool:
    """Two names that may be one thing: equal (a Roman numeral read as its digits), one
    inside the other ("bm25" / "bm25-based", "llama" / "llama-2", "rct" / "crct"), or one the other's letters in order with
    the same first letter (an acronym or contraction: "sbert" / "sentence-bert")."""
    # A plural is the same name ("RCTs" / "RCT"; acronyms are not stemmed).
    a, b = (_ROMAN.sub(lambda m: _ROMAN_VALUE[m.group(0)], x.lower()).removesuffix("s") or x for x in (a, b))
    # A zero typed for the letter O ("Fox0" / "FoxO").
    if a == b or a.replace("0", "o") == b.replace("0", "o"):
        return True
    short, long_ = sorted((a, b), key=len)
    if short in long_:
        return True
    if short[0] != long_[0]:
        return False
    rest = iter(long_)
    return all(ch in rest for ch in short)


def acronym_of(short: str, name: str) -> bool:
    """`short` abbreviates the hyphenated `name` by the initials of its parts, the last part
    kept whole or not ("sbert" / "sentence-bert", "rrr" / "rewrite-retrieve-read")."""
    parts = [x for x in re.split(r"[-_]", name.lower()) if x]
    if len(parts) < 2 or "-" in short or len(short) < 2:
        return False
    initials = "".join(x[0] for x in parts)
    return short.lower() in (initials, initials[:-1] + parts[-1])


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
    names = {a for a in anchor_terms(claim) if not _NUMBER_TOKEN.match(a)}
    if not names:
        return False
    # A claim begins with its subject: a capitalised first word is a name too ("Lumen ...").
    first = re.match(r"\s*([A-Z][\w\-]+)", claim)
    if first and first.group(1).lower() not in STOPWORDS:
        names.add(stem(first.group(1).lower()))
    sent_names = set(anchor_terms(sentence))
    bag = _stems(sentence) | _stems(context) | set(anchor_terms(context)) | sent_names
    claim_terms = set(_content(claim)) | names
    fills = _slot_fills(claim, sentence)
    if not frame:
        # No frame at all: any name of the sentence may stand in the missing one's place.
        fills = [(term, 0.0, set(_slot_terms(sentence))) for term, _, _ in fills]
    for term, score, fill in fills:
        if score < frame or term not in names or term in bag or term in fixed:
            continue
        # A number is no rival name (another number is the number cue's).
        rivals = {r for r in (fill & sent_names) - claim_terms
                  if any(c.isalpha() for c in r) and not alias(r, term)}
        if not rivals or any(alias(r, n) for r in rivals for n in names):
            continue
        if not all(n in bag or any(alias(n, b) for b in sent_names) for n in names - {term}):
            continue
        if score < 1.0 and not (claim_terms - names) <= bag:
            continue
        return True
    return False


# General English words of direction (more / less of something, for better / for worse),
# as stems. Not a list of opposite pairs: any word of one side against any of the other.
# What a clash of direction is worth is fitted (agent.local.entailment), not assumed.
_UP = frozenset(stem(w) for w in [
    "increase", "rise", "rose", "risen", "raise", "grow", "grew", "grown", "higher", "more", "greater", "larger",
    "faster", "improve", "enhance", "promote", "encourage", "boost", "elevate", "stimulate", "activate",
    "accelerate", "strengthen", "gain", "better", "outperform", "benefit", "beneficial", "effective", "induce",
    "facilitate", "upregulate", "expand", "exceed", "succeed", "success", "help", "superior"])
_DOWN = frozenset(stem(w) for w in [
    "decrease", "reduce", "lower", "less", "fewer", "smaller", "slower", "diminish", "decline", "drop", "fall",
    "fell", "fallen", "shrank", "worsen", "worse", "impair", "inhibit", "suppress", "repress", "block", "slow",
    "weaken", "loss", "lose", "degrade", "hurt", "attenuate", "downregulate", "ineffective", "fail", "failure",
    "shrink", "underperform", "harm", "harmful", "inferior"])


@lru_cache(maxsize=4096)
def direction(text: str) -> int:
    """+1 when the text says more / better of something, -1 less / worse, 0 neither or both;
    a negation in the text flips it ("does not improve" is -1)."""
    ws = [stem(w) for w in words(text)]
    up = sum(w in _UP for w in ws)
    down = sum(w in _DOWN for w in ws)
    sign = (up > down) - (down > up)
    negated = any(w in NEGATIONS or w.endswith("n't") for w in words(text))
    return -sign if negated else sign


def direction_clash(claim: str, sentence: str) -> bool:
    """The claim and the sentence point opposite ways ("X worsens Y" against "Y improved with X")."""
    a, b = direction(claim), direction(sentence)
    return a * b < 0


def contradiction_cue(claim: str, sentence: str, *, sibling_map: dict[str, set[str]] | None = None,
                      context: str = "") -> str:
    """How the sentence disagrees with the claim: "negation", "alternative", "number",
    "order" (a comparison reversed), "substitution" (a listed sibling), "entity" (another
    name in the claim's own frame), "antonym", or "" when no cue is found."""
    claim_terms = set(_content(claim))
    claim_negated = negated_stems(claim)
    asserted = claim_terms - claim_negated
    # A claim's own "A instead of B" asserts A, not B.
    for chosen, rejected in alternatives(claim):
        asserted -= rejected
    # The more specific cue first: "not by A but by B" is an alternative, not just a negation.
    for chosen, rejected, lead in _alternatives(sentence):
        # What is set aside must be the claim's own term, not a predicate that merely
        # shares a word with it ("TNF is not required for granuloma formation, but ...").
        if lead in asserted and not (chosen & asserted):
            return "alternative"
    # The claim's "A instead of B" against a sentence saying B was the one chosen.
    if chooses_rejected(claim, sentence):
        return "alternative"
    sent_negated = negated_stems(sentence)
    # The sentence negates something the claim asserts, and the claim negates nothing there.
    hit = (asserted & sent_negated) - claim_negated
    # One shared word is weak ("X is not recommended" against a premise that merely
    # mentions a recommendation): two negated terms of the claim are needed, and not only
    # its names ("we compare LLaMA without RALM" denies nothing RALM is said to do).
    if len(hit) >= 2 and hit - _name_stems(claim):
        return "negation"
    if number_substitution(claim, sentence):
        return "number"
    if reversed_comparison(claim, sentence):
        return "order"
    if sibling_map and term_substitution(claim, sentence, sibling_map, context=context):
        return "substitution"
    if value_substitution(claim, sentence, context=context):
        return "entity"
    if antonym_clash(claim, sentence):
        return "antonym"
    return ""

