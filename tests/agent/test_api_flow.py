"""The integration flow of docs/api.md over real HTTP, with a real Celery worker process:
upload a paper -> wait until ready -> ask -> poll -> read the answer's citations."""

from __future__ import annotations

import time

import pytest

from accounts.api_auth import api_token_create
from tests.conftest import paper


def _poll(session, url: str, wait, *, until: tuple[str, ...], timeout: float) -> dict:
    """GET url until its status is one of `until`; `wait` is the worker fixture's waiter."""
    latest: dict = {}

    def done() -> bool:
        response = session.get(url, timeout=10)
        assert response.status_code == 200, response.text
        latest.update(response.json())
        return latest["status"] in until

    wait(done, timeout=timeout, interval=0.5)
    return latest


@pytest.mark.worker
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_upload_wait_ask_poll_and_read_citations_over_http(
    live_server, collection, alice, celery_worker_process
):
    import requests

    pdf = paper("1904.08375v2_doc2query")
    _, token = api_token_create(user=alice, name="flow test")
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {token}"
    api = f"{live_server.url}/api/v1"

    uploaded = session.post(
        f"{api}/collections/{collection.slug}/documents/",
        files={"file": (pdf.name, pdf.read_bytes(), "application/pdf")},
        timeout=60,
    )
    assert uploaded.status_code == 201, uploaded.text
    document = uploaded.json()
    assert uploaded.headers["Location"] == document["url"]
    started = time.monotonic()
    document = _poll(session, document["url"], celery_worker_process, until=("ready", "failed"), timeout=300)
    assert document["status"] == "ready", document
    assert document["progress"] == 1.0 and document["pages"] == 7
    ingest_seconds = time.monotonic() - started

    asked = session.post(
        f"{api}/runs/",
        json={"collection": collection.slug, "question": "What does Doc2query predict for each document?"},
        timeout=30,
    )
    assert asked.status_code == 202, asked.text
    run_url = asked.headers["Location"]
    run = _poll(session, run_url, celery_worker_process, until=("done", "failed"), timeout=240)
    assert run["status"] == "done", run["error"]
    assert run["outcome"] in ("ANSWER", "PARTIAL"), run
    assert run["citations"], run
    for citation in run["citations"]:
        assert citation["document_id"] == document["id"]
        assert f"[{citation['marker']}]" in run["answer"]
        assert citation["page"] >= 1
        if citation["quote"]:
            text = citation["chunk_text"]
            located = text[citation["quote_start"] : citation["quote_end"]]
            assert located.split() == citation["quote"].split()
    assert [s["kind"] for s in run["steps"]][:2] == ["plan", "retrieve"]
    assert run["timings"]["finished_at"] and run["timings"]["latency_ms"] is not None

    # The file behind a citation is downloadable by the asker, byte for byte.
    download = session.get(document["file_url"], timeout=30)
    assert download.status_code == 200
    assert download.content == pdf.read_bytes()
    print(f"ingest {ingest_seconds:.1f}s, answer latency {run['timings']['latency_ms']} ms")
