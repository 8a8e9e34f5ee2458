"""Negation scope: which of a text's terms a "not" / "without" / "n't" covers."""

from __future__ import annotations

import re

from agent.local.contradiction.terms import content, name_stems, titled_stems
from agent.local.text import NEGATIONS, STOPWORDS, stem, words

_SCOPE = 5  # content words after a negation that it covers
CLAUSE_END = re.compile(r"[,;:()]|\b(?:but|while|whereas|although)\b")
# A negation word followed by one of these adds or hedges rather than denies: "not only X
# (but also Y)", "not just", "no matter", "no less than", "comparable, if not better".
_NOT_DENYING = {"not": frozenset({"only", "just", "merely", "simply", "least"}),
                "no": frozenset({"matter", "doubt", "less"})}


def negation_at(ws: list[str], i: int) -> bool:
    """Whether the word at i of `ws` (lower-cased words) denies what follows it."""
    w = ws[i]
    if not (w in NEGATIONS or w.endswith("n't")):
        return False
    # "with and without X", "whether or not": both polarities, so no negation.
    if i >= 2 and ws[i - 1] in ("and", "or") and ws[i - 2] == "with" and w == "without":
        return False
    if i >= 1 and ws[i - 1] in ("or", "if") and w == "not":
        return False
    return not (i + 1 < len(ws) and ws[i + 1] in _NOT_DENYING.get(w, ()))


# Words after which a "without" phrase opens its clause ("It shows that without X, Y tends
# to ...", "When trained without X, ...").
_OPENERS = frozenset({"that", "when", "if", "even", "and", "but", "so", "thus", "hence", "yet", "whereas", "while",
                      "because", "since", "although", "however", "then", "once", "trained", "run", "used", "evaluated",
                      "tested", "applied"})


def _clauses(text: str) -> list[tuple[str, bool]]:
    """The text's clauses (split at CLAUSE_END), each with whether a comma follows it."""
    out = []
    start = 0
    for m in CLAUSE_END.finditer(text):
        out.append((text[start:m.start()], m.group(0) == ","))
        start = m.end()
    out.append((text[start:], False))
    return out


def counterfactual(ws: list[str], i: int, *, comma_after: bool) -> bool:
    """Whether the "without" at i opens a phrase that sets a condition for the clause after
    it ("It shows that without question-aware compression, the model tends to drop key
    facts", "Without reranking, recall falls"): an ablation's what-if, which says what
    happens when X is taken away, so it asserts X's use rather than denying it. "We use A
    without B" (a "without" after its verb's object) still denies B."""
    return (ws[i] == "without" and comma_after
            and (i == 0 or ws[i - 1] in _OPENERS or (i == 1 and ws[0] in ("even", "only"))))


def negated_stems(text: str) -> set[str]:
    """Stems inside the scope of a negation: up to _SCOPE content words after it, within its
    clause; a fronted "without X," (counterfactual) negates nothing."""
    return _scopes(text)[0]


def affirmed_stems(text: str) -> set[str]:
    """Stems of the content words outside every negation's scope (negated_stems): what the
    text states rather than denies ("We do not observe patterns of experts by topic" affirms
    "topic" only; "X keeps ten pages, and does not cache pages" affirms "page")."""
    return _scopes(text)[1]


def _scopes(text: str) -> tuple[set[str], set[str]]:
    negated: set[str] = set()
    affirmed: set[str] = set()
    for clause, comma_after in _clauses(text):
        ws = words(clause)
        covered: set[int] = set()
        for i in range(len(ws)):
            if negation_at(ws, i) and not counterfactual(ws, i, comma_after=comma_after):
                taken = 0
                for j in range(i + 1, len(ws)):
                    if ws[j] in STOPWORDS or ws[j] in NEGATIONS:
                        continue
                    covered.add(j)
                    negated.add(stem(ws[j]))
                    negated.update(stem(part) for part in re.split(r"[-_]", ws[j]) if len(part) > 1)
                    taken += 1
                    if taken >= _SCOPE:
                        break
        affirmed |= _stems_of([w for j, w in enumerate(ws) if j not in covered])
    return negated, affirmed


# Verbs and nouns of finding: a negation next to one denies everything found, not the
# first few words ("we do not observe obvious patterns in the assignment of experts based on
# the topic", "we find no evidence that X helps", "there is no sign of drift over time").
# General English, as stems.
_FINDING = frozenset(stem(w) for w in ["observe", "observed", "find", "found", "see", "seen", "saw", "notice",
                                       "detect", "identify", "evidence", "sign", "indication"])


def denied_findings(text: str) -> set[str]:
    """Stems a negated finding denies: everything after a negation that stands next to a verb
    or noun of finding (_FINDING: "do not observe", "observe no", "no evidence"), to the end
    of its clause. The object of a finding is a whole phrase, longer than negated_stems'
    reach ("we do not observe obvious patterns in the assignment of experts based on the
    topic" denies "topic", the seventh content word after "not"). A word the text also
    states outside such a clause is not denied ("... with blood pressure of 60-74 mm Hg, with
    no evidence of an increased risk at lower blood pressures" denies no blood pressure)."""
    out: set[str] = set()
    elsewhere: set[str] = set()
    for clause, comma_after in _clauses(text):
        ws = words(clause)
        start = next((i for i in range(len(ws)) if negation_at(ws, i)
                      and not counterfactual(ws, i, comma_after=comma_after) and _finding_next_to(ws, i)), None)
        if start is None:
            elsewhere |= _stems_of(ws)
        else:
            out |= _stems_of(ws[start + 1:])
            elsewhere |= _stems_of(ws[:start])
    return out - elsewhere


def _finding_next_to(ws: list[str], i: int) -> bool:
    """Whether the negation at i stands next to a verb or noun of finding (_FINDING)."""
    after = next((w for w in ws[i + 1:] if w not in STOPWORDS and w not in NEGATIONS), "")
    before = next((w for w in reversed(ws[:i]) if w not in STOPWORDS), "")
    return stem(after) in _FINDING or stem(before) in _FINDING


# Where one proposition ends for a clause-wide denial: a clause break, or a relative or
# complement clause ("receipts that were not handwritten", "shows that X is not ...").
_PROPOSITION_END = re.compile(CLAUSE_END.pattern + r"|\b(?:that|which|who|whom|whose|where|when|if|whether)\b",
                              re.IGNORECASE)


def _stems_of(ws: list[str]) -> set[str]:
    held: set[str] = set()
    for w in ws:
        if w in STOPWORDS or w in NEGATIONS or w.endswith("n't"):
            continue
        held.add(stem(w))
        held.update(stem(p) for p in re.split(r"[-_]", w) if len(p) > 1)
    return held


# Negations that stand in a prepositional or adjectival phrase ("uses X without Y", "in the
# absence of Y", "failed punctures") or say that evidence is missing ("evidence ... was
# lacking") leave the words before them affirmed: they negate no predicate of them.
_ADJUNCT_NEGATIONS = frozenset({"without", "absence", "absent", "lack", "lacks", "lacking", "none", "nothing",
                                "unable"})
_FAIL = frozenset({"fail", "fails", "failed"})
# A negated predicate of knowing ("has not been studied", "is not known", "remains unclear")
# says the claim is untested, not false.
_EPISTEMIC = frozenset(stem(w) for w in [
    "studied", "investigated", "examined", "explored", "known", "clear", "established", "reported", "tested",
    "evaluated", "assessed", "addressed", "understood", "elucidated", "determined", "characterized",
    "characterised", "measured", "documented", "described", "yet"])


def _predicate_negation(ws: list[str], i: int) -> bool:
    """A denying negation of a predicate at i: not in a phrase of its own ("without X"), not
    "failed" as an adjective ("failed to" is a predicate), not a negated predicate of knowing."""
    if not negation_at(ws, i) or ws[i] in _ADJUNCT_NEGATIONS:
        return False
    if ws[i] in _FAIL and not (i + 1 < len(ws) and ws[i + 1] == "to"):
        return False
    after = next((w for w in ws[i + 1:] if w not in STOPWORDS and w not in NEGATIONS), "")
    return stem(after) not in _EPISTEMIC


def negated_subjects(text: str) -> list[set[str]]:
    """The content stems before the first denying negation of a predicate in each proposition
    that has one: the subject of a negated predicate ("the fine-tuning process itself is
    not responsible for ..." -> {fine-tun, process, itself}; "We use X without Y" has none)."""
    out = []
    for clause in _PROPOSITION_END.split(text):
        ws = words(clause)
        first = next((i for i in range(len(ws)) if _predicate_negation(ws, i)), None)
        if first is not None:
            out.append(_stems_of(ws[:first]))
    return out


def denied_clause(claim: str, sentence: str) -> bool:
    """The sentence denies something of what the claim is about: the subject of a negated
    proposition of the sentence holds two or more of the claim's terms (not only its
    names), and the sentence outside its negated propositions holds under half of the
    claim's other words, so the denial carries the claim ("Osprey traced the slowdown to
    the parser's tokenizer" against "..., which shows that the parser's tokenizer itself is
    not responsible"), not a side remark ("Lumen keeps ten pages per query, and does not
    cache pages across queries"). What the negation itself covers is the negation cue's
    (negated_stems); a claim's terms only after it ("We do not put markup on the predicted
    queries") deny nothing of them. Surface only: the negated predicate is taken to be the
    claim's, so agent.local.premise_check asks for a sentence that otherwise asserts the premise."""
    if any(negation_at(words(c), i) for c in _PROPOSITION_END.split(claim) for i in range(len(words(c)))):
        return False
    claim_terms = set(content(claim)) - titled_stems(claim)
    names = name_stems(claim)
    if not any(len(claim_terms & held) >= 2 and claim_terms & held - names for held in negated_subjects(sentence)):
        return False
    kept: set[str] = set()
    for clause in _PROPOSITION_END.split(sentence):
        ws = words(clause)
        if not any(negation_at(ws, i) for i in range(len(ws))):
            kept.update(content(clause))
    relation = claim_terms - names
    return not relation or len(relation & kept) / len(relation) < 0.5
