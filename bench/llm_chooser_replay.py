"""Chooser mode (docs/llm.md "Chooser mode") over devbench questions with a fake model on
127.0.0.1 (tests/fake_openai.py) instead of a real one: no model server, about 1 s a question.

    .venv/bin/python bench/llm_chooser_replay.py --var var/bench-blind --collection blind \\
        --split calibration --limit 20 --choose gold|first|replay:LOG [--params '{"fill_local": true}'] [--show]

`--choose`: what the fake model replies. `first`, always [1] (the local best); `gold`, the shown
sentences that hold one of the question's gold evidence spans (bench/calibrate_selection.holds_span):
the ceiling of a model that chooses perfectly among what it is shown; `replay:LOG`, the choices a
real model made in a `bench/llm_devbench.py --answer-by chooser` run, read from its printed output
(the audit notes "the model chose sentences 2, 1 of the 8 shown"), so other ChooserParams
(`--params`, JSON) can be compared on the same choices. The shown candidates depend on the local
ranking and `shown` only, so a replay is exact when `shown` is the run's.

Prints per question: the expected behaviour, the outcome, calls, estimated prompt tokens (4
characters a token, the fake server's count), how many sentences were shown, which of them hold a
gold span, the replayed choice, and whether the answer holds a gold span; with `--show`, the answer.
Uses bench/devbench.py's database and index (`--var`, `--collection`), ingesting nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def replayed_choices(log: Path) -> dict[str, list[int]]:
    """Question id -> the numbers the model chose, from an llm_devbench chooser run's output."""
    out: dict[str, list[int]] = {}
    qid = None
    for line in log.read_text(errors="replace").splitlines():
        head = re.match(r"### (\w+) ", line)
        if head:
            qid = head.group(1)
        chose = re.search(r"the model chose sentences? ([\d, ]+) of the", line)
        if qid and chose:
            out[qid] = [int(x) for x in chose.group(1).split(",")]
        elif qid and "the model chose none" in line:
            out[qid] = []
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--var", default=str(ROOT / "var" / "bench-blind"))
    parser.add_argument("--collection", default="blind")
    parser.add_argument("--split", default="calibration")
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--choose", default="first")
    parser.add_argument("--params", default="{}")
    parser.add_argument("--show", action="store_true")
    args = parser.parse_args()

    from tests.fake_openai import FakeOpenAI, Reply, numbered_sentences

    with FakeOpenAI() as fake:
        os.environ.update({
            "PORTAL_VAR_DIR": args.var, "PORTAL_DEBUG": "1", "PORTAL_LLM_BACKEND": "openai",
            "PORTAL_OPENAI_BASE_URL": fake.base_url, "PORTAL_OPENAI_API_KEY": "fake", "PORTAL_LLM_MODEL": "fake",
            "PORTAL_LLM_ANSWER_BY": "chooser", "PORTAL_LLM_STREAM": "0", "DJANGO_SETTINGS_MODULE": "portal.settings",
        })
        os.environ.pop("PORTAL_DATABASE_URL", None)
        import django

        django.setup()
        from dataclasses import replace

        from _devbench_common import load_questions, with_splits
        from calibrate_selection import holds_span
        from django.contrib.auth import get_user_model

        from agent import services
        from agent.llm import chooser
        from knowledge.models import Collection

        chooser.DEFAULT_PARAMS = replace(chooser.DEFAULT_PARAMS, **json.loads(args.params))
        collection = Collection.objects.get(slug=args.collection)
        ready = {Path(n).stem for n in collection.documents.filter(status="ready").values_list("original_name", flat=True)}
        questions = [q for q in with_splits(load_questions())
                     if q["split"] == args.split and set(q.get("expected_doc_ids") or []) <= ready][: args.limit]
        user = get_user_model().objects.get(username="bench")
        replay = replayed_choices(Path(args.choose.split(":", 1)[1])) if args.choose.startswith("replay:") else {}
        seen: dict[str, object] = {}

        def reply(body: dict) -> Reply:
            text = "\n".join(str(m.get("content", "")) for m in body["messages"])
            shown = numbered_sentences(text)
            spans = seen["question"]["required_evidence_spans"] or []  # type: ignore[index]
            seen.update(chars=len(text), shown=len(shown), gold=[n for n, t in shown.items() if holds_span(t, spans)])
            if args.choose == "gold":
                return Reply(content={"sentences": seen["gold"][:3]})  # type: ignore[index]
            if replay:
                return Reply(content={"sentences": replay.get(seen["question"]["question_id"], [1])})  # type: ignore[index]
            return Reply(content={"sentences": [1]})

        fake.responder = reply
        chars, holding = [], 0
        print(f"chooser {chooser.DEFAULT_PARAMS}, choose {args.choose}")
        for q in questions:
            seen.clear()
            seen["question"] = {**q, "required_evidence_spans": q.get("required_evidence_spans") or []}
            run = services.run_create(collection=collection, user=user, question=q["question"], config_name="agentic",
                                      enqueue=False)
            run = services.run_execute(run_id=run.pk)
            quotes = [c.quote for c in run.citations.filter(verified=True)]
            held = run.outcome in ("ANSWER", "PARTIAL") and any(
                holds_span(t, seen["question"]["required_evidence_spans"]) for t in quotes)  # type: ignore[index]
            holding += held
            if "chars" in seen:
                chars.append(seen["chars"])
            print(f"{q['question_id']} {q['expected_behavior']} -> {run.outcome}; calls {run.llm_calls}, "
                  f"~{run.prompt_tokens} prompt tokens, shown {seen.get('shown', 0)}, gold at {seen.get('gold', '-')}, "
                  f"replayed {replay.get(q['question_id'], '-')}{', answer holds gold' if held else ''}")
            if args.show:
                print(f"  A: {run.answer}")
        print(f"\n{holding} of {len(questions)} answers hold a gold span; prompt characters median "
              f"{statistics.median(chars) if chars else 0:.0f}, max {max(chars, default=0)}")


if __name__ == "__main__":
    main()
