"""Replay the premise gate and the verifier's form rules on a stored LLM benchmark run (no model).

    PYTHONPATH=. PORTAL_DEBUG=1 .venv/bin/python bench/replay_llm_checks.py DB LABEL

DB: a copy of a run's SQLite database (opened read-only); LABEL: the BenchmarkRun label. For each
FALSE_PREMISE run: whether agent.llm.premise would keep the model's verdict on its audit's
premise and quote; for each asserting draft (the generate step): which sentences
agent.verify.form removes, and why. An approximation of a re-run: the quotes of the draft
sentences are not passed (the script rule then allows only the question's scripts and Latin),
and the support rules are not re-applied.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("db")
    ap.add_argument("label")
    args = ap.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
    import django

    django.setup()
    from agent.llm.premise import premise_disagreement
    from agent.verify.form import form_check

    db = sqlite3.connect(f"file:{args.db}?mode=ro", uri=True)
    ids = [r[0] for r in db.execute("select id from agent_benchmarkrun where label=?", (args.label,))]
    marks = ",".join("?" * len(ids))
    fp_before = fp_kept = said = kept = 0
    for rid, question, outcome in db.execute(
            f"select id, question, outcome from agent_run where benchmark_run_id in ({marks})", ids):
        steps = {k: json.loads(o) for k, o in
                 db.execute("select kind, output from agent_runstep where run_id=? order by id", (rid,))}
        premise = (steps.get("audit") or {}).get("premise") or {}
        if outcome == "FALSE_PREMISE":
            fp_before += 1
            how = premise_disagreement(premise.get("premise", ""), premise.get("quote", ""))
            fp_kept += bool(how)
            print(f"run {rid} FALSE_PREMISE {'kept (' + how + ')' if how else 'set aside'}: "
                  f"{premise.get('quote', '')[:70]}")
        if outcome in ("REFUSAL", "CLARIFY"):
            continue
        earlier: list[str] = []
        for s in (steps.get("generate") or {}).get("sentences", []):
            said += 1
            text, why, notes = form_check(s.get("text", ""), question=question, quotes=[], earlier=earlier)
            for note in notes:
                print(f"run {rid} {note}")
            if why:
                print(f"run {rid} removed ({why}): {s.get('text', '')[:70]}")
            else:
                kept += 1
                earlier.append(text)
    print(f"FALSE_PREMISE verdicts kept {fp_kept} of {fp_before}; answer sentences kept {kept} of {said}")


if __name__ == "__main__":
    main()
