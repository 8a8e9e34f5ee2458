"""Which candidate sentence answers a need: a small logistic model over features of the
(need, sentence) pair, shared by the local auditor and its calibration
(bench/calibrate_selection.py).

The features say whether the sentence *answers* the need, not only whether it is on topic:

- support: the auditor's blend of term coverage and cosine similarity (agent.local.scoring),
  with the sentence before counted at half weight;
- similarity: cosine of the two embeddings alone;
- idf_coverage: the need's content terms found in the sentence, each weighted by how rare it
  is among the candidates (terms every candidate shares tell none apart);
- idf_context: the same over the sentence and the one before it ("The default is MEAN."
  after "We try three pooling strategies");
- answer_fit: agent.local.answer_type.offers (a number next to the focus for "how many",
  a name for "which", a reason for "why", ...);
- focus: the need's focus noun ("how many *heads*") is in the sentence itself (1), only in
  the sentence before (0.5), or nowhere (0); 0.5 when the need has no focus;
- anchors: share of the need's names, acronyms and numbers that the sentence (with the one
  before and its document's title) mentions;
- chunk_rank: 1 / (1 + rank / 5) of the sentence's chunk among the retrieved ones;
- pooled: the chunk came from below a query's top k (RunConfig.sentence_pool, RunConfig.pool):
  its rank says less there, the sentence search found it for one sentence;
- fresh: the share of the sentence's content terms the need does not already hold (an
  answer adds a value, a name, a reason; a sentence that restates the question adds none);
- lead_in: the sentence announces or frames rather than states ("In this paper, we study
  ...", "The rest of the paper is organised as follows", "We now describe ...");
- length: words in the sentence / 40, capped at 1.5 (a fragment holds little, a run-on many
  things);
- fit_context: answer_fit x idf_context (the asked kind of answer where the need's rare terms
  are, in the sentence or the one before: an answer, not a number elsewhere in the paper).

Every pair gets all of them (agent.local.sufficiency reads some); a feature the model does
not use has weight 0. Which ones it uses was chosen by leave-one-question-out top-1 on the
calibration halves (bench/calibrate_selection.py).

The weights are fields of agent.local.auditor.AuditorParams, fitted on the calibration
halves of devbench, the QASPER-style and the in-domain questions (their verbatim evidence
spans label the sentences that answer); nothing here is a tuned constant.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from agent.local.answer_type import Need
from agent.local.text import anchor_coverage, content_terms, coverage, words

FEATURES = ("support", "similarity", "idf_coverage", "idf_context", "answer_fit", "focus", "anchors",
            "chunk_rank", "pooled", "fresh", "lead_in", "length", "fit_context")

# A sentence that frames the paper or the next part of it instead of stating a finding.
_LEAD_IN = re.compile(
    r"^(?:in|throughout) (?:this|the present|our) (?:paper|work|section|survey|study|article|chapter)\b|"
    r"^(?:here|below|next|now),? we\b|^we (?:first|now|next|then|further) (?:describe|present|introduce|discuss|"
    r"review|outline|explain|detail|turn)|^(?:the )?(?:rest|remainder) of (?:this|the) (?:paper|section)|"
    r"\bas follows\b|\b(?:this|the following|next) (?:section|subsection|chapter) (?:describes|presents|"
    r"introduces|discusses|details)", re.IGNORECASE)


@dataclass(frozen=True)
class Pair:
    """What the auditor knows of one (need, candidate sentence) pair."""

    support: float
    similarity: float
    sentence_terms: set[str]
    context_terms: set[str]  # the sentence before and the document title
    fit: float
    source_rank: int
    quote: str = ""
    pooled: bool = False


def lead_in(sentence: str) -> bool:
    """Whether the sentence frames the paper or its next part ("In this paper, we ...",
    "... is organised as follows.") rather than stating something."""
    return bool(_LEAD_IN.search(sentence.strip()))


def features(need: Need, terms: list[str], anchors: list[str], idf: dict[str, float], pair: Pair,
             names: Sequence[str] = FEATURES) -> np.ndarray:
    """The pair's features `names` (of FEATURES, all of them by default), in that order."""
    weights = {t: idf.get(t, 0.0) for t in terms}
    total = sum(weights.values())
    with_context = pair.sentence_terms | pair.context_terms
    idf_cov = sum(w for t, w in weights.items() if t in pair.sentence_terms) / total if total else 0.0
    idf_ctx = sum(w for t, w in weights.items() if t in with_context) / total if total else 0.0
    if not need.focus:
        focus = 0.5
    elif set(need.focus) & pair.sentence_terms:
        focus = 1.0
    elif set(need.focus) & pair.context_terms:
        focus = 0.5
    else:
        focus = 0.0
    anchor = anchor_coverage(anchors, with_context) if anchors else coverage(terms, with_context)
    own = set(content_terms(pair.quote)) if pair.quote else set()
    asked = set(terms)
    values = {
        "support": pair.support, "similarity": pair.similarity, "idf_coverage": idf_cov, "idf_context": idf_ctx,
        "answer_fit": pair.fit, "focus": focus, "anchors": anchor, "chunk_rank": 1.0 / (1.0 + pair.source_rank / 5),
        "pooled": float(pair.pooled),
        "fresh": len(own - asked) / len(own) if own else 0.0,
        "lead_in": float(lead_in(pair.quote)),
        "length": min(len(words(pair.quote)) / 40, 1.5),
        "fit_context": pair.fit * idf_ctx,
    }
    return np.array([values[n] for n in names], dtype=np.float64)


def candidate_idf(term_sets: list[set[str]]) -> dict[str, float]:
    """Inverse document frequency of each term over the candidate sentences."""
    df: dict[str, int] = {}
    for terms in term_sets:
        for t in terms:
            df[t] = df.get(t, 0) + 1
    n = len(term_sets)
    return {t: math.log(1 + n / (1 + k)) for t, k in df.items()}


def probability(x: np.ndarray, weights: tuple[float, ...], bias: float) -> float:
    """P(the sentence answers the need) under the fitted logistic model."""
    z = float(np.dot(x, np.asarray(weights, dtype=np.float64))) + bias
    return 1.0 / (1.0 + math.exp(-max(min(z, 30.0), -30.0)))


def fit_listwise(x: np.ndarray, y: np.ndarray, groups: np.ndarray, *, l2: float = 1.0,
                 iterations: int = 300, rate: float = 0.5) -> np.ndarray:
    """Weights of a conditional logit: within each group (the candidates of one fact) the
    softmax of x @ w puts its mass on the positive candidates. This fits the *choice* among
    a fact's candidates, which a pointwise model confuses with how easy each fact is.
    Groups without a positive are left out. Gradient descent on the mean negative log
    likelihood + l2 / 2 * |w|^2, every group at once (rows sorted by group, per-group sums
    by np.add.reduceat), so leave-one-question-out over a hundred facts stays fast."""
    w = np.zeros(x.shape[1])
    keep = np.isin(groups, [g for g in np.unique(groups) if y[groups == g].any()])
    if not keep.any():
        return w
    order = np.flatnonzero(keep)[np.argsort(groups[keep], kind="stable")]
    xs, pos, g = x[order], (y[order] > 0).astype(np.float64), groups[order]
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    member = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(g)]))
    q = pos / np.add.reduceat(pos, starts)[member]  # the target: the positives share the mass
    for _ in range(iterations):
        z = xs @ w
        e = np.exp(z - np.maximum.reduceat(z, starts)[member])
        p = e / np.add.reduceat(e, starts)[member]
        w -= rate * (l2 * w + xs.T @ (p - q) / len(starts))
    return w


def fit_logistic(x: np.ndarray, y: np.ndarray, *, l2: float = 1.0, iterations: int = 50,
                 sample_weight: np.ndarray | None = None) -> tuple[tuple[float, ...], float]:
    """L2-regularised logistic regression by Newton's method (the bias is not penalised)."""
    n, d = x.shape
    xb = np.hstack([x, np.ones((n, 1))])
    sw = np.ones(n) if sample_weight is None else sample_weight
    w = np.zeros(d + 1)
    penalty = np.full(d + 1, l2)
    penalty[-1] = 0.0
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-np.clip(xb @ w, -30, 30)))
        grad = xb.T @ (sw * (p - y)) + penalty * w
        hess = (xb * (sw * p * (1 - p))[:, None]).T @ xb + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return tuple(round(float(v), 4) for v in w[:-1]), round(float(w[-1]), 4)
