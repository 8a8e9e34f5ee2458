"""Is a need answered by the evidence? A calibrated probability per need, from its ranked
candidate sentences (agent.local.selection), shared by the local auditor and its calibration
(bench/calibrate_sufficiency.py).

The selection model says which candidate answers *best*; this says whether the best one
answers *at all*, from features of the need's best candidate, first these two:

- best_logit: the selection model's logit (how answer-like it is: the model already weighs
  answer-type fit, the focus noun, IDF coverage and the need's names and numbers);
- support: its blend of term coverage and cosine similarity with the need (whether it
  speaks to the need at all).

Other features were measured (ALL_FEATURES: the margin to the second candidate, IDF
coverage with the sentence before, answer fit, focus, anchors; bench/calibrate_sufficiency.py
prints each set's AUC): the margin and the context coverage got negative weights on the
calibration data (a lone candidate, which every gated number question has, scored as
unlikely), and answer fit, focus and anchors are constant on SciFact claims, so only a few
dozen devbench needs would fit them. Two features with positive weights generalise better
than seven fitted on that.

Features aimed at questions about a paper that the paper does not answer (the QASPER-style
case) are here too (focus_miss: what the best sentence leaves out of the asked focus,
asked_focus; fit_gap: 1 - its answer fit; miss_and_gap: their product), 0 on SciFact claims.
The default adds focus_miss to the two above, its weight fitted on top of theirs (an offset)
on whole runs of the QASPER-style, in-domain and devbench calibration questions
(bench/calibrate_sufficiency.py --runs). It replaced miss_and_gap in the refit on today's
needs (stop 26): of the models compared by their leave-one-question-out whole-run cost on
the calibration halves, those with focus_miss cost least (0.05 against 0.16 with
miss_and_gap), since miss_and_gap is 0 whenever the answer type fits, and it fits trivially
for a "what is the N of ..." need (any sentence is a definition's candidate) and for a
number next to *part* of the focus ("learning rate" for "what dropout rate"), which is how
the unanswerable calibration questions were answered (docs/benchmarks.md, "Refusal decision
refit", stop 26). premise_unconfirmed (a one-need question whose premise no sentence
confirms) is available to a model that weighs the premise itself; the default leaves that to
the verdict's waiver.

A need with no candidate at all (every sentence failed the answer-type or anchor gates) has
probability 0. The weights are fields of agent.local.auditor.AuditorParams
(`need_features`, `need_weights`, `need_bias`), fitted on declared calibration data only: SciFact calibration
claims (SUPPORT/CONTRADICT, whose abstract states the claim's matter, against NEI, whose
abstract is on topic without stating it) and the devbench calibration half (needs whose
evidence holds a gold span, the same needs with the gold-span chunks removed from the
evidence, and out-of-scope questions). The threshold that turns the probability into
SUPPORTED / UNSUPPORTED minimises a stated cost on the same data (answering what the
evidence does not state costs more than a refusal of what it does).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np

from agent.local.answer_type import need_of
from agent.local.selection import FEATURES
from agent.local.text import NEGATIONS, STOPWORDS, anchor_terms, content_terms, coverage, stem

ALL_FEATURES = ("best_logit", "margin", "support", "idf_context", "answer_fit", "focus", "anchors", "focus_miss",
                "fit_gap", "miss_and_gap", "premise_unconfirmed")
# The default model's features (agent.local.auditor.AuditorParams.need_features keeps the
# names with the weights the role uses).
NEED_FEATURES = ("best_logit", "support", "focus_miss")
_MARGIN_CAP = 3.0
# "What is the N of ...", "Which is the N used ...": the noun the question asks for.
_WHAT_THE_N = re.compile(
    r"^(?:what|which)\s+(?:is|are|was|were)\s+(?:the\s+|a\s+|an\s+)?(?P<n>[\w\-]+(?:\s+[\w\-]+){0,2}?)\s+"
    r"(?:of|in|for|on|that|when|used|does|do|did)\b", re.IGNORECASE)


# "How long does training take", "how long does it take to train the encoder", "how big is
# the test set", "what is the baseline": answer_type finds no asked noun (the answer is a
# duration, a size, a value), yet the question asks it *of* something, and a sentence that
# gives a duration or a size of something else ("decoding takes 3 ms per layer") does not
# answer it. That subject is the focus the answering sentence must name.
_SUBJECT_OF = (
    re.compile(r"^how\s+long\s+(?:does|do|did|will|would)\s+it\s+take\s+(?:\w+\s+)?to\s+(?P<n>[^?.!,;]+?)\s*[?.!]*$",
               re.IGNORECASE),
    re.compile(r"^how\s+(?:long|big|large|fast|slow|small|deep|wide)\s+(?:is|are|was|were|does|do|did)\s+"
               r"(?P<n>[^?.!,;]+?)(?:\s+(?:take|took|last|run|need|require)\b[^?.!]*)?\s*[?.!]*$", re.IGNORECASE),
    re.compile(r"^(?:what|which)\s+(?:is|are|was|were)\s+(?:the|their|its)\s+(?P<n>[\w\-]+(?:\s+[\w\-]+){0,2})\s*[?.!]*$",
               re.IGNORECASE),
)


def _subject_focus(fact: str) -> list[str]:
    """The content terms of what a "how long / how big / what is the N" need asks about ("how
    long does *training* take": train); [] for other needs."""
    for pattern in _SUBJECT_OF:
        m = pattern.match(fact.strip())
        if m:
            return content_terms(m.group("n"))
    return []


# Nouns that name only the form of a numeric answer ("what *share* of the fields", "the
# *accuracy* of X"): an answering sentence gives the number ("88.4% of the fields") without
# the word, so they are not a focus the sentence must name.
_MEASURES = frozenset(content_terms("number percentage percent fraction share proportion ratio value amount count "
                                    "score accuracy size total"))


# Heads that say which quantity of a thing is asked ("dropout *rate*", "hidden *size*"): next
# to a word naming the thing they are generic, and a sentence about another rate ("a learning
# rate of 3e-5") names them without answering; the thing's word is what it must name.
_GENERIC_HEADS = frozenset(content_terms("rate size value dimension dimensionality length frequency threshold depth "
                                         "width"))


# "What kind of ranking function ...": the kind is the answer's form; the asked thing is the noun after it.
_KINDS = frozenset(content_terms("kind kinds type types sort sorts form forms variety"))
_KIND_OF = re.compile(r"\b(?:kinds?|types?|sorts?|forms?|variety)\s+of\s+(?P<n>[\w\-]+(?:\s+[\w\-]+){0,2})",
                      re.IGNORECASE)


# "What other *name* is it given?", "what *term* do they use for ...": these nouns name only the
# form of the answer, a name, which the answering sentence gives ("... also called Retrieve-Read")
# without the word; "the name of the N" asks for the N. Modifiers such as "which *exact* model"
# narrow the asked thing without naming it.
_NAMINGS = frozenset(content_terms("name names term terms acronym abbreviation"))
_NAME_OF = re.compile(r"\b(?:names?|terms?)\s+(?:of|for)\s+(?:the\s+|a\s+|an\s+|their\s+|its\s+)?"
                      r"(?P<n>[\w\-]+(?:\s+[\w\-]+){0,2})", re.IGNORECASE)
_MODIFIERS = frozenset(content_terms("exact specific particular precise actual other main"))


# A term the need defines or quotes: "What is 'late chunking'", "what does query drift mean",
# "what do the authors mean by question-only retrieval", "define dense retrieval", "what is a
# sparse index". Plain words in quotes are a coined term, not a name (agent.local.text.
# anchor_terms finds only names, acronyms and numbers), and "what is X" has no asked noun for
# answer_type, so without this a sentence sharing one word of X answers it. Unquoted, "what
# is X" counts only without a determiner other than a/an and with X a short phrase that ends
# the clause ("what is the best retriever", "what is their main metric", "what are typical
# chunk sizes" ask for a value, not a definition).
_QUOTED = re.compile(r"(?<!\w)['\u2018\"\u201c](?P<t>[^'\u2019\"\u201d]{2,60})['\u2019\"\u201d](?!\w)")
_TERM = r"(?P<t>[\w\-/]+(?:\s+[\w\-/]+){0,3})"
_DEFINED = (
    re.compile(rf"^what\s+is\s+(?:an?\s+)?(?!(?:the|it|this|that|these|those|its|their|our|his|her|your)\b){_TERM}\s*[?.!]*$", re.IGNORECASE),
    re.compile(rf"^what\s+(?:does|do)\s+(?:the\s+)?(?:(?:term|phrase|word|notion|concept)\s+)?{_TERM}\s+"
               r"(?:mean|stand\s+for|refer\s+to)\s*[?.!]*$", re.IGNORECASE),
    re.compile(rf"^what\b.*\b(?:mean|meant)\s+by\s+(?:the\s+|an?\s+)?(?:(?:term|phrase|notion|concept)\s+)?{_TERM}\s*[?.!]*$",
               re.IGNORECASE),
    re.compile(rf"^(?:please\s+)?define\s+(?:the\s+|an?\s+)?(?:(?:term|phrase|notion|concept)\s+)?{_TERM}\s*[?.!]*$",
               re.IGNORECASE),
)
# Words that end a term where a question goes on ("what is X used for", "what is X in Y").
_NOT_IN_TERM = frozenset({"of", "in", "for", "on", "used", "by", "with", "to", "from", "that", "when", "and", "or",
                          "is", "are", "was", "were", "does", "do", "did"})


def _phrase(text: str) -> list[str]:
    """The stemmed content words of a text in order, hyphenated words split into their parts
    ("late-chunking" and "late chunking" both give late, chunk)."""
    return [stem(w) for w in re.findall(r"[a-z0-9]+", text.lower())
            if w not in STOPWORDS and w not in NEGATIONS and (len(w) > 1 or w.isdigit())]


def defined_term(fact: str) -> list[str]:
    """The stemmed content words, in order, of the term the need quotes or asks to define
    ("What is 'late chunking'": late, chunk); [] when it has none."""
    for quoted in _QUOTED.finditer(fact):
        # A quoted title or name ("In 'Retrieval meets Long Context', ...", "the 'Lost in the
        # Middle' experiments": most of its content words capitalised) is no term a sentence
        # names: the paper is its own title, and names are anchor_terms' already.
        said = [w for w in quoted.group("t").split() if w.lower() not in STOPWORDS]
        if 2 * sum(w[:1].isupper() for w in said) <= len(said):
            return _phrase(quoted.group("t"))
    text = fact.strip()
    for pattern in _DEFINED:
        m = pattern.search(text)
        if m and not set(m.group("t").lower().split()) & _NOT_IN_TERM:
            return _phrase(m.group("t"))
    return []


# Content words a sentence may put between two of the term's ("a question-only *setting* for
# the retrieval phase" names question-only retrieval); stopwords are not counted.
_TERM_GAP = 1


def names_term(term: list[str], text: str) -> bool:
    """Whether the text names the term: all its content words in order, at most _TERM_GAP
    other content words between two of them and no punctuation, whatever the case, hyphens or plural
    ("Late-Chunking" and "late chunkings" name "late chunking"; "chunks embedded late" and
    "late interaction scores every token of a chunk" do not). True when there is no term."""
    if not term:
        return True
    return any(_in_order(term, _phrase(clause)) for clause in re.split(r"[;:,!?()\[\]]|\.\s", text))


def _in_order(term: list[str], seq: list[str]) -> bool:
    """Whether the words `seq` hold the term in order, at most _TERM_GAP others between two of its words."""
    for start in (i for i, w in enumerate(seq) if w == term[0]):
        at = start
        for word in term[1:]:
            nxt = next((j for j in range(at + 1, min(at + 2 + _TERM_GAP, len(seq))) if seq[j] == word), None)
            if nxt is None:
                break
            at = nxt
        else:
            return True
    return False


def asked_focus(fact: str) -> list[str]:
    """The stemmed terms of what the need asks for: the focus of agent.local.answer_type
    ("how many *GPUs*", "which *optimizer*"), else the noun of "what is the N of ..."
    ("what is the *carbon footprint* of ..."), less the nouns that only name a measure or a
    name ("what other *name* is it given"; "the name of the N" asks for the N), modifiers
    ("which *exact* model"), a generic head next to the thing it measures ("dropout *rate*":
    dropout), and
    the names the need is about ("what share of *XOR-TyDi QA* answers": the asked thing is
    the answers; a sentence about the dataset need not repeat its name), unless nothing else
    is left; [] when the need names none."""
    focus = need_of(fact).focus
    if not focus:
        m = _WHAT_THE_N.match(fact.strip())
        focus = content_terms(m.group("n")) if m else _subject_focus(fact)
    kind = _KIND_OF.search(fact)
    if kind and set(focus) <= _KINDS:
        focus = content_terms(kind.group("n"))
    named = _NAME_OF.search(fact)
    if named and set(focus) <= _NAMINGS | _MODIFIERS:
        focus = content_terms(named.group("n"))
    focus = [t for t in focus if t not in _MEASURES | _NAMINGS | _MODIFIERS]
    focus = [t for t in focus if t not in _GENERIC_HEADS] or focus
    names = {stem(part) if part != name else name
             for name in anchor_terms(fact) for part in (name, *re.split(r"[-_]", name)) if part}
    asked = [t for t in focus if t not in names]
    return asked or focus


def focus_miss(focus: list[str], sentence_terms: set[str], context_terms: set[str]) -> float:
    """How much of the asked focus the answering sentence leaves out: 0 when it names it (or
    the need has none), 1 when neither it nor the sentence before does; a focus named only
    in the sentence before counts half ("We try three pooling strategies. The default is MEAN.")."""
    if not focus:
        return 0.0
    in_sentence = coverage(focus, sentence_terms)
    with_context = coverage(focus, sentence_terms | context_terms)
    return 1.0 - (in_sentence + 0.5 * (with_context - in_sentence))


def new_names(fact: str, sentence: str) -> list[str]:
    """The names a sentence holds that the need does not (agent.local.text.anchor_terms less
    bare numbers): for a need asking for a name ("which accelerator", "which model snapshot") a
    new name may be the answer itself ("a Coral TPU-7"), given without the asked noun."""
    asked = set(anchor_terms(fact)) | set(content_terms(fact))
    return [t for t in anchor_terms(sentence) if t not in asked and not re.fullmatch(r"[\d.,]+", t)]


def _logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


def features(ranked: Sequence[tuple[float, np.ndarray]], names: Sequence[str] = NEED_FEATURES, *,
             miss: float = 0.0, unconfirmed: bool = False) -> np.ndarray | None:
    """The need's features `names` (of ALL_FEATURES) from its candidates as (P(answers),
    selection features), best first; None when it has no candidate. The margin is the best
    logit minus the second's, capped at 3 (a lone candidate gets the cap); `miss` is the
    best candidate's focus_miss (the caller knows its terms); fit_gap is 1 - its answer fit
    (it holds a number, but not next to the asked focus: 0.7); miss_and_gap their product
    (the sentence neither names what is asked nor holds its kind of answer where asked);
    premise_unconfirmed 1 when the need is a one-need question's whose premise no retrieved
    sentence confirms (`unconfirmed`, from agent.local.premise_check)."""
    if not ranked:
        return None
    best_p, best_x = ranked[0]
    z1 = _logit(best_p)
    values = {"best_logit": z1,
              "margin": _MARGIN_CAP if len(ranked) < 2 else min(z1 - _logit(ranked[1][0]), _MARGIN_CAP),
              "focus_miss": miss, "fit_gap": 1.0 - float(best_x[FEATURES.index("answer_fit")]),
              "premise_unconfirmed": float(unconfirmed)}
    values["miss_and_gap"] = miss * values["fit_gap"]
    for name in ("support", "idf_context", "answer_fit", "focus", "anchors"):
        values[name] = float(best_x[FEATURES.index(name)])
    return np.array([values[n] for n in names], dtype=np.float64)


def probability(x: np.ndarray | None, weights: tuple[float, ...], bias: float) -> float:
    """P(the need is answered by its best sentence) under the fitted logistic model."""
    if x is None:
        return 0.0
    z = float(np.dot(x, np.asarray(weights, dtype=np.float64))) + bias
    return 1.0 / (1.0 + math.exp(-max(min(z, 30.0), -30.0)))


def cost(p: Sequence[float], y: Sequence[int], threshold: float, *, answer_unanswered: float,
         refuse_answered: float) -> float:
    """Total cost of deciding `answered` when p >= threshold: each unanswered need called
    answered costs `answer_unanswered`, each answered need called missing `refuse_answered`."""
    cost_total = 0.0
    for pi, yi in zip(p, y):
        said = pi >= threshold
        if said and not yi:
            cost_total += answer_unanswered
        elif not said and yi:
            cost_total += refuse_answered
    return cost_total


def auc(p: Sequence[float], y: Sequence[int]) -> float | None:
    """Probability that a random answered need scores above a random unanswered one (ties 1/2)."""
    pos = [a for a, b in zip(p, y) if b]
    neg = [a for a, b in zip(p, y) if not b]
    if not pos or not neg:
        return None
    wins = sum((a > b) + 0.5 * (a == b) for a in pos for b in neg)
    return wins / (len(pos) * len(neg))
