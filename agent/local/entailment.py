"""Does a sentence contradict, support or merely neighbour a claim (a question's premise)?

A three-way softmax classifier over features of the (claim, sentence) pair, fitted on the
SciFact calibration claims by bench/calibrate_premise.py (numpy + scipy, no model of its
own: the only model run is the one embedding pass the auditor already makes).

Features of one pair (FEATURES, in this order):

- similarity: cosine of the two MiniLM embeddings;
- coverage: share of the claim's content terms the sentence holds (the sentence before
  counted at half weight);
- novelty: share of the sentence's content terms the claim lacks;
- polarity: the sentence and the claim differ in negation (one negates, the other not);
- one indicator per surface cue of agent.local.contradiction (negation scope, an
  alternative chosen instead, another number, a reversed comparison, a listed sibling in
  the same relation, an opposite);
- slot, slot_value: "same relation, different filler" (agent.local.contradiction.slot_filler):
  the sentence holds the words around one of the claim's terms but another content word
  between them ("... information in the middle of the context" against "... information
  at the beginning or end of the context"); slot_value when the replaced term is a name,
  acronym or number;
- chose_rejected: the claim says "A instead of B" and the sentence asserts B.

Then, as in SBERT's NLI head, the embedding block |u - v| and u * v (2 x 384) when the
fitted weights carry it (ENTAILMENT_EMBEDDING_DIMS); bench/calibrate_premise.py reports
held-out figures with and without it and keeps the better one.

Classes: NEUTRAL (on the same abstract, neither), SUPPORT, CONTRADICT.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from agent.local.contradiction import (
    alternatives,
    contradiction_cue,
    direction_clash,
    negated_stems,
    slot_filler,
)
from agent.local.text import NEGATIONS, STOPWORDS, content_terms, coverage, stem, term_set, words

CLASSES = ("NEUTRAL", "SUPPORT", "CONTRADICT")
CUES = ("negation", "alternative", "number", "order", "substitution", "entity", "antonym")
FEATURES = ("similarity", "coverage", "novelty", "polarity", *(f"cue_{c}" for c in CUES), "slot", "slot_value",
            "chose_rejected", "direction_clash")


def _negates(text: str) -> bool:
    return any(w in NEGATIONS or w.endswith("n't") for w in words(text))


def chose_rejected(claim: str, sentence: str) -> bool:
    """The claim sets B aside for A ("A instead of B") and the sentence asserts B, not A."""
    sent = term_set(sentence)
    negated = negated_stems(sentence)
    for chosen, rejected in alternatives(claim):
        # What was chosen is not all there ("trained with SGD" against "trained with Adagrad").
        if rejected and rejected <= sent and not (rejected & negated) and chosen - sent:
            return True
    return False


def pair_features(claim: str, sentence: str, similarity: float, *, context: str = "",
                  sibling_map: dict[str, set[str]] | None = None) -> np.ndarray:
    """The scalar features of one (claim, sentence) pair, in FEATURES order."""
    terms = content_terms(claim)
    sent_terms = set(content_terms(sentence))
    own = coverage(terms, sent_terms)
    cov = own + 0.5 * (coverage(terms, sent_terms | term_set(context)) - own) if context else own
    novelty = len(sent_terms - set(terms)) / len(sent_terms) if sent_terms else 0.0
    polarity = float(_negates(claim) != _negates(sentence))
    cue = contradiction_cue(claim, sentence, sibling_map=sibling_map, context=context)
    slot, slot_value = slot_filler(claim, sentence)
    return np.array([similarity, cov, novelty, polarity, *(float(cue == c) for c in CUES), slot, slot_value,
                     float(chose_rejected(claim, sentence)), float(direction_clash(claim, sentence))],
                    dtype=np.float64)


def embedding_block(claim_vec: np.ndarray, sentence_vecs: np.ndarray) -> np.ndarray:
    """|u - v| and u * v for each sentence row against the claim (SBERT's NLI features)."""
    u = np.asarray(claim_vec, dtype=np.float64)[None, :]
    v = np.asarray(sentence_vecs, dtype=np.float64)
    return np.hstack([np.abs(u - v), u * v])


def design(claim: str, claim_vec: np.ndarray, sentences: list[str], sentence_vecs: np.ndarray, *,
           contexts: list[str] | None = None, sibling_map: dict[str, set[str]] | None = None,
           embedding: bool = False) -> np.ndarray:
    """The feature matrix of the claim against each sentence (one row each)."""
    if not sentences:
        return np.zeros((0, len(FEATURES) + (2 * len(claim_vec) if embedding else 0)))
    sims = np.asarray(sentence_vecs, dtype=np.float64) @ np.asarray(claim_vec, dtype=np.float64)
    contexts = contexts or [""] * len(sentences)
    rows = np.vstack([pair_features(claim, s, float(sim), context=c, sibling_map=sibling_map)
                      for s, sim, c in zip(sentences, sims, contexts)])
    if embedding:
        rows = np.hstack([rows, embedding_block(claim_vec, sentence_vecs)])
    return rows


def probabilities(x: np.ndarray, weights: np.ndarray, bias: np.ndarray, *,
                  mean: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Class probabilities (rows of x, columns in CLASSES order) under the fitted softmax.
    The features are standardised with the calibration data's mean and scale first."""
    z = ((x - mean) / scale) @ weights.T + bias
    z -= z.max(axis=1, keepdims=True)
    p = np.exp(z)
    return p / p.sum(axis=1, keepdims=True)


@dataclass(frozen=True)
class Classifier:
    """A fitted softmax: weights (classes x features), bias, and the standardisation of the
    calibration data. Tuples, so AuditorParams stays comparable and hashable."""

    weights: tuple[tuple[float, ...], ...]
    bias: tuple[float, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    embedding: bool = False
    _arrays: tuple[np.ndarray, ...] = field(default=(), init=False, compare=False, repr=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_arrays", tuple(np.asarray(v, dtype=np.float64) for v in (
            self.weights, self.bias, self.mean, self.scale)))

    def predict(self, x: np.ndarray) -> np.ndarray:
        w, b, mean, scale = self._arrays
        return probabilities(x, w, b, mean=mean, scale=scale)

    def contradiction(self, claim: str, claim_vec: np.ndarray, sentences: list[str], sentence_vecs: np.ndarray,
                      *, contexts: list[str] | None = None,
                      sibling_map: dict[str, set[str]] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(P(CONTRADICT) of each sentence, its feature rows)."""
        x = design(claim, claim_vec, sentences, sentence_vecs, contexts=contexts, sibling_map=sibling_map,
                   embedding=self.embedding)
        if not len(x):
            return np.zeros(0), x
        return self.predict(x)[:, CLASSES.index("CONTRADICT")], x


MODEL_FILE = Path(__file__).with_name("premise_model.json")


@lru_cache(maxsize=1)
def default_classifier() -> Classifier:
    """The classifier bench/calibrate_premise.py --write fitted (agent/local/premise_model.json)."""
    data = json.loads(MODEL_FILE.read_text())
    return Classifier(weights=tuple(tuple(r) for r in data["weights"]), bias=tuple(data["bias"]),
                      mean=tuple(data["mean"]), scale=tuple(data["scale"]), embedding=bool(data["embedding"]))


def fired_cue(x_row: np.ndarray) -> str:
    """The surface cue a feature row records ("" when none)."""
    start = FEATURES.index(f"cue_{CUES[0]}")
    hits = [c for c, v in zip(CUES, x_row[start:start + len(CUES)]) if v > 0]
    return hits[0] if hits else ""


def fit_softmax(x: np.ndarray, y: np.ndarray, *, l2: float, classes: int = len(CLASSES),
                sample_weight: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Multinomial logistic regression (weights classes x features, bias per class) by
    L-BFGS on the weighted mean negative log likelihood + l2 / 2 * |W|^2 (bias not
    penalised). x should already be standardised."""
    from scipy.optimize import minimize

    n, d = x.shape
    sw = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    sw = sw / sw.sum()
    onehot = np.zeros((n, classes))
    onehot[np.arange(n), y] = 1.0

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        w = theta[: classes * d].reshape(classes, d)
        b = theta[classes * d:]
        z = x @ w.T + b
        z -= z.max(axis=1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        value = -float((sw[:, None] * onehot * logp).sum()) + 0.5 * l2 * float((w * w).sum())
        g = sw[:, None] * (np.exp(logp) - onehot)
        grad_w = g.T @ x + l2 * w
        return value, np.concatenate([grad_w.ravel(), g.sum(axis=0)])

    result = minimize(loss, np.zeros(classes * d + classes), jac=True, method="L-BFGS-B",
                      options={"maxiter": 500})
    theta = result.x
    return theta[: classes * d].reshape(classes, d), theta[classes * d:]


# Synthetic training pairs for the "swapped filler" kind of false premise, which SciFact's
# claims almost never show (bench/calibrate_premise.py --synthetic). FEVER-style mutation
# of plain corpus sentences: no benchmark question or paper is read.
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-\.]*[A-Za-z0-9%]|[A-Za-z0-9]")
_NOUN_ENDINGS = ("tion", "sion", "ment", "ness", "ity", "ance", "ence", "ism", "ogy", "ure", "ase", "cyte", "cytes",
                 "ists", "ers", "ors", "ies")
_CLAUSE_BREAK = re.compile(r"[,;]?\s+(?:and|but|whereas|while|which|that|because|although)\s+|[,;]\s+")
SYNTH_MIN_WORDS = 6  # a synthetic premise has at least this many words (a question's clause)


def filler_kind(token: str, position: int) -> str:
    """The type of a replaceable filler: "number", "name" (an acronym, identifier or
    capitalised word not starting the text), "noun" (a lower-case word with a noun ending),
    or "" (not replaced: function words, verbs, negations, years are kept)."""
    bare = token.rstrip("%")
    if bare.replace(".", "", 1).isdigit():
        return "" if len(bare) == 4 and bare.startswith(("19", "20")) else "number"
    low = token.lower()
    if low in STOPWORDS or low in NEGATIONS or not any(c.isalpha() for c in token):
        return ""
    if any(c.isdigit() for c in token) or any(c.isupper() for c in token[1:]) or (
            position > 0 and token[0].isupper() and len(token) > 2):
        return "name"
    if token.isalpha() and token.islower() and len(token) >= 5 and low.endswith(_NOUN_ENDINGS):
        return "noun"
    return ""


def fillers(text: str) -> list[tuple[int, int, str, str]]:
    """(start, end, token, kind) of each replaceable filler of the text."""
    out = []
    for i, m in enumerate(_TOKEN.finditer(text)):
        kind = filler_kind(m.group(), i)
        if kind:
            out.append((m.start(), m.end(), m.group(), kind))
    return out


def clause(sentence: str, rng: np.random.Generator) -> str:
    """A shorter statement the sentence entails: one of its clauses (at least
    SYNTH_MIN_WORDS words) or, when it has none, the sentence with one to three
    parenthetical or trailing words dropped; "" when it is too short for either."""
    text = re.sub(r"\s*\([^()]*\)", "", sentence).strip().rstrip(".")
    parts = [p.strip() for p in _CLAUSE_BREAK.split(text) if len(p.split()) >= SYNTH_MIN_WORDS]
    if len(parts) > 1 or (parts and parts[0] != text):
        return parts[int(rng.integers(len(parts)))]
    tokens = text.split()
    if len(tokens) < SYNTH_MIN_WORDS + 2:
        return ""
    cut = int(rng.integers(1, min(3, len(tokens) - SYNTH_MIN_WORDS) + 1))
    return " ".join(tokens[:-cut])


def mutate(text: str, pool: dict[str, list[str]], rng: np.random.Generator) -> str:
    """The text with one filler replaced by another of the same kind from the pool (a
    name for a name, a number for a number, a noun for a noun) that the text does not
    hold; "" when no filler of the text has a rival in the pool."""
    present = {stem(w) for w in words(text)}
    options = []
    for start, end, token, kind in fillers(text):
        rivals = sorted({r for r in pool.get(kind, []) if stem(r) not in present and r.lower() != token.lower()})
        if rivals:
            options.append((start, end, rivals))
    if not options:
        return ""
    start, end, rivals = options[int(rng.integers(len(options)))]
    return text[:start] + rivals[int(rng.integers(len(rivals)))] + text[end:]


@dataclass(frozen=True)
class SyntheticPair:
    premise: str
    evidence: str  # a sentence of the abstract (the premise is checked against it)
    label: str  # one of CLASSES
    doc: int  # the evidence's abstract
    index: int  # the evidence's position in it


def synthetic_pairs(abstracts: dict[int, list[str]], *, seed: int = 0, per_abstract: int = 2) -> list[SyntheticPair]:
    """Labelled (premise, evidence) pairs made from plain sentences, per_abstract of each kind
    from each abstract:

    - SUPPORT: a clause of a sentence (or the sentence shortened), against the sentence;
    - CONTRADICT: the same clause with one name, number or noun replaced by one of the same
      kind from another sentence of the same abstract (a rival of the same topic), against
      the original sentence: same relation, another filler;
    - NEUTRAL: the clause against the sentence of another abstract that shares the most
      content terms with it (same topic, not the same statement)."""
    rng = np.random.default_rng(seed)
    docs = sorted(abstracts)
    terms = {(d, i): set(content_terms(s)) for d in docs for i, s in enumerate(abstracts[d])}
    out: list[SyntheticPair] = []
    for d in docs:
        sents = abstracts[d]
        order = rng.permutation(len(sents))
        made = 0
        for i in order:
            if made >= per_abstract:
                break
            premise = clause(sents[i], rng)
            if not premise:
                continue
            pool: dict[str, list[str]] = {}
            for j, other in enumerate(sents):
                if j != i:
                    for _, _, token, kind in fillers(other):
                        pool.setdefault(kind, []).append(token)
            false = mutate(premise, pool, rng)
            if not false:
                continue
            own = set(content_terms(premise))
            others = [e for e in docs if e != d]
            sample = [others[k] for k in rng.choice(len(others), size=min(40, len(others)), replace=False)]
            best, best_overlap = None, 0
            for e in sample:
                for j in range(len(abstracts[e])):
                    overlap = len(own & terms[(e, j)])
                    if overlap > best_overlap:
                        best, best_overlap = (e, j), overlap
            if best is None:
                continue
            out += [SyntheticPair(premise, sents[i], "SUPPORT", d, int(i)),
                    SyntheticPair(false, sents[i], "CONTRADICT", d, int(i)),
                    SyntheticPair(premise, abstracts[best[0]][best[1]], "NEUTRAL", best[0], best[1])]
            made += 1
    return out
