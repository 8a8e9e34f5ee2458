"""Named configurations of the one agent code path, and the role factory.

Baselines (plain RAG: retrieve top 5, always answer) and agentic variants differ only in
switches, so the benchmark compares like with like. A run stores its configuration and a
stable hash of it (with the LLM backend and model, which change the results too).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from agent.roles import Auditor, Generator, Planner, Reformulator, Verifier

if TYPE_CHECKING:
    from collections.abc import Sequence

    from agent.local.embed import EmbedFn


# The default of RunConfig.answer_gate (docs/benchmarks.md, stop 26): "off", "needs" or
# "verdict" (agent.llm.drafts.local_refusal).
ANSWER_GATE = "needs"
# Who writes the answer with a model backend (RunConfig.answer_by, docs/llm.md "Writer mode"):
# "model", the LLM roles plan, audit, choose the evidence and write; "writer", the local roles
# do all of that as the `local` backend does, and the model only rewords an ANSWER or PARTIAL
# from the sentences they chose (agent.llm.writer); "chooser", the local roles do all of that and
# the model only says which of the local ranking's best sentences answer (agent.llm.chooser).
# PORTAL_LLM_ANSWER_BY sets it for new runs.
ANSWER_BY = "model"
ANSWER_BY_CHOICES = ("model", "writer", "chooser")


@dataclass(frozen=True)
class RunConfig:
    name: str
    retrieval_mode: str = "rrf"  # knowledge.indexing.search.index_search mode: bm25 / dense / rrf / minmax
    rerank: str | None = None  # None / "sentence" / "llm"
    top_k: int = 5  # chunks kept per (sub-)query
    plan: bool = False  # decompose into sub-queries (else the question is the one query)
    audit: bool = False  # audit the evidence (else answer from whatever was retrieved)
    max_retries: int = 0  # reformulate-and-retrieve passes on INSUFFICIENT_RETRY
    # With an audit, each (sub-)query also reads down to its top `pool` chunks, and the
    # retriever's sentence search (CollectionRetriever.retrieve_sentences) adds the chunks of
    # its `sentence_pool` best sentences: the auditor may choose the answering sentence from
    # them, the premise check reads only the top k (agent.types.Source.pool). Chosen on the
    # devbench calibration half (bench/sentence_pool.py, docs/benchmarks.md).
    pool: int = 0
    sentence_pool: int = 0
    # With an audit, also each retriever's own top `heads` chunks per query (BM25's and the
    # dense search's, before fusion), and the chunks just before and after each query's
    # best `neighbours` chunks: pool chunks too (agent.loop.AgentLoop._retrieve).
    heads: int = 0
    neighbours: int = 0
    # A head from a paper outside the fused top k joins only when it names at least this share
    # of the query's names (agent.loop.names_of; 0: never).
    head_names: float = 0.0
    # With an auditor that reads a pool (the local one): for each presupposition of the plan,
    # one more search for the sentence that states what it presupposes, without the value it
    # gives, in the papers it names (agent.loop.AgentLoop._premise_search); the premise check
    # reads its chunks, the choice of the answering sentences does not (docs/agent.md).
    premise_search: bool = False
    # And, for each presupposition, the chunks of the `premise_sentences` sentences closest to
    # it as stated (names and values kept), in the papers it names (the collection when it
    # names none): the premise's own retrieval, read by the premise check only, like the
    # chunks of premise_search (agent.local.premise_check.premise_statement; 0: none).
    premise_sentences: int = 0
    # LLM backends: an audited ANSWER or PARTIAL stands only where the local auditor would not
    # refuse the question on the same evidence (agent.llm.drafts.local_refusal: "needs", no need
    # answered; "verdict", any refusal; "off"); else the run refuses. Measured on the calibration
    # halves without a model (bench/llm_gate_cost.py, docs/benchmarks.md, "LLM answers gated and
    # range/subject checks (stop 26)").
    answer_gate: str = ANSWER_GATE
    # With a model backend: "model" (the LLM roles), "writer" (local roles, the model writes the
    # answer's wording only: agent.llm.writer) or "chooser" (local roles, the model chooses which of
    # the best-ranked sentences answer: agent.llm.chooser). The `local` backend ignores it.
    answer_by: str = ANSWER_BY

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# The audited configurations add the chunks of each sub-query's 5 best sentences (sentence-level
# dense search); a deeper chunk pool (`pool`) put no more answering sentences first on the
# devbench calibration half (bench/sentence_pool.py, docs/benchmarks.md).
SENTENCE_POOL = 5
# And each retriever's own best chunk per sub-query (BM25's and the dense search's, which RRF
# can push far down when the other list misses it), from a paper the fused top k found, and
# the chunks next to each sub-query's best chunk. On the devbench calibration half: 32 -> 35
# of 45 gold spans in the retrieved chunks, answering sentence first 11 -> 12, in the answer
# 14 -> 16, every outcome the same; each retriever's best 2 or 5 moved answering sentences
# already in the first ten further down (noise), its best 1 none (bench/sentence_pool.py,
# docs/benchmarks.md).
HEADS = 1
NEIGHBOURS = 1
# A head from a paper outside the fused top k joins when it names all of its query's names
# (calibration halves, docs/benchmarks.md "Retrieval admission (stop 27)").
HEAD_NAMES = 1.0
# The search for what each presupposition states (RunConfig.premise_search; docs/benchmarks.md,
# "In-paper premise search (stop 28)").
PREMISE_SEARCH = True
# The premise's own retrieval (RunConfig.premise_sentences): off. With the 3 best sentences'
# chunks it changed no outcome of the calibration premise set, blind2 or blind3 and cited
# no sentence, for one more search per premise (docs/benchmarks.md, "Premise retrieval (stop 31)").
PREMISE_SENTENCES = 0

CONFIGS: dict[str, RunConfig] = {
    c.name: c
    for c in (
        RunConfig("naive_dense", retrieval_mode="dense"),
        RunConfig("bm25", retrieval_mode="bm25"),
        RunConfig("hybrid", retrieval_mode="rrf"),
        RunConfig("hybrid_rerank", retrieval_mode="rrf", rerank="sentence"),
        RunConfig("agentic_no_audit", plan=True),
        RunConfig("agentic_no_retry", plan=True, audit=True, sentence_pool=SENTENCE_POOL, heads=HEADS,
                  neighbours=NEIGHBOURS, head_names=HEAD_NAMES, premise_search=PREMISE_SEARCH,
                  premise_sentences=PREMISE_SENTENCES),
        RunConfig("agentic", plan=True, audit=True, max_retries=2, sentence_pool=SENTENCE_POOL, heads=HEADS,
                  neighbours=NEIGHBOURS, head_names=HEAD_NAMES, premise_search=PREMISE_SEARCH,
                  premise_sentences=PREMISE_SENTENCES),
        RunConfig("agentic_rerank", rerank="sentence", plan=True, audit=True, max_retries=2,
                  sentence_pool=SENTENCE_POOL, heads=HEADS, neighbours=NEIGHBOURS, head_names=HEAD_NAMES,
                  premise_search=PREMISE_SEARCH,
                  premise_sentences=PREMISE_SENTENCES),
    )
}
# The one list of configuration names (the ask form, the API, benchmarks).
CONFIG_NAMES = tuple(CONFIGS)


def config_choices(default: str) -> list[str]:
    """The configuration names, `default` first when it is one of them (what a user may pick)."""
    return [default, *[n for n in CONFIG_NAMES if n != default]] if default in CONFIG_NAMES else list(CONFIG_NAMES)


# The configuration a "Quick answer" uses: one retrieval, one generation, no audit or retry.
QUICK_CONFIG = "hybrid"


def user_choices(default: str) -> list[tuple[str, str]]:
    """The at most two choices the ask form offers, as (configuration name, plain label).

    People choose between a checked answer and a quick one; the eight named configurations
    stay in the benchmark pages and the API. When the default is itself the quick one (an
    operator set PORTAL_DEFAULT_RUN_CONFIG=hybrid), the form offers one choice only.
    """
    choices = [(default, "Checked answer (default)")]
    if default != QUICK_CONFIG:
        choices.append((QUICK_CONFIG, "Quick answer (no evidence check)"))
    return choices


def config_label(name: str, default: str) -> str:
    """The plain name of a configuration for people; the internal name when it has none."""
    return dict(user_choices(default)).get(name, name)


def get_config(name: str) -> RunConfig:
    try:
        return CONFIGS[name]
    except KeyError:
        raise ValueError(f"Unknown configuration {name!r}: use one of {', '.join(CONFIGS)}.") from None


def config_record(config: RunConfig, *, backend: str, model: str = "", answer_by: str = "") -> dict[str, Any]:
    """What a run stores as its configuration: the switches plus what produced the text.

    `answer_by` (the PORTAL_LLM_ANSWER_BY setting) overrides the configuration's with a model
    backend; the `local` backend records the configuration's own (it has no model to write)."""
    if answer_by and answer_by not in ANSWER_BY_CHOICES:
        raise ValueError(f"Unknown answer_by {answer_by!r}: use one of {', '.join(ANSWER_BY_CHOICES)}.")
    record = {**config.as_dict(), "backend": backend, "model": model if backend != "local" else "local"}
    if answer_by and backend != "local":
        record["answer_by"] = answer_by
    return record


def config_hash(record: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of the record: equal switches, equal hash, in any process."""
    return hashlib.sha256(json.dumps(record, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


@dataclass
class Roles:
    planner: Planner
    auditor: Auditor
    reformulator: Reformulator
    generator: Generator
    verifier: Verifier


def build_roles(config: RunConfig, backend: str = "local", *, client: Any = None,
                embed: EmbedFn | None = None, documents: Sequence[int] | None = None) -> Roles:
    """The role implementations for a backend: "local" (offline), or "openai" and "embedded"
    (agent.llm_roles; `embedded` is the same client pointed at the local llama-server).

    With a model backend and `config.answer_by == "writer"`, the local roles plan, audit and
    choose the answer's sentences, and the model only words it (agent.llm.writer.LLMWriter); with
    "chooser", the model only chooses which of the local ranking's best sentences answer
    (agent.llm.chooser.LLMChooser), and the local generator composes the answer from them.
    The verifier is always the deterministic one: no model decides whether a quote exists.
    `embed` is the local roles' sentence embedder (default: agent.local.embed.get_embed()).
    `documents`: the run is limited to these documents (Run.documents); a model's whole-paper
    summary reads no other paper.
    """
    from agent.verify import CitationVerifier

    if backend == "local" or (backend in ("openai", "embedded") and config.answer_by in ("writer", "chooser")):
        from agent.local.auditor import LocalAuditor
        from agent.local.generator import ExtractiveGenerator
        from agent.local.planner import RulePlanner
        from agent.local.reformulator import KeywordReformulator
        from knowledge.vocabulary import document_vocabulary

        generator: Generator = ExtractiveGenerator(embed)
        # The paper's whole text decides a word a line break cut, as for the verifier's quotes.
        auditor: Auditor = LocalAuditor(embed, vocabulary=document_vocabulary)
        if backend != "local":
            from agent.llm import LLMClient

            client = client or LLMClient.from_settings()
            if config.answer_by == "writer":
                from agent.llm.writer import LLMWriter

                generator = LLMWriter(client, local=generator, embed=embed)
            else:
                from agent.llm.chooser import LLMChooser

                auditor = LLMChooser(client, local=auditor)
        return Roles(RulePlanner(), auditor, KeywordReformulator(), generator, CitationVerifier())
    if backend in ("openai", "embedded"):
        from agent.llm.whole import default_library
        from agent.llm_roles import llm_roles

        roles = llm_roles(client, answer_gate=config.answer_gate,
                          library=default_library(documents) if documents else None)
        return Roles(roles["planner"], roles["auditor"], roles["reformulator"], roles["generator"],
                     CitationVerifier())
    raise ValueError(f"Unknown LLM backend {backend!r}: use local, openai or embedded.")
