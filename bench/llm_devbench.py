"""Devbench questions answered by the embedded model, through `manage.py benchmark`.

    .venv/bin/python bench/llm_devbench.py --model qwen2.5-coder-0.5b-instruct-q4_k_m \\
        --configs agentic,hybrid --limit 6 [--var var/bench-llm] [--collection llm-latency] \\
        [--answer-by model|writer|local]

It reuses a database where papers are already ingested (bench/llm_latency.py leaves 7
devbench papers in var/bench-llm, collection `llm-latency`), takes the held-out ("test")
questions whose expected papers are all there (out-of-scope questions need none), at most
`--limit`, imports them as a benchmark set, starts llama-server with the model on a free
port (log in $PORTAL_LLM_CACHE/devbench-<model>.log), and runs
`manage.py benchmark --in-process` with PORTAL_LLM_BACKEND=embedded: ordinary Runs answered
by agent.tasks.answer_run, as the answer worker does. It prints, per run, the question, the
expected behaviour, the outcome, the answer (to grade by reading against the gold answer),
calls, tokens and latency, then per configuration: runs FAILED, mean calls, mean prompt and
completion tokens, p50 latency; and the server's prefill and generation speeds from its log.

`--answer-by` (PORTAL_LLM_ANSWER_BY, docs/llm.md "Writer mode", "Chooser mode"): `model` (default), the
LLM roles; `writer`, the local roles choose the evidence and the model words ANSWER/PARTIAL answers;
`chooser`, the model only says which of the local ranking's best sentences answer (`--chooser-shown`,
`--chooser-none-below` set agent.llm.chooser.ChooserParams for the run; the audit step's note with the
model's choice is printed per run); `local`,
the local backend with no model server, for the same questions in the same report. The generator's
notes (a model sentence replaced by the sentence it cites, one citing nothing) are printed per run and
counted per configuration.
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._devbench_common import benchmark_set, load_questions, with_splits  # noqa: E402

_SPEED = re.compile(r"(prompt eval|\beval) time =\s*([\d.]+) ms /\s*(\d+) tokens")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _speeds(log: Path) -> tuple[float, float, int]:
    """Prefill and generation tokens/s over every request in the server's log, and the count."""
    sums = {"prompt eval": [0.0, 0], "eval": [0.0, 0]}
    requests = 0
    for kind, ms, tokens in _SPEED.findall(log.read_text(errors="replace")):
        kind = "prompt eval" if kind.startswith("prompt") else "eval"
        sums[kind][0] += float(ms)
        sums[kind][1] += int(tokens)
        requests += kind == "eval"

    def rate(kind: str) -> float:
        ms, tokens = sums[kind]
        return tokens / (ms / 1000) if ms else 0.0

    return rate("prompt eval"), rate("eval"), requests


# How agent.types.replaced_note starts: a model sentence replaced by the sentence it cites.
REPLACED = "replaced by the sentence it cites: "


def _notes(run: object) -> list[str]:
    """The generator's notes of a run (what it changed before verification)."""
    step = run.steps.filter(kind="generate").last()  # type: ignore[attr-defined]
    return list(step.output.get("notes", [])) if step is not None else []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True)
    parser.add_argument("--configs", default="agentic,hybrid")
    parser.add_argument("--limit", type=int, default=6)
    parser.add_argument("--split", default="test")
    parser.add_argument("--var", default=str(ROOT / "var" / "bench-llm"))
    parser.add_argument("--collection", default="llm-latency")
    parser.add_argument("--answer-by", choices=("model", "writer", "chooser", "local"), default="model")
    parser.add_argument("--chooser-shown", type=int, default=0,
                        help="chooser mode: how many candidates the model is shown (default: ChooserParams.shown)")
    parser.add_argument("--chooser-none-below", type=float, default=None,
                        help="chooser mode: ChooserParams.none_below (default: the shipped value)")
    args = parser.parse_args()
    local = args.answer_by == "local"

    port = _free_port()
    os.environ.update({
        "PORTAL_VAR_DIR": args.var, "PORTAL_DEBUG": "1", "PORTAL_LLM_BACKEND": "local" if local else "embedded",
        "PORTAL_LLM_EMBEDDED_MODEL": args.model, "PORTAL_LLM_PORT": str(port),
        "PORTAL_LLM_ANSWER_BY": "model" if local else args.answer_by,
        "DJANGO_SETTINGS_MODULE": "portal.settings",
    })
    os.environ.pop("PORTAL_DATABASE_URL", None)
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from agent.embedded import build, catalog, server
    from agent.models import Run
    from knowledge.models import Collection

    call_command("migrate", verbosity=0)
    if args.answer_by == "chooser":
        from dataclasses import replace

        from agent.llm import chooser

        chooser.DEFAULT_PARAMS = replace(chooser.DEFAULT_PARAMS, **{k: v for k, v in (
            ("shown", args.chooser_shown or None), ("none_below", args.chooser_none_below)) if v is not None})
        print(f"chooser: {chooser.DEFAULT_PARAMS}", file=sys.stderr)
    collection = Collection.objects.get(slug=args.collection)
    ready = {Path(n).stem for n in collection.documents.filter(status="ready").values_list("original_name", flat=True)}
    questions = [q for q in with_splits(load_questions())
                 if q["split"] == args.split and set(q.get("expected_doc_ids") or []) <= ready][: args.limit]
    user = get_user_model().objects.get(username="bench")
    bset = benchmark_set(collection, user, questions, name=f"llm-{args.split}-{len(questions)}-{len(ready)}p")

    cache = settings.LLM_CACHE
    # `local` needs no model (none may be installed yet).
    key = "local" if local else catalog.resolve(args.model, cache).key
    log = cache / f"devbench-{key}.log"
    load = os.getloadavg()
    proc = None
    if not local:
        model = catalog.resolve(args.model, cache)
        spec = server.ServerSpec(binary=build.server_binary(cache), model_path=catalog.model_path(model, cache),
                                 alias=model.key, port=port)
        log.write_text("")
        proc = server.start(spec, log=log)
    # A slug: benchmark_start slugifies the label it is given, and the runs are found by it.
    who = key[:20].replace(".", "")
    label = f"{who}-{args.answer_by[0]}-{time.strftime('%H%M%S')}"
    started = time.perf_counter()
    try:
        if proc is not None:
            print(f"llama-server ready in {server.wait_ready(proc, spec.base_url, log=log):.1f} s", file=sys.stderr)
        call_command("benchmark", set_name=bset.name, configs=args.configs, split=args.split, in_process=True,
                     label=label, user=user.username)
    finally:
        if proc is not None:
            server.stop(proc)
    wall = time.perf_counter() - started
    load_end = os.getloadavg()

    gold = {q["question"]: q for q in questions}
    runs = list(Run.objects.filter(benchmark_run__label=label).select_related("benchmark_question").order_by("pk"))
    print(f"\n{len(questions)} {args.split} questions x {args.configs}, answer by {args.answer_by}, "
          f"model {key}, wall {wall:.0f} s, "
          f"load average {load[0]:.1f} at start, {load_end[0]:.1f} at end\n")
    for run in runs:
        q = gold.get(run.question, {})
        print(f"### {q.get('question_id', '?')} {run.config_name}: expected {q.get('expected_behavior')}, "
              f"got {run.status}/{run.outcome}; calls {run.llm_calls}, tokens {run.prompt_tokens}+"
              f"{run.completion_tokens}, {(run.latency_ms or 0) / 1000:.1f} s")
        print(f"Q: {run.question}\nGOLD: {q.get('reference_answer', '')}")
        print(f"A: {run.answer or run.error}")
        for note in _notes(run):
            print(f"NOTE: {note}")
        audit = run.steps.filter(kind="audit").last()
        if audit is not None and "the model " in audit.output.get("reason", ""):
            print(f"AUDIT: {audit.output['reason']}")
        print()
    print("| config | runs | FAILED | calls / q | prompt tokens / q | completion tokens / q | p50 latency "
          "| model sentences replaced |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for config in args.configs.split(","):
        rs = [r for r in runs if r.config_name == config]
        if not rs:
            continue
        done = [r for r in rs if r.latency_ms is not None]
        print(f"| {config} | {len(rs)} | {sum(r.status == Run.Status.FAILED for r in rs)} "
              f"| {statistics.mean(r.llm_calls for r in rs):.2f} "
              f"| {statistics.mean(r.prompt_tokens for r in rs):.0f} "
              f"| {statistics.mean(r.completion_tokens for r in rs):.0f} "
              f"| {statistics.median(r.latency_ms for r in done) / 1000 if done else 0:.1f} s "
              f"| {sum(n.startswith(REPLACED) for r in rs for n in _notes(r))} |")
    if local:
        return
    prefill, generation, requests = _speeds(log)
    print(f"\nllama-server over {requests} requests: prefill {prefill:.1f} tokens/s, generation {generation:.1f} "
          f"tokens/s")


if __name__ == "__main__":
    main()
