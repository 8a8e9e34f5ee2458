"""What the asker tells about themselves, and a clause that states before the clause that asks,
are context for the question, not needs of their own (agent.local.planner._needs,
_about_asker)."""

from __future__ import annotations

from agent.local.planner import RulePlanner


def test_a_sentence_about_the_asker_is_neither_a_need_nor_a_premise():
    plan = RulePlanner().plan("I rebuilt the Osprey index on my laptop and the recall dropped. "
                              "Why does Osprey shard receipts by vendor name?")
    assert plan.facts == ["Why does Osprey shard receipts by vendor name?"]
    assert not any("laptop" in p or "rebuilt" in p for p in plan.premises)
    assert not any("laptop" in s for s in plan.sub_queries)


def test_a_stated_clause_before_the_asking_clause_is_context_not_a_need():
    plan = RulePlanner().plan("The Quill tokenizer report noticed the same drift; "
                              "what cause did it give for the drift on rare digits?")
    assert len(plan.facts) == 1
    assert not any(f.startswith("The Quill tokenizer report noticed") for f in plan.facts)
    assert "rare digits" in plan.facts[0]


def test_a_statement_of_its_own_is_still_asked_and_still_a_premise():
    # A claim about a paper, in a sentence of its own, stays a yes/no need and the premise.
    plan = RulePlanner().plan("Osprey indexes receipts by vendor name. How many vendors does its index hold?")
    assert plan.facts[0] == "Is it true that Osprey indexes receipts by vendor name?"
    assert plan.premise == "Osprey indexes receipts by vendor name"


def test_asking_clauses_after_a_lead_in_stay_needs():
    facts = RulePlanner().plan("In the Quill tokenizer, how many merges are learned, and how are rare "
                               "digits handled?").facts
    assert len(facts) == 2
