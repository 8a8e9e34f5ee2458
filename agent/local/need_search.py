"""The search for a need inside the paper it is about (RunConfig.need_search).

The question's own searches rank chunks of the whole collection, and the chunk that answers
a need of a question about one paper often sits at rank 6-30 of them: below the top k the
auditor reads, behind chunks of the same paper (and others) that repeat the question's words.
Searched within that paper alone, with the need's own wording, it is ranked among the paper's
chunks only.

1. The paper: among the retrieved chunks (the queries' top k, `Source.pool` aside), those of
   the documents whose retrieved text names the need's names (candidates.gate_anchors, the
   auditor's anchor gate: a document that fails it cannot answer the need anyway), and of
   those the one or two whose chunks name them most often (a paper about X names X in most of
   its passages, a survey citing X in one). A need that names nothing is about the paper
   holding at least half of the top chunks, when one does.
2. The query: the need as the planner wrote it (with the question's names when it borrows
   them: candidates.plan_facts). Needs of one question that give the same query and paper
   are searched once.
3. The search (agent.loop.AgentLoop._need_search): the sentence-level dense search over the
   paper's stored sentence vectors (CollectionRetriever.retrieve_sentences_within); the
   chunks of its RunConfig.need_search best sentences join the run's sources after every
   other pool chunk, as pool chunks: the answer's choice reads their sentences, the premise
   check does not. Measured against the chunk-level fused search restricted the same way on
   the calibration halves (bench/need_search.py, docs/benchmarks.md).
"""

from __future__ import annotations

from collections import Counter

from agent.local.candidates import gate_anchors, gate_coverage
from agent.local.text import anchor_coverage, term_set
from agent.types import Source

# A need's search reads at most this many papers (two: "A and B" names two).
NEED_SEARCH_DOCUMENTS = 2


def need_documents(fact: str, sources: list[Source], *, anchor_min: float | None = None) -> list[int]:
    """The papers the need is about among the retrieved `sources` (step 1 above), or [] when
    the retrieved chunks name none and concentrate in none. `anchor_min`: the auditor's anchor
    gate (AuditorParams.anchor_min, its default when None)."""
    top = [s for s in sources if s.document_id is not None and not s.from_web and not s.pool
           and not s.premise_search]
    if not top:
        return []
    names = gate_anchors(fact)
    if not names:
        counts = Counter(s.document_id for s in top).most_common(2)
        held = counts[0][1]
        alone = len(counts) == 1 or counts[1][1] < held
        return [counts[0][0]] if alone and 2 * held >= len(top) else []
    terms: dict[int, set[str]] = {}
    mentions: Counter[int] = Counter()
    for s in top:
        bag = term_set(f"{s.document_title} {s.section} {s.text}")
        terms.setdefault(s.document_id, set()).update(bag)
        mentions[s.document_id] += anchor_coverage(names, bag) > 0
    if anchor_min is None:
        from agent.local.auditor import AuditorParams

        anchor_min = AuditorParams().anchor_min
    named = [doc for doc, bag in terms.items() if gate_coverage(fact, bag) >= anchor_min]
    if not named:
        return []
    most = max(mentions[doc] for doc in named)
    return [doc for doc in named if mentions[doc] == most][:NEED_SEARCH_DOCUMENTS]


def need_searches(facts: list[str], sources: list[Source], *,
                  anchor_min: float | None = None) -> list[tuple[str, list[int]]]:
    """Each need's search as (query, the papers it reads), one per distinct pair (step 2)."""
    out: list[tuple[str, list[int]]] = []
    for fact in facts:
        documents = need_documents(fact, sources, anchor_min=anchor_min)
        if documents and fact.strip() and (fact, documents) not in out:
            out.append((fact, documents))
    return out

