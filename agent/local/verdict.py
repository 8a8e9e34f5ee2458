"""The local auditor's verdict (agent.local.auditor), taken need by need from each fact's
label and the premise check: all answered is SUFFICIENT, some is PARTIALLY_SUFFICIENT naming
the others as asked, none a refusal; a contradicted premise is FALSE_PREMISE.
"""

from __future__ import annotations

from agent.types import Conflict, FactAudit, PremiseCheck, SupportLabel, Verdict


def verdict_for(audits: list[FactAudit], premise: PremiseCheck, conflicts: list[Conflict],
             can_retry: bool, *, premise_waived: bool = False) -> tuple[Verdict, str]:
    """The verdict from each need's own label: every need answered (and the premise
    confirmed) is SUFFICIENT; some answered is PARTIALLY_SUFFICIENT naming the others;
    none is a refusal. While a retry is left, anything missing asks for one first."""
    if premise.contradicted:
        return Verdict.FALSE_PREMISE, premise.reason
    if premise.unknown and not can_retry:
        # The question is about a version of something no passage mentions ("Llama 3.1" in a
        # collection about Llama 2): whatever else matches speaks of something else.
        return Verdict.INSUFFICIENT_REFUSE, f"no retrieved passage mentions {', '.join(premise.unknown)}"
    usable = (SupportLabel.SUPPORTED, SupportLabel.PARTIAL)
    supported = sum(a.label == SupportLabel.SUPPORTED for a in audits)
    answered = [a for a in audits if a.label in usable]
    unanswered = [a.fact for a in audits if a.label not in usable]
    premise_ok = not premise.premise or premise.confirmed
    if audits and supported == len(audits) and premise_ok:
        return Verdict.SUFFICIENT, "every needed fact has a supporting sentence"
    if conflicts and not can_retry:
        return Verdict.PARTIALLY_SUFFICIENT, "the retrieved passages contradict each other"
    if can_retry:
        return Verdict.INSUFFICIENT_RETRY, "some needed facts (or the premise) have no supporting sentence yet"
    if answered and premise_ok:
        reason = f"{len(answered)} of {len(audits)} needed facts are supported"
        if unanswered:
            reason += "; no sentence answers: " + "; ".join(unanswered)
        return Verdict.PARTIALLY_SUFFICIENT, reason
    if len(audits) == 1 and not premise_ok and not premise_waived:
        # A one-need question asks about what it presupposes ("Who won the 2021 Cup?"): with
        # the presupposition unconfirmed, any answer would assume it, unless the need itself
        # is very likely answered (AuditorParams.premise_unconfirmed_min).
        return (Verdict.INSUFFICIENT_REFUSE,
                f"the question's premise could not be confirmed by any retrieved sentence: {premise.premise}")
    if answered:
        return (Verdict.PARTIALLY_SUFFICIENT,
                f"the premise could not be confirmed by any retrieved sentence: {premise.premise}")
    if not premise_ok:
        return (Verdict.INSUFFICIENT_REFUSE,
                f"no retrieved passage supports the question, nor its premise that {premise.premise}")
    return Verdict.INSUFFICIENT_REFUSE, "no retrieved passage supports the facts the question needs"
