"""Load: N concurrent API clients asking questions against the real stack on this machine.

gunicorn (web), one Celery worker, Redis and PostgreSQL. Each client is its own user with
its own API token (throttles are per user, as for real integrations); it submits its
questions with POST /api/v1/runs/ and polls GET /api/v1/runs/{id}/ until the run is final.

Reports: submit latency p50/p95 (the web request only), completion throughput, end-to-end
latency, and the two numbers that must be zero: lost runs (not final by the deadline) and
duplicated work (a run answered more than once, or more runs than submissions).

    .venv/bin/python bench/load.py                       # 50 clients x 2 questions
    .venv/bin/python bench/load.py --clients 5 --per-client 1   # a quick check

Needs PostgreSQL and Redis on 127.0.0.1 (as .ci/run starts them) and ../shared/data/papers.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

from _shared_data import SHARED, missing

ROOT = Path(__file__).resolve().parent.parent
PAPER = SHARED / "papers" / "1904.08375v2_doc2query.pdf"
QUESTIONS = [
    "How does doc2query expand documents?",
    "Which model predicts the queries in doc2query?",
    "What collection was used to evaluate document expansion?",
    "Does document expansion improve BM25 on MS MARCO?",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _setup(env: dict[str, str], clients: int) -> tuple[str, list[str]]:
    """Migrate, ingest the paper, create one user and token per client (in a subprocess)."""
    script = f"""
import django, json
django.setup()
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from knowledge import services
from accounts.api_auth import api_token_create
from knowledge.ingest import job_run
from knowledge.models import Collection, IngestJob, Role
User = get_user_model()
owner, _ = User.objects.get_or_create(username="load-owner")
collection = Collection.objects.filter(slug="load-test").first() or services.collection_create(name="Load test", user=owner)
if not collection.documents.filter(status="ready").exists():
    data = open({str(PAPER)!r}, "rb").read()
    document, _ = services.document_upload(collection=collection, user=owner,
        uploaded_file=SimpleUploadedFile("doc2query.pdf", data))
    job_run(job_id=IngestJob.objects.filter(document=document).latest("pk").pk)
tokens = []
for i in range({clients}):
    user, _ = User.objects.get_or_create(username=f"load-client-{{i}}")
    services.membership_set(collection=collection, user=user, role=Role.VIEWER)
    tokens.append(api_token_create(user=user, name="load")[1])
print(json.dumps({{"collection": collection.slug, "tokens": tokens}}))
"""
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput"], cwd=ROOT, env=env, check=True,
                   stdout=subprocess.DEVNULL)
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, check=True, capture_output=True,
                         text=True).stdout
    data = json.loads(out.strip().splitlines()[-1])
    return data["collection"], data["tokens"]


def _request(url: str, token: str, body: dict | None = None) -> tuple[int, dict]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method="POST" if body is not None else "GET", headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/json", "Accept": "application/json",
    })
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--per-client", type=int, default=2)
    parser.add_argument("--config", default="agentic")
    parser.add_argument("--web-workers", type=int, default=3)
    parser.add_argument("--deadline", type=float, default=900.0, help="seconds until unfinished runs count as lost")
    parser.add_argument("--database", default="postgres://postgres@127.0.0.1:5432/grounded_load")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/11")
    args = parser.parse_args()
    if not PAPER.exists():
        sys.exit(missing(PAPER))

    dbname = args.database.rsplit("/", 1)[1]
    subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-q", "-c", f"DROP DATABASE IF EXISTS {dbname} WITH (FORCE)"],
                   check=True)
    subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-q", "-c", f"CREATE DATABASE {dbname}"], check=True)
    subprocess.run(["redis-cli", "-u", args.redis, "flushdb"], check=True, stdout=subprocess.DEVNULL)
    var = Path(f"/tmp/grounded-load-{os.getpid()}")
    env = {**os.environ, "PORTAL_DEBUG": "1", "PORTAL_DATABASE_URL": args.database, "PORTAL_REDIS_URL": args.redis,
           "PORTAL_VAR_DIR": str(var), "PORTAL_THROTTLE_USER": "100000/min", "HF_HUB_OFFLINE": "1",
           "DJANGO_SETTINGS_MODULE": "portal.settings"}
    collection, tokens = _setup(env, args.clients)

    port = _free_port()
    web = subprocess.Popen([sys.executable, "-m", "gunicorn", "portal.wsgi", "-b", f"127.0.0.1:{port}",
                            "-w", str(args.web_workers), "--timeout", "60", "--log-level", "warning"],
                           cwd=ROOT, env=env, start_new_session=True)
    worker = subprocess.Popen([sys.executable, "-m", "celery", "-A", "portal", "worker", "-Q", "ingest,answer",
                               "--concurrency", "2", "--loglevel", "WARNING"], cwd=ROOT, env=env,
                              start_new_session=True)
    base = f"http://127.0.0.1:{port}/api/v1"
    for _ in range(100):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/", timeout=1)
            break
        except OSError:
            time.sleep(0.2)

    submit_ms: list[float] = []
    end_to_end: list[float] = []
    run_ids: list[int] = []
    errors: list[str] = []
    lock = threading.Lock()

    def client(i: int, token: str) -> None:
        for j in range(args.per_client):
            question = QUESTIONS[(i + j) % len(QUESTIONS)] + f" (client {i}, #{j})"
            started = time.perf_counter()
            status, body = _request(f"{base}/runs/", token, {"collection": collection, "question": question,
                                                            "config": args.config})
            elapsed = (time.perf_counter() - started) * 1000
            if status != 202:
                with lock:
                    errors.append(f"submit {status}: {body}")
                continue
            run_id = body["id"]
            with lock:
                submit_ms.append(elapsed)
                run_ids.append(run_id)
            deadline = time.monotonic() + args.deadline
            while time.monotonic() < deadline:
                time.sleep(0.5)
                status, body = _request(f"{base}/runs/{run_id}/", token)
                if status == 200 and body.get("status") in ("done", "failed"):
                    with lock:
                        end_to_end.append(time.perf_counter() - started)
                    break

    # Warm every gunicorn worker up (the first request of a process imports the app), so
    # submit latency measures steady state.
    for token in tokens[: args.web_workers * 4]:
        _request(f"{base}/configs/", token)

    wall_start = time.perf_counter()
    threads = [threading.Thread(target=client, args=(i, t)) for i, t in enumerate(tokens)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - wall_start

    check = subprocess.run([sys.executable, "-c", f"""
import django, json
django.setup()
from agent.models import Run
ids = {run_ids!r}
rows = Run.objects.filter(pk__in=ids)
print(json.dumps({{
  "rows": rows.count(),
  "final": rows.filter(status__in=["done", "failed"]).count(),
  "failed": rows.filter(status="failed").count(),
  "answered_more_than_once": rows.filter(attempts__gt=1).count(),
  "runs_in_db": Run.objects.filter(collection__slug={collection!r}).count(),
}}))
"""], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    db = json.loads(check.stdout.strip().splitlines()[-1])
    for proc in (web, worker):
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)

    submitted = len(run_ids)
    result = {
        "clients": args.clients, "questions": args.clients * args.per_client, "config": args.config,
        "submitted": submitted, "submit_errors": len(errors),
        "submit_p50_ms": round(statistics.median(submit_ms), 1) if submit_ms else None,
        "submit_p95_ms": round(_percentile(submit_ms, 0.95), 1) if submit_ms else None,
        "completed": db["final"], "failed": db["failed"],
        "lost": submitted - db["final"],
        "duplicated": db["answered_more_than_once"] + max(0, db["runs_in_db"] - submitted),
        "wall_s": round(wall, 1),
        "throughput_runs_per_s": round(db["final"] / wall, 2),
        "end_to_end_p50_s": round(statistics.median(end_to_end), 1) if end_to_end else None,
        "end_to_end_p95_s": round(_percentile(end_to_end, 0.95), 1) if end_to_end else None,
    }
    print(json.dumps(result, indent=2))
    if errors:
        print("first errors:", errors[:3], file=sys.stderr)


if __name__ == "__main__":
    main()
