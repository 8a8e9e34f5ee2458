"""The numbered evidence sentences an LLM role sees, and the checks on what a model writes
into a plan or a query (no guessed values) (agent.llm.roles)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agent import prompts
from agent.types import Source
from agent.verify import eligibility, missing_numbers, normalise

# Numbered sentences shown to the model: at most this many in all, and per need.
CANDIDATES = 12
PER_NEED = 4


def asserts_new_number(text: str, question: str) -> bool:
    """The text states a number the question does not: a guessed value, not a need."""
    return bool(missing_numbers(text, question))


def _strip_new_numbers(query: str, question: str) -> str:
    """A search query without the numbers a model guessed ("base Transformer 12 layers")."""
    kept = [w for w in query.split() if not missing_numbers(w, question)]
    return " ".join(kept)


def _clean_queries(queries: Sequence[str], *, exclude: Sequence[str] = (), limit: int = 3) -> list[str]:
    seen = {q.strip().lower() for q in exclude}
    out: list[str] = []
    for q in queries:
        # The model reads the question escaped ("Jiang &amp; Lin") and may copy it so.
        q = re.sub(r"\s+", " ", prompts.unescape_data(q)).strip()
        if q and q.lower() not in seen:
            seen.add(q.lower())
            out.append(q)
    return out[:limit]


_SLOT_WORDS = re.compile(
    r"\b(?:the\s+)?(?:number|value|amount|size|name|kind|type|values|names)\s+of\b|\bhow\s+(?:many|much)\b|"
    r"\b(?:what|which|who|when|where)\b", re.IGNORECASE)


_ASKS_QUANTITY = re.compile(
    r"\b(?:number|how\s+many|how\s+much|size|dimension\w*|count|rate|amount|percentage|score|value)s?\b",
    re.IGNORECASE)
_NOT_QUANTITIES = re.compile(r"^\s*\d+(?:\.\d+)*\s+|\[\d+(?:\s*,\s*\d+)*\]")
# Of the order of the gap between an on-topic and an off-topic sentence's support score.
QUANTITY_BONUS = 0.1


def _states_quantity(sentence: str) -> bool:
    """The sentence states a number (section numbers and reference markers aside)."""
    from agent.verify import quantities

    return bool(quantities(_NOT_QUANTITIES.sub(" ", sentence), spelled=True))


@dataclass(frozen=True)
class Candidate:
    """A numbered evidence sentence shown to the model."""

    number: int
    source: int  # 1-based index into the sources
    text: str
    score: float


def candidate_sentences(question: str, needs: Sequence[str], premise: str, sources: Sequence[Source], *,
                        embed: Any = None, limit: int = CANDIDATES, per_need: int = PER_NEED) -> list[Candidate]:
    """The few answer-eligible sentences of the sources that best match each need (and the
    premise), numbered 1..n in reading order (source, then position).

    1. split every source into sentences; keep the answer-eligible ones (agent.verify.eligibility,
       knowledge.text.quotable: no headings, caption labels, lead-ins, fragments, table residue),
       each once, in their quotable form;
    2. score each against every need, the question and the premise (agent.local.scoring);
    3. take the best `per_need` for each need and two for the premise, then fill up to `limit`
       with the best remaining by their highest score.
    """
    from agent.local.eligibility import is_injection, is_instruction
    from agent.local.scoring import score_sentences
    from agent.local.text import split_sentences
    from knowledge.text import quotable

    pool: list[tuple[int, int, str]] = []  # (source index, position, sentence)
    for i, source in enumerate(sources):
        # A chunk that tries to steer a model is untrusted as a whole, as in the local
        # auditor: its declarative sentences may be the payload. A model never sees them.
        if is_injection(source.text):
            continue
        for pos, sentence in enumerate(split_sentences(source.text)):
            # A sentence that starts in lower case was cut by a chunk boundary: its subject
            # is in the previous chunk, so a reader (and a model) would misread it.
            if not 20 <= len(sentence) <= 500 or sentence[0].islower() or eligibility(sentence):
                continue
            # The quotable form: a heading or list mark printed in front is cut off.
            sentence = quotable(sentence)
            # Sentences addressed to the reader or a model are instructions, not evidence.
            if is_instruction(sentence):
                continue
            pool.append((i, pos, sentence))
    # Overlapping chunks repeat sentences: keep each once, and drop one that another contains.
    keys = [normalise(s) for _, _, s in pool]
    pool = [p for j, p in enumerate(pool)
            if not any(k != keys[j] and keys[j] in k for k in keys) and keys.index(keys[j]) == j]
    if not pool:
        return []
    if embed is None:
        from agent.local.embed import get_embed

        embed = get_embed()
    # "number of layers of the base model": the slot words are what is asked, not what an
    # answering sentence says, so they are left out of the probe.
    probes = [_SLOT_WORDS.sub(" ", n).strip() or n for n in needs] + [question] + ([premise] if premise else [])
    vecs = embed(probes + [s for _, _, s in pool])
    probe_vecs, sent_vecs = vecs[: len(probes)], vecs[len(probes):]
    texts = [s for _, _, s in pool]
    per_probe = [[sc.support for sc in score_sentences(p, pv, texts, sent_vecs)] for p, pv in zip(probes, probe_vecs)]
    # A need that asks for a quantity is answered by a sentence that states one: such
    # sentences get a bonus for it (what the sentence is about is scored above).
    stated = [_states_quantity(t) for t in texts]
    for k, need in enumerate(needs):
        if _ASKS_QUANTITY.search(need):
            per_probe[k] = [v + QUANTITY_BONUS * q for v, q in zip(per_probe[k], stated)]
    best = [max(col) for col in zip(*per_probe)]
    chosen: dict[int, None] = {}
    quotas = [per_need] * len(needs) + [0] + ([2] if premise else [])
    for scores, quota in zip(per_probe, quotas):
        for j in sorted(range(len(pool)), key=lambda j: -scores[j])[:quota]:
            if len(chosen) < limit:
                chosen.setdefault(j, None)
    for j in sorted(range(len(pool)), key=lambda j: -best[j]):
        if len(chosen) >= limit:
            break
        chosen.setdefault(j, None)
    ordered = sorted(chosen, key=lambda j: (pool[j][0], pool[j][1]))
    return [Candidate(number=n, source=pool[j][0] + 1, text=pool[j][2], score=round(best[j], 4))
            for n, j in enumerate(ordered, start=1)]
