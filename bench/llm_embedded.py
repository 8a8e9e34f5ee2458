"""Speed of the embedded model server on this machine: cold start, prefill, generation, RSS.

    .venv/bin/python bench/llm_embedded.py                      # every shipped model in the cache
    .venv/bin/python bench/llm_embedded.py --model smollm2-135m-instruct-q4_1 --repeats 5

For each model assembled in PORTAL_LLM_CACHE (`make llm`), it starts llama-server exactly as
`manage.py llm serve` does (agent/embedded/server.py), times the cold start to a healthy
/health, then sends `--repeats` chat requests with a ~1,300-token prompt made of this
repository's docs (a different slice each time, so nothing comes from the prompt cache)
and a json_schema response_format, and reads the server's own `timings` (prompt and
generation tokens per second). Prints one JSON line per model with medians, the peak RSS
of the server process (VmHWM) and whether every reply parsed into the schema; `--markdown`
adds a table row for docs/llm.md. Report the load average with the figures: on a shared
2-core machine they move with it.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import sys
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SCHEMA = {
    "type": "object",
    "properties": {
        "topic": {"type": "string", "maxLength": 60},
        "facts": {"type": "array", "maxItems": 3, "items": {"type": "string", "maxLength": 120}},
    },
    "required": ["topic", "facts"],
    "additionalProperties": False,
}


def _prompt_text(index: int, words: int) -> str:
    text = " ".join(" ".join(p.read_text().split()) for p in sorted((ROOT / "docs").glob("*.md")))
    tokens = text.split()
    start = (index * 997) % max(1, len(tokens) - words)
    return " ".join(tokens[start:start + words])


def _post(url: str, payload: dict) -> dict:
    request = urllib.request.Request(url, data=json.dumps(payload).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=600) as response:
        return json.loads(response.read())


def _peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def measure(key: str, cache: Path, repeats: int, words: int, max_tokens: int) -> dict:
    from agent.embedded import build, catalog, server

    model = catalog.MODELS[key]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    spec = server.ServerSpec(binary=build.server_binary(cache), model_path=catalog.model_path(model, cache),
                             alias=key, port=port)
    log = cache / f"bench-{key}.log"
    log.write_text("")
    proc = server.start(spec, log=log)
    try:
        cold = server.wait_ready(proc, spec.base_url, timeout=300, log=log)
        rows = []
        for i in range(repeats):
            body = _post(f"{spec.base_url}/v1/chat/completions", {
                "model": key, "temperature": 0, "max_tokens": max_tokens,
                "messages": [
                    {"role": "system", "content": "You summarise documentation as JSON."},
                    {"role": "user", "content": f"Name the topic of this text and up to three facts it states.\n\n"
                                                f"{_prompt_text(i, words)}"},
                ],
                "response_format": {"type": "json_schema",
                                    "json_schema": {"name": "Summary", "schema": SCHEMA, "strict": True}},
            })
            timings = body.get("timings", {})
            try:
                reply = json.loads(body["choices"][0]["message"]["content"])
                parsed = set(reply) == {"topic", "facts"} and len(reply["facts"]) <= 3
            except (ValueError, KeyError, TypeError):
                parsed = False
            rows.append({"prompt_tokens": timings.get("prompt_n", 0), "prefill_tps": timings.get("prompt_per_second", 0),
                         "completion_tokens": timings.get("predicted_n", 0),
                         "generation_tps": timings.get("predicted_per_second", 0), "parsed": parsed,
                         "finish_reason": body["choices"][0].get("finish_reason")})
        rss = _peak_rss_mb(proc.pid)
    finally:
        server.stop(proc)
    return {
        "model": key, "cold_start_s": round(cold, 1), "repeats": repeats,
        "prompt_tokens_median": statistics.median(r["prompt_tokens"] for r in rows),
        "prefill_tps_median": round(statistics.median(r["prefill_tps"] for r in rows), 1),
        "completion_tokens_median": statistics.median(r["completion_tokens"] for r in rows),
        "generation_tps_median": round(statistics.median(r["generation_tps"] for r in rows), 1),
        "json_schema_parsed": f"{sum(r['parsed'] for r in rows)}/{len(rows)}",
        "finish_reasons": sorted({str(r["finish_reason"]) for r in rows}),
        "peak_rss_mb": round(rss), "load_average": os.getloadavg(), "rows": rows,
    }


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
    os.environ.setdefault("PORTAL_DEBUG", "1")
    import django

    django.setup()
    from django.conf import settings

    from agent.embedded import catalog

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", action="append", choices=list(catalog.MODELS))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--words", type=int, default=900, help="prompt length in words (~1.4 tokens each)")
    parser.add_argument("--max-tokens", type=int, default=160)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    cache = settings.LLM_CACHE
    keys = args.model or [k for k, m in catalog.MODELS.items() if catalog.is_ready(m, cache)]
    for key in keys:
        result = measure(key, cache, args.repeats, args.words, args.max_tokens)
        print(json.dumps(result))
        if args.markdown:
            print(f"| {key} | {result['cold_start_s']} s | {result['prompt_tokens_median']:.0f} | "
                  f"{result['prefill_tps_median']} | {result['generation_tps_median']} | {result['peak_rss_mb']} MB | "
                  f"{result['json_schema_parsed']} | {' '.join(f'{x:.1f}' for x in result['load_average'])} |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
