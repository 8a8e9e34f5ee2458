"""Where the LLM roles save calls (agent.llm.roles): each rule replaces a model call by the local
roles' work when that work is as good, so a small CPU model answers in about one call.

- planning: the rule planner's plan is used when it is simple or already decomposed into two or
  more distinct needs that stand on their own (`local_plan_suffices`); the model plans only what
  the rules could not split (e.g. "compare X of A with those of B");
- needs the model left empty: a small model often writes its answer sentences, citing sentence
  numbers, and leaves the per-need lists empty. The audit then found "nothing" and the loop
  retried (3 audit calls and 2 reformulations for a question the first call answered). The
  answer's citations are credited to the need each answer sentence speaks to
  (`needs_from_answer`); the verifier still checks every sentence;
- retries: after a pass where the model found no need stated, another audit call is spent only
  if the new retrieval brought a sentence the local scorer rates above every sentence the model
  already rejected (`RejectedMemory`): shown the same or weaker evidence, it would answer the same;
- reformulation: the audit's missing needs, or the rule reformulator's keyword queries, never a
  model call (agent.llm.roles.LLMReformulator).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from typing import Any

from agent.llm.candidates import Candidate
from agent.llm.wire import ClaimOut
from agent.types import Complexity, Plan

_POINTS_BACK = re.compile(r"(?:those|these|that|this|it|its|they|them|their|the same|the latter|the former)\b")


def local_plan_suffices(plan: Plan) -> bool:
    """The rule planner's plan is good enough: a simple question with one query, or a question
    it split into two or more distinct needs."""
    if plan.complexity == Complexity.SIMPLE and len(plan.sub_queries) == 1:
        return True
    distinct = {" ".join(f.lower().split()).rstrip("?.: ") for f in plan.facts}
    # A part that points back ("those of the big model", "it") does not stand on its own.
    standalone = not any(_POINTS_BACK.match(f) for f in distinct)
    return len(distinct) >= 2 and standalone


def needs_from_answer(needs: Sequence[str], claims: Sequence[ClaimOut], valid: set[int]) -> dict[int, list[int]]:
    """need number (1-based) -> the sentence numbers the answer sentences that speak to it cite.

    One need takes every citation; with several, each answer sentence goes to the need whose
    key terms it covers best (none if it shares no key term with any need)."""
    from agent.local.text import content_terms, coverage, term_set

    out: dict[int, list[int]] = {}
    for claim in claims:
        numbers = [n for n in claim.sentences if n in valid]
        if not numbers:
            continue
        if len(needs) == 1:
            best = 1
        else:
            words = term_set(claim.text)
            scores = [coverage(content_terms(need), words) for need in needs]
            if max(scores) <= 0:
                continue
            best = scores.index(max(scores)) + 1
        out.setdefault(best, []).extend(numbers)
    return out


class RejectedMemory:
    """The sentences the model was shown, in a pass where it found no need stated, per run.

    Keyed by the question and held with the run's plan object (the loop passes the same plan to
    every pass of a run), so a new run of the same question always asks the model.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._shown: dict[str, tuple[Any, dict[str, float]]] = {}

    def remember(self, question: str, plan: Plan, candidates: Sequence[Candidate]) -> None:
        with self._lock:
            if len(self._shown) > 256:
                self._shown.clear()
            self._shown[question] = (plan, {c.text: c.score for c in candidates})

    def forget(self, question: str) -> None:
        with self._lock:
            self._shown.pop(question, None)

    def nothing_better(self, question: str, plan: Plan, candidates: Sequence[Candidate]) -> bool:
        """The model already rejected sentences at least as good as any new one here."""
        with self._lock:
            entry = self._shown.get(question)
        if entry is None or entry[0] is not plan:
            return False
        rejected = entry[1]
        if not rejected:
            return not candidates
        bar = max(rejected.values())
        return not any(c.score > bar for c in candidates if c.text not in rejected)
