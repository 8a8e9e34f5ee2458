"""Chooser mode (RunConfig.answer_by = "chooser"): the local roles decide, the model only points.

The local roles plan, retrieve, score and decide exactly as the `local` backend does
(agent.local.*). When the local verdict is an answer (SUFFICIENT or PARTIALLY_SUFFICIENT, with
no dispute between sources), the model is shown the question and the local ranking's best
`ChooserParams.shown` candidate sentences of the answered needs, numbered (the sentences only, no
chunk text, grouped under their documents' titles), and returns in one bounded call which
numbers answer the question, best first, or none (`ChoiceOut`: `{"sentences": [3, 1]}`). The
model writes no text: the extractive generator composes the answer from the chosen sentences as
it does from the auditor's own (agent.local.generator), and the verifier checks it as always.

What the model may change: which of the shown sentences each answered need states (the local
best ones are shown first, so "1" keeps the local choice). What it may not: a refusal, a premise
correction, a clarifying question or a dispute between sources is the local roles' own and costs
no call; a need the local auditor left unanswered is never answered from a model choice. A
choice of none lowers a need to unanswered only where its local best sentence is weak
(`ChooserParams.none_below`), so "none" can turn an ANSWER into a PARTIAL or a refusal, never the
other way round. A reply that cannot be parsed, numbers outside the shown range, or a model that
cannot be reached leave the local audit as it was (with a note in its reason).

Why: the local backend's main failure is an on-topic sentence that does not answer (devbench
D09, D10, D18, D26); a small model that writes answers reads worse than the extracts (docs/llm.md
"Writer mode"), but telling which of a few sentences answers a question needs no writing.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, Field

from agent import prompts
from agent.llm.config import LLMError
from agent.local.text import term_set
from agent.types import AuditResult, FactAudit, Plan, Source, SupportingSentence, SupportLabel, Verdict
from agent.verify import find_quote

log = logging.getLogger(__name__)

# The most sentences a prompt shows, and the most the model may choose (the schema's bounds).
MAX_SHOWN = 8
MAX_CHOSEN = 3
# A shown sentence is cut to this many characters, and to its share of EVIDENCE_CHARS (so a prompt of
# 8 sentences stays under 700 tokens: the system message and the task take about 1,100 characters).
SENTENCE_CHARS = 240
EVIDENCE_CHARS = 1_500
TITLE_CHARS = 70

CHOOSER_TASK = (
    "Which numbered sentences answer the question, i.e. state what it asks for (a value, name, method, "
    "reason or yes/no)? A sentence that only mentions the same topic does not.\n"
    "- sentences: their numbers, best first, at most 3; [] if none answers."
)


@dataclass(frozen=True)
class ChooserParams:
    """How many candidates the model is shown, how many chosen sentences a need keeps, and when a
    choice of none lowers a need (docs/llm.md "Chooser mode"; chosen on the devbench calibration
    half, docs/benchmarks.md "LLM chooser mode (stop 28)")."""

    shown: int = MAX_SHOWN
    per_fact: int = 2
    # How many of the model's choices a need takes (in its order), and whether the need's local
    # sentences fill the slots (of per_fact) they leave: with take 1, the model puts the sentence it
    # reads as answering first without taking the local best out of the answer.
    # Chosen on the devbench calibration half with the 0.5B model (docs/benchmarks.md "LLM chooser
    # mode (stop 28)"): take 2 without fill read 6.0 of 16 answerable right, take 1 with fill 8.5, as
    # the local backend (the model put the local best first and patterned numbers after it: 1, 3, 5).
    take: int = 1
    fill_local: bool = True
    # A need whose shown sentences the model all passes over becomes unanswered when its local best
    # sentence's P(answers) (agent.local.selection) is below this; 0: never (the local choice stands).
    none_below: float = 0.0


# The parameters of every LLMChooser built without its own (a benchmark may set them for a run).
DEFAULT_PARAMS = ChooserParams()


def _numbers(value: Any) -> Any:
    """The reply's numbers that can be sentence numbers (1..MAX_SHOWN), in order, once each, at most
    MAX_CHOSEN: a server that ignores the schema cannot make the reply invalid with a stray one."""
    if not isinstance(value, list):
        return value
    out: list[int] = []
    for v in value:
        n = int(v) if isinstance(v, int | str) and str(v).strip().isdigit() else 0
        if 1 <= n <= MAX_SHOWN and n not in out:
            out.append(n)
    return out[:MAX_CHOSEN]


class ChoiceOut(BaseModel):
    # Empty: none of the shown sentences answers (a legitimate reply, unlike the writer's).
    sentences: Annotated[list[Annotated[int, Field(ge=1, le=MAX_SHOWN)]], BeforeValidator(_numbers),
                         Field(max_length=MAX_CHOSEN)]


@dataclass(frozen=True)
class Shown:
    """One numbered candidate: its sentence, chunk, P(answers) and the needs it ranks for."""

    quote: str
    chunk_id: int
    answers: float
    facts: frozenset[int]


def _title(chunk_id: int, sources: Sequence[Source]) -> str:
    return next((s.document_title or s.file_name for s in sources if s.chunk_id == chunk_id), "") or "document"


def by_document(shown: Sequence[Shown], sources: Sequence[Source]) -> list[Shown]:
    """`shown` grouped by document, documents in the order of their first sentence, so that the
    numbers run 1..n down the prompt (the local best stays 1)."""
    titles = [_title(s.chunk_id, sources) for s in shown]
    order = list(dict.fromkeys(titles))
    return [s for _, _, s in sorted(zip((order.index(t) for t in titles), range(len(shown)), shown))]


def chooser_messages(question: str, shown: Sequence[Shown], sources: Sequence[Source]) -> list[dict[str, str]]:
    """The shared system message, the task, the question and the candidates numbered 1..n in the
    order given, each under its document's title (a new element where the document changes)."""
    groups: list[tuple[str, list[str]]] = []
    cut = min(SENTENCE_CHARS, EVIDENCE_CHARS // max(len(shown), 1))
    for n, s in enumerate(shown, start=1):
        text = s.quote if len(s.quote) <= cut else s.quote[: cut - 3].rstrip() + "..."
        title = _title(s.chunk_id, sources)
        if not groups or groups[-1][0] != title:
            groups.append((title, []))
        groups[-1][1].append(f"[{n}] {prompts.escape_data(text)}")
    blocks = []
    for title, lines in groups:
        title = prompts.escape_data(title[:TITLE_CHARS]).replace('"', "'")
        blocks.append(f'<document title="{title}">\n' + "\n".join(lines) + "\n</document>")
    data = f"{prompts.question_block(question)}\n<evidence>\n" + "\n".join(blocks) + "\n</evidence>"
    return [dict(prompts.SYSTEM_MESSAGE), {"role": "user", "content": f"TASK\n{CHOOSER_TASK}\n\n{data}"}]


def _near_duplicate(a: set[str], b: set[str]) -> bool:
    """The two say the same thing (the auditor's rule), or one is a piece of the other (a sentence
    cut at a chunk's start: "Hole@10 value of 6.4% and 2.8%, indicating ...")."""
    shared = len(a & b)
    return shared / max(len(a | b), 1) >= 0.7 or shared / max(min(len(a), len(b)), 1) >= 0.9


def shown_candidates(audit: AuditResult, ranked: Sequence[Sequence[tuple[str, int, float, Any]]],
                     limit: int) -> list[Shown]:
    """At most `limit` candidates of the answered needs, in the local order: each need's audited
    sentences first, then its ranked ones, the needs taking turns (first choices of every need,
    then second ones, ...); a sentence ranked for several needs is shown once, near-duplicates not."""
    usable = (SupportLabel.SUPPORTED, SupportLabel.PARTIAL)
    lists: list[list[tuple[str, int, float]]] = []
    for i, fact in enumerate(audit.facts):
        if fact.label not in usable:
            lists.append([])
            continue
        scores = {q: (cid, p) for q, cid, p, _ in ranked[i]}
        picked = [(s.quote, s.chunk_id, s.score) for s in fact.sentences if s.label in usable]
        lists.append(picked + [(q, cid, p) for q, (cid, p) in scores.items() if q not in {x[0] for x in picked}])
    facts_of: dict[str, set[int]] = {}
    for i, entries in enumerate(lists):
        for quote, _, _ in entries:
            facts_of.setdefault(quote, set()).add(i)
    out: list[Shown] = []
    seen: list[set[str]] = []
    for rank in range(max((len(x) for x in lists), default=0)):
        for entries in lists:
            if rank >= len(entries) or len(out) >= limit:
                continue
            quote, chunk_id, answers = entries[rank]
            terms = term_set(quote)
            if any(s.quote == quote for s in out) or any(_near_duplicate(terms, t) for t in seen):
                continue
            seen.append(terms)
            out.append(Shown(quote=quote, chunk_id=chunk_id, answers=answers, facts=frozenset(facts_of[quote])))
    return out


def chosen_audit(audit: AuditResult, shown: Sequence[Shown], chosen: Sequence[int], sources: Sequence[Source],
                 params: ChooserParams) -> AuditResult:
    """The audit with each answered need's sentences replaced by the chosen ones it ranks (model
    order, `params.take` of them; then its local ones with `params.fill_local`; `params.per_fact` at most). A need none of whose shown sentences was chosen keeps its
    local sentences, or becomes unanswered when its local best is below `params.none_below`; the
    verdict follows (all needs unanswered: a refusal; some: PARTIALLY_SUFFICIENT). Never more."""
    usable = (SupportLabel.SUPPORTED, SupportLabel.PARTIAL)
    text_of = {s.chunk_id: s.text for s in sources}
    picks = [shown[n - 1] for n in chosen if 1 <= n <= len(shown)]
    facts: list[FactAudit] = []
    missing = list(audit.missing)
    lowered: list[str] = []
    for i, fact in enumerate(audit.facts):
        if fact.label not in usable or not any(i in s.facts for s in shown):
            facts.append(fact)
            continue
        mine = [s for s in picks if i in s.facts and s.chunk_id in text_of][: params.take]
        sentences = [SupportingSentence(chunk_id=s.chunk_id, quote=s.quote, label=fact.label, score=round(s.answers, 4),
                                        verified=True, quote_start=find_quote(s.quote, text_of[s.chunk_id]))
                     for s in mine]
        sentences = [s for s in sentences if s.quote_start >= 0]
        if sentences:
            if params.fill_local:
                sentences += [s for s in fact.sentences if s.quote not in {m.quote for m in sentences}]
            facts.append(fact.model_copy(update={"sentences": sentences[: params.per_fact]}))
            continue
        best = fact.sentences[0].score if fact.sentences else 0.0
        if best >= params.none_below:
            facts.append(fact)
            continue
        # Not answered after all: its best sentence stays as the closest evidence a refusal shows.
        closest = [s.model_copy(update={"label": SupportLabel.UNSUPPORTED}) for s in fact.sentences[:1]]
        facts.append(fact.model_copy(update={"label": SupportLabel.UNSUPPORTED, "sentences": closest}))
        lowered.append(fact.fact)
        missing.append(fact.fact)
    if not lowered:
        return audit.model_copy(update={"facts": facts})
    why = "the model chose no shown sentence as answering: " + "; ".join(lowered)
    if any(f.label in usable for f in facts):
        return audit.model_copy(update={"facts": facts, "missing": missing, "verdict": Verdict.PARTIALLY_SUFFICIENT,
                                        "reason": why})
    return audit.model_copy(update={"facts": facts, "missing": missing, "verdict": Verdict.INSUFFICIENT_REFUSE,
                                    "reason": why})


class LLMChooser:
    """The auditor of chooser mode: the local audit, its answering sentences chosen by the model
    from the local ranking's best candidates (module doc)."""

    def __init__(self, client: Any, *, local: Any, params: ChooserParams | None = None) -> None:
        self.client = client
        self.local = local
        self.params = params or DEFAULT_PARAMS
        # The loop lets the auditor read each query's deeper pool, as it does the local one.
        self.reads_pool = getattr(local, "reads_pool", False)

    def audit(self, question: str, plan: Plan, sources: list[Source], *, can_retry: bool) -> AuditResult:
        audit = self.local.audit(question, plan, sources, can_retry=can_retry)
        if audit.verdict not in (Verdict.SUFFICIENT, Verdict.PARTIALLY_SUFFICIENT) or audit.conflicts:
            return audit
        ranked = self.local.rank_sentences(question, plan, sources)
        if len(ranked) != len(audit.facts):
            return audit
        shown = by_document(shown_candidates(audit, ranked, min(self.params.shown, MAX_SHOWN)), sources)
        weakest = min((f.sentences[0].score for f in audit.facts if f.sentences
                       and f.label in (SupportLabel.SUPPORTED, SupportLabel.PARTIAL)), default=1.0)
        if len(shown) < 2 and weakest >= self.params.none_below:
            # Nothing the model could choose would change the answer: no call.
            return audit
        try:
            out, usage = self.client.structured(chooser_messages(question, shown, sources), ChoiceOut)
        except LLMError as exc:
            log.warning("the model could not choose the answering sentences, the local choice stands: %s", exc)
            return audit.model_copy(update={"usage": exc.usage, "reason": _with_note(
                audit.reason, f"the model could not choose ({exc}); the local choice stands")})
        chosen = [n for n in out.sentences if n <= len(shown)]
        note = (f"the model chose sentence{'s' if len(chosen) > 1 else ''} {', '.join(map(str, chosen))} of the "
                f"{len(shown)} shown" if chosen else f"the model chose none of the {len(shown)} sentences shown (the local "
                f"best: P(answers) {max((s.answers for s in shown), default=0.0):.2f})")
        if len(chosen) < len(out.sentences):
            note += f" (ignored: {', '.join(str(n) for n in out.sentences if n > len(shown))}, not shown)"
        decided = chosen_audit(audit, shown, chosen, sources, self.params)
        return decided.model_copy(update={"usage": usage, "reason": _with_note(decided.reason, note)})


def _with_note(reason: str, note: str) -> str:
    return f"{reason}; {note}" if reason else note
