"""`manage.py benchmark` says whether its figures come from the calibration split or not."""

from __future__ import annotations

import json

import pytest

from agent.benchmark import service as sb
from agent.local.calibration import devbench_splits
from agent.management.commands.benchmark import split_note

pytestmark = pytest.mark.django_db


def _question(qid: str, split: str) -> dict:
    return {"question_id": qid, "question": f"What does widget {qid} do?", "category": "answerable_single_hop",
            "answerable": True, "expected_behavior": "ANSWER", "split": split,
            "required_evidence_spans": [f"widget {qid} parses receipts"]}


def test_the_report_names_the_held_out_split_and_the_in_sample_one(collection, alice):
    questions = [_question("Q1", "calibration"), _question("Q2", "test"), _question("Q3", "test")]
    bset, _ = sb.benchmark_import(collection=collection, user=alice, name="split", text=json.dumps(questions))
    assert "held out from calibration" in split_note(bset, "test") and "calibration (1)" in split_note(bset, "test")
    assert "in-sample" in split_note(bset, "calibration")


def test_the_declared_devbench_split_calibrates_on_at_most_half():
    ids = [f"D{n:02}" for n in range(1, 50)]
    splits = devbench_splits(ids)
    assert sum(v == "calibration" for v in splits.values()) == len(ids) // 2
    # Deterministic: the same ids always give the same halves, in any order.
    assert devbench_splits(reversed(ids)) == splits
