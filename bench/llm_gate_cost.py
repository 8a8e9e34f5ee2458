"""What the answer gate of the LLM roles (RunConfig.answer_gate, agent.llm.drafts.local_refusal)
can cost and save, with no model: the local auditor's decision on the evidence an LLM run answers
from, question by question, on bench/refusals.py's sets.

    nice .venv/bin/python bench/llm_gate_cost.py --var var/bench-blind --split calibration \
        --sets in_domain,devbench,qasper --scope paper --why [--sentence-gate]

An LLM run's evidence is each sub-query's top k chunks (the LLM auditor reads no deeper pool:
agent.loop), and most runs answer on their first pass (about one call a question). So this runs
bench/refusals.py with `agentic_no_retry` and a local auditor that reads no pool: each outcome is
what the gate "verdict" decides for a one-pass LLM run of the question, and with --why the fact
labels and reason tell "needs" (it refuses only where no fact is supported or partial, or the
reason is "no retrieved passage mentions ..."). An answerable
question it refuses is the most the gate can cost there (the model may have refused it anyway);
an unanswerable or out-of-scope one it refuses is an answer the gate saves, when the model would
have answered. `--sentence-gate` also prints, before each question's line, how many of the
sentences the model is shown (agent.llm.candidates.candidate_sentences) the sentence-level gate
keeps (agent.llm.drafts.local_answer_quotes): 0 means the run refuses without this gate too.
Other arguments are bench/refusals.py's (its --config is set here).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parent.parent)]

import refusals  # noqa: E402


class _SentenceGateProbe:
    """The local auditor, reading no pool, that also reports the sentence-level gate."""

    reads_pool = False

    def __init__(self, inner) -> None:
        self.inner = inner

    @property
    def params(self):
        return self.inner.params

    @params.setter
    def params(self, value) -> None:
        self.inner.params = value

    def audit(self, question, plan, sources, *, can_retry):
        from agent.llm.candidates import candidate_sentences
        from agent.llm.drafts import local_answer_quotes
        from agent.verify import normalise

        needs = list(plan.facts) or [question]
        shown = candidate_sentences(question, needs, plan.premise, sources)
        kept = local_answer_quotes(question, needs, sources)
        print(f"  sentence gate keeps {sum(normalise(c.text) in kept for c in shown)} of {len(shown)} shown",
              flush=True)
        return self.inner.audit(question, plan, sources, can_retry=can_retry)


def main() -> None:
    from agent import configs
    from agent.local.auditor import LocalAuditor

    LocalAuditor.reads_pool = False
    if "--sentence-gate" in sys.argv:
        sys.argv.remove("--sentence-gate")
        build = configs.build_roles

        def probed(*args, **kwargs):
            roles = build(*args, **kwargs)
            roles.auditor = _SentenceGateProbe(roles.auditor)
            return roles

        configs.build_roles = probed
    sys.argv += ["--config", "agentic_no_retry"]
    refusals.main()


if __name__ == "__main__":
    main()
