"""Whether a model's premise verdict stands (agent.llm.roles).

A small model says "contradicted" for sentences that merely speak of the premise's subject, or
even agree with it (issue #13: 9 of 20 held-out questions ended FALSE_PREMISE, 2 were false
premises). The verdict is a claim like any other, so it is checked by the same gate the local
auditor (agent.local.auditor) uses for its own premise check: the cited sentence must be about
the premise (support score >= AuditorParams.premise_contradict_min) and disagree with it, by a
surface cue (agent.local.contradiction) or the fitted classifier's P(CONTRADICT) >=
AuditorParams.premise_false_min (agent.local.entailment). An empty premise is never corrected.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def premise_disagreement(premise: str, sentence: str, *, context: Sequence[str] = (), embed: Any = None,
                         params: Any = None) -> str:
    """How `sentence` disagrees with `premise` ("" when it does not, by the local checks).

    `context`: the other sentences shown with it (they give the siblings a substitution cue
    needs, as in the local auditor)."""
    if not premise.strip() or not sentence.strip():
        return ""
    from agent.local.auditor import AuditorParams
    from agent.local.contradiction import siblings
    from agent.local.embed import get_embed
    from agent.local.entailment import fired_cue
    from agent.local.scoring import score_sentences

    p = params or AuditorParams()
    vecs = get_embed(embed)([premise, sentence])
    relevance = score_sentences(premise, vecs[0], [sentence], vecs[1:2], w_coverage=p.w_coverage)[0].support
    if relevance < p.premise_contradict_min:
        return ""
    sibling_map = siblings([sentence, *context])
    probs, rows = p.premise_model.contradiction(premise, vecs[0], [sentence], vecs[1:2], sibling_map=sibling_map)
    cue = fired_cue(rows[0])
    if cue:
        return cue
    if probs[0] >= p.premise_false_min:
        return f"classifier, P={probs[0]:.2f}"
    return ""
