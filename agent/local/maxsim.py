"""Token-level late interaction between a need and a candidate sentence (ColBERT's MaxSim,
untrained): every content word piece of the need looks for its closest word piece of the
sentence, and the score is the mean of those best cosines, each piece weighted by how rare
its word is among the candidates.

The states are all-MiniLM's last hidden state before pooling (knowledge.embeddings.
LocalEmbedder.token_states), the same model whose pooled vectors give `similarity`. Where
the pooled vector blurs a sentence into its topic, the word pieces keep "dropout" close to
"regularisation" and "heads" close to "attention layers" one by one.
"""

from __future__ import annotations

import numpy as np

from agent.local.text import NEGATIONS, STOPWORDS, stem


def content_piece(word: str) -> bool:
    """Whether a word piece's word carries content: not punctuation, not a stopword."""
    return any(c.isalnum() for c in word) and word not in STOPWORDS and word not in NEGATIONS and (
        len(word) > 1 or word.isdigit())


def need_weights(words: tuple[str, ...], idf: dict[str, float] | None, unseen: float) -> np.ndarray:
    """Per word piece of the need: 0 for a stopword or punctuation, else its word's IDF among
    the candidates (`idf`, agent.local.selection.candidate_idf: keys are stems; `unseen` for a
    word no candidate holds), or 1 without `idf`."""
    out = np.zeros(len(words))
    for i, w in enumerate(words):
        if content_piece(w):
            out[i] = 1.0 if idf is None else idf.get(stem(w), unseen)
    return out


def maxsim(need: np.ndarray, weights: np.ndarray, sentence: np.ndarray) -> float:
    """The weighted mean over the need's pieces (rows of `need`, weights `weights`) of the
    best cosine with any piece of `sentence` (rows L2-normalised); 0 when either is empty."""
    total = float(weights.sum())
    if not total or not len(sentence):
        return 0.0
    best = (need @ sentence.T).max(axis=1)
    return float(best @ weights) / total
