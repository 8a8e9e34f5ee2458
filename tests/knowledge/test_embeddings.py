"""The embedding interface, both backends, and the content-addressed cache."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from knowledge.embeddings import (
    LOCAL_DIM,
    LOCAL_MODEL_ID,
    Embedder,
    OpenAIEmbedder,
    cache_key,
    count_tokens,
    get_embedder,
    normalise_text,
)

# The local model's own tests: every call reaches the model (tests/conftest.py).
pytestmark = pytest.mark.real_embedder


class CountingEmbedder:
    """A deterministic fake that records every text it is asked to embed."""

    model_id = "fake-model"
    dim = 8

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed(self, texts):
        self.calls.append(list(texts))
        rows = []
        for t in texts:
            rng = np.random.default_rng(abs(hash(normalise_text(t))) % 2**32)
            v = rng.normal(size=self.dim).astype(np.float32)
            rows.append(v / np.linalg.norm(v))
        return np.array(rows, dtype=np.float32).reshape(len(texts), self.dim)


def test_it_normalises_whitespace_and_ligatures_before_hashing():
    assert normalise_text("  ﬁne\n\ttuning  ") == "fine tuning"
    assert cache_key("m", "ﬁne  tuning") == cache_key("m", "fine tuning")
    assert cache_key("m", "fine tuning") != cache_key("other", "fine tuning")


def test_local_embedder_returns_unit_float32_rows():
    embedder = get_embedder("local")
    assert isinstance(embedder, Embedder)
    assert embedder.model_id == LOCAL_MODEL_ID
    vectors = embedder.embed(["BERT is a bidirectional transformer.", "short", ""])
    assert vectors.shape == (3, LOCAL_DIM) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors[:2], axis=1), 1.0, atol=1e-4)
    assert get_embedder("local") is embedder


def test_local_embedder_ranks_a_paraphrase_far_above_an_unrelated_text():
    v = get_embedder("local").embed(
        ["A man is eating food.", "A man is eating a piece of bread.", "The stock market crashed on Monday."]
    )
    paraphrase, unrelated = float(v[0] @ v[1]), float(v[0] @ v[2])
    # fp32 all-MiniLM-L6-v2 gives ~0.755 for this pair (sentence-transformers model card example).
    assert 0.70 < paraphrase < 0.80
    assert unrelated < 0.2


def test_local_embedder_gives_the_same_vector_alone_or_in_a_padded_batch():
    embedder = get_embedder("local")
    texts = ["tiny", "a much longer sentence about retrieval augmented generation and dense passage retrieval"]
    together = embedder.embed(texts)
    alone = np.vstack([embedder.embed([t]) for t in texts])
    assert np.allclose(together, alone, atol=1e-4)


def test_it_counts_tokens_with_the_model_tokenizer():
    from tokenizers import Tokenizer

    from knowledge.embeddings import local_tokenizer_path

    text = "Unbelievably, BM25 beats all-MiniLM-L6-v2 here."
    reference = Tokenizer.from_file(local_tokenizer_path())
    reference.no_padding()
    with_specials = reference.encode(text).ids
    assert count_tokens(["hello world", text]) == [2, len(with_specials) - 2]


def test_it_refuses_an_unknown_backend_or_local_model():
    with pytest.raises(ValueError, match="Unknown embedding backend"):
        get_embedder("nope")
    with pytest.raises(ValueError, match="only has"):
        get_embedder("local", "bge-large")


@pytest.fixture
def fake_openai_server():
    """An OpenAI-compatible /v1/embeddings on 127.0.0.1 that fails the first request with 500."""
    state = {"requests": [], "fail_next": 1}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state["requests"].append(body)
            if state["fail_next"]:
                state["fail_next"] -= 1
                self.send_response(500)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b'{"error": {"message": "try again"}}')
                return
            # Vectors deliberately not unit length and listed in reverse order.
            data = [
                {"object": "embedding", "index": i, "embedding": [float(len(t)), 1.0, 0.0]}
                for i, t in enumerate(body["input"])
            ][::-1]
            payload = json.dumps({"object": "list", "data": data, "model": body["model"],
                                  "usage": {"prompt_tokens": 1, "total_tokens": 1}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", state
    server.shutdown()


def test_openai_embedder_batches_retries_and_normalises(fake_openai_server):
    base_url, state = fake_openai_server
    embedder = OpenAIEmbedder(model="compat-embed", api_key="k", base_url=base_url, batch_size=2, max_retries=2)
    vectors = embedder.embed(["a", "bbb", "cc"])
    assert vectors.shape == (3, 3)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    # Rows follow the input order even though the server answered in reverse.
    expected = np.array([[1, 1, 0], [3, 1, 0], [2, 1, 0]], dtype=np.float32)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert np.allclose(vectors, expected, atol=1e-6)
    # One failed request retried, then two batches of at most two texts.
    assert [len(r["input"]) for r in state["requests"]] == [2, 2, 1]
    assert embedder.dim == 3 and embedder.model_id == "openai:compat-embed"


@pytest.mark.django_db
def test_it_embeds_only_texts_missing_from_the_cache():
    from knowledge.embedding_cache import embed_with_cache, vectors_for_keys

    embedder = CountingEmbedder()
    first = embed_with_cache(["alpha", "beta", "alpha"], embedder=embedder)
    assert embedder.calls == [["alpha", "beta"]]
    assert np.array_equal(first[0], first[2])

    second = embed_with_cache(["beta", "gamma", "alpha "], embedder=embedder)
    assert embedder.calls[1:] == [["gamma"]]
    assert np.allclose(second[0], first[1]) and np.allclose(second[2], first[0])

    cached = vectors_for_keys([cache_key("fake-model", "gamma"), cache_key("fake-model", "never")])
    assert list(cached) == [cache_key("fake-model", "gamma")]
    assert cached[cache_key("fake-model", "gamma")].dtype == np.float32


@pytest.mark.django_db
def test_it_reports_progress_and_batches_misses():
    from knowledge.embedding_cache import embed_with_cache

    embedder = CountingEmbedder()
    embed_with_cache(["a", "b"], embedder=embedder)
    seen: list[tuple[int, int]] = []
    embed_with_cache(["a", "b", "c", "d", "e"], embedder=embedder, batch_size=2,
                     progress=lambda done, total: seen.append((done, total)))
    assert embedder.calls[1:] == [["c", "d"], ["e"]]
    assert seen == [(2, 5), (4, 5), (5, 5)]


@pytest.mark.django_db
def test_default_embedder_follows_settings(settings):
    from knowledge.embedding_cache import default_embedder

    settings.EMBEDDING_BACKEND = "local"
    settings.EMBEDDING_MODEL = LOCAL_MODEL_ID
    assert default_embedder().model_id == LOCAL_MODEL_ID
    settings.EMBEDDING_BACKEND = "openai"
    settings.EMBEDDING_MODEL = "text-embedding-3-small"
    settings.OPENAI_BASE_URL = "http://127.0.0.1:9/v1"
    embedder = default_embedder()
    assert embedder.model_id == "openai:text-embedding-3-small" and embedder.dim == 1536


def test_local_token_states_are_unit_word_pieces_with_their_words():
    embedder = get_embedder("local")
    short, long = embedder.token_states(["Gradient clipping stabilised it.", "The   run took nine hours."])
    # [CLS] and [SEP] left out; every piece keeps the whole word it came from.
    assert short.vectors.shape == (len(short.words), LOCAL_DIM)
    assert short.words[0] == "gradient" and short.words[-1] == "." and "stabilised" in short.words
    assert np.allclose(np.linalg.norm(short.vectors, axis=1), 1.0, atol=1e-4)
    assert long.words == ("the", "run", "took", "nine", "hours", ".")
    alone = embedder.token_states(["The   run took nine hours."])[0]
    assert np.allclose(alone.vectors, long.vectors, atol=1e-4)
