"""Whether an answer sentence's evidence is about what the question asks (agent.verify).

A sentence can be supported by its quotes and still answer another question about the same
paper (issue 13: a 0.5B model kept a PARTIAL answer whose sentence, faithful to its quote,
was about another part of the paper). Support says the quotes state the sentence; relevance
says the quotes speak to the question:

relevance = the best cosine similarity of the question's embedding with one of the sentence's
            quotes (the local sentence embedder, as the support score uses).

The quotes, not the sentence, are scored: a model's sentence can borrow the question's words
("The Lumen index build time depends on ...") while its evidence is about something else, and
a sentence that passed the support check says what its quotes say.

RELEVANCE_MIN is fitted by `bench/calibrate_verifier.py --relevance` on the devbench
calibration half only: the highest threshold that drops at most MAX_FALSE_DROP of its correct
pairs (the sentences of each question's reference answer with its gold quotes, and each gold
sentence copied). The feature was chosen there too, against the term-coverage blend of the
support score and a logistic fit of both: at the same false-drop budget it dropped the most
off-topic pairs (the same pairs asked with another question about the same paper).
docs/benchmarks.md ("Verifier: relevance to the question") reports the held-out half.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent.verify.supported import EmbedFn, default_embed

# bench/calibrate_verifier.py --relevance, devbench calibration half (docs/benchmarks.md).
RELEVANCE_MIN = 0.20
MAX_FALSE_DROP = 0.05


def relevance(question: str, quotes: Sequence[str], *, embed: EmbedFn | None = None) -> float:
    """The best cosine similarity of the question with one of the quotes (module doc)."""
    if not quotes:
        return 0.0
    vecs = (embed or default_embed())([question, *quotes])
    return max(float(vecs[0] @ v) for v in vecs[1:])
