"""Writer mode (RunConfig.answer_by = "writer"): the local roles decide, the model only writes.

The local roles plan, retrieve, audit and choose the answer's sentences exactly as the `local`
backend does (agent.local.*: the same outcome, the same chosen sentences); a refusal, a premise
correction or a clarifying question is the local roles' own and costs no call. Only an ANSWER
or PARTIAL asks the model, once, to write a short fluent answer (1-3 sentences) from the
question and the 1-4 sentences the extractive answer is made of, numbered; each sentence cites
the numbers it rests on (`WriterOut`: terse, bounded), and the quotes are filled in by code.

Why: with the model auditing and choosing evidence, small models answered worse than the
extractive backend (issue #13, docs/llm.md "Is it the default?"); the local auditor chooses
better, and reads worse. So the choice stays local and the model does the wording.

Every model sentence goes through the verifier (agent.verify: support, form, relevance) with
the sentences written before it; the local gate holds by construction, since a sentence can
only cite sentences the local auditor chose. A sentence that fails, or cites nothing, gives way
to the extracts it cites, and every extract no kept sentence cites is added after the model's
sentences: the answer never holds fewer verified facts than the extractive one. A model that
cannot be reached (an LLMError) leaves the extractive answer, with a note saying so.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, Field

from agent import prompts
from agent.llm.candidates import Candidate
from agent.llm.config import LLMError
from agent.llm.drafts import draft_sentences
from agent.llm.stream import answer_preview
from agent.llm.wire import ClaimOut, _cut
from agent.local.text import term_set
from agent.types import AuditResult, Draft, DraftSentence, Outcome, Source, replaced_note
from agent.verify import CitationVerifier, missing_numbers, normalise

log = logging.getLogger(__name__)

# How many sentences the model may write (the extractive answer has at most 3, and 4 with a lead).
WRITER_SENTENCES = 3

WRITER_TASK = (
    "Answer the question in 1-3 short sentences, from the numbered evidence sentences only.\n"
    "- answer: start with the direct answer (the value, name or yes/no asked for), in plain words; "
    "do not copy whole sentences. Each sentence lists the numbers of the evidence sentences it rests "
    "on. Copy every number, unit and name exactly; add nothing they do not state."
)

# Numbers that point into the paper, not facts a reworded sentence must repeat: "[35, 37]", "(ref. 44)",
# "Table 5".
_FIGURE_REFS = re.compile(r"\[[\d,\s\u2013-]+\]|\((?:refs?\.)[^)]*\)|\b(?:Table|Figure|Fig\.|Section|Sec\.|Eq\.|Equation|Appendix)\s*[\w.]+")

# A Yes or No the extractive answer put before its first sentence (agent.local.generator).
_YESNO = re.compile(r"^(Yes|No): ")


def _between(low: int, high: int, item: Any = str) -> Any:
    """A string (or a list of `item`) of `low` to `high` characters (items): `minLength`/`maxLength`
    (`minItems`/`maxItems`) in the schema, which a grammar enforces; cut to `high` on parse."""
    kind = str if item is str else list[item]
    return Annotated[kind, BeforeValidator(_cut(high)), Field(min_length=low, max_length=high)]


class WrittenOut(ClaimOut):
    # Never empty: the evidence was chosen because it answers, so there is always something to
    # write (with an empty array allowed, the 1.5B model wrote `{"answer": []}` to 8 of 12 prompts
    # of the held-out devbench half, docs/benchmarks.md "LLM writer mode (stop 27)").
    text: _between(1, 240)
    sentences: _between(1, 3, int)


class WriterOut(BaseModel):
    # "answer" and "text": the shape agent.llm.stream reads while the reply streams.
    answer: _between(1, WRITER_SENTENCES, WrittenOut)


def writer_messages(question: str, extracts: Sequence[DraftSentence],
                    sources: Sequence[Source]) -> list[dict[str, str]]:
    """The shared system message, the task, the question and the extracts numbered 1..n,
    grouped under their documents in order."""
    groups: dict[int, list[tuple[int, str]]] = {}
    for n, s in enumerate(extracts, start=1):
        groups.setdefault(s.citations[0], []).append((n, s.quote))
    data = f"{prompts.question_block(question)}\n" + prompts.evidence_block(
        [(sources[m - 1], lines) for m, lines in groups.items()])
    return [dict(prompts.SYSTEM_MESSAGE), {"role": "user", "content": f"TASK\n{WRITER_TASK}\n\n{data}"}]


def _writable(draft: Draft, audit: AuditResult | None, sources: Sequence[Source]) -> bool:
    """An answer the model may reword: ANSWER or PARTIAL, every sentence a quote of one source,
    and no dispute between sources (reported as it is, never smoothed over)."""
    return (draft.outcome in (Outcome.ANSWER, Outcome.PARTIAL) and bool(draft.sentences)
            and not (audit is not None and audit.conflicts)
            and all(s.quote and len(s.citations) == 1 and 1 <= s.citations[0] <= len(sources)
                    for s in draft.sentences))


class LLMWriter:
    """The generator of writer mode: the extractive answer, reworded by the model (module doc)."""

    def __init__(self, client: Any, *, local: Any, embed: Any = None, verifier: CitationVerifier | None = None) -> None:
        self.client = client
        self.local = local
        self.embed = embed
        self.verifier = verifier or CitationVerifier(embed=embed)

    def generate(self, question: str, sources: list[Source], audit: AuditResult | None) -> Draft:
        draft = self.local.generate(question, sources, audit)
        if not _writable(draft, audit, sources):
            return draft
        extracts = list(draft.sentences)
        by_number = {n: Candidate(number=n, source=s.citations[0], text=s.quote, score=0.0)
                     for n, s in enumerate(extracts, start=1)}
        messages = writer_messages(question, extracts, sources)
        on_text = answer_preview(sources=sources)
        try:
            if on_text is None:
                out, usage = self.client.structured(messages, WriterOut)
            else:
                out, usage = self.client.structured(messages, WriterOut, on_text=on_text)
        except LLMError as exc:
            log.warning("the model could not write the answer, the extractive one stands: %s", exc)
            return draft.model_copy(update={"usage": exc.usage, "notes": [
                *draft.notes, f"the model could not write the answer ({exc}); the extracted sentences are shown"]})
        sentences, notes = written_answer(out.answer, extracts, by_number, sources, question=question,
                                          outcome=draft.outcome, verifier=self.verifier)
        return draft.model_copy(update={"sentences": sentences, "notes": [*draft.notes, *notes], "usage": usage})


def written_answer(claims: Sequence[ClaimOut], extracts: Sequence[DraftSentence], by_number: dict[int, Candidate],
                   sources: Sequence[Source], *, question: str, outcome: Outcome,
                   verifier: CitationVerifier) -> tuple[list[DraftSentence], list[str]]:
    """The model's sentences that the verifier keeps (checked with those before them), each failing
    one replaced by the extracts it cites, then every extract the kept sentences do not state; and a
    note per replaced or dropped sentence (the run page lists them under "Removed by verification").

    An extract is stated by the kept sentences citing it when they share a word with it that the
    question and the other extracts they cite lack, and hold every number it states, or
    some of them and no other sentence citing it failed: "TAS-B has a Hole@10 of 31.8%" states the
    sentence giving ANCE's and TAS-B's; "8 attention heads" does not state "dk = dv = 64" when the
    model's sentence about the 64 failed, nor does a sentence with none of its numbers."""
    out: list[DraftSentence] = []
    notes: list[str] = []
    said: dict[int, list[str]] = {}  # extract number -> the kept model sentences citing it
    along: dict[int, set[int]] = {}  # extract number -> the other extracts those sentences cite
    added: set[int] = set()  # extracts stated verbatim
    failed: set[int] = set()  # extracts a replaced sentence cited
    quote_of = {n: normalise(c.text) for n, c in by_number.items()}

    def stated(n: int) -> bool:
        if n in added:
            return True
        if n not in said:
            return False
        # A sentence citing [1][2] that says only what [1] says does not state [2]: it must share a
        # word with [2] that neither the question nor the other sentences it cites have.
        own = term_set(extracts[n - 1].quote) - term_set(question)
        for m in along.get(n, set()):
            own -= term_set(extracts[m - 1].quote)
        if own and not own & term_set(" ".join(said[n])):
            return False
        # The numbers it adds to the question's ("Hole@10" of the question is not a fact it states).
        quote = _FIGURE_REFS.sub(" ", extracts[n - 1].quote)
        numbers = missing_numbers(quote, question)
        missing = missing_numbers(quote, " ".join([question, *said[n]]))
        return not missing or (len(missing) < len(numbers) and n not in failed)

    for claim in claims:
        drafted = draft_sentences([claim], by_number)
        if not drafted:
            if claim.text.strip():
                notes.append(f"uncited sentence: {claim.text[:80]} (it cites no numbered sentence)")
            continue
        sentence = drafted[0]
        cites = [n for n, q in quote_of.items() if any(normalise(e.text) == q for e in sentence.evidence)]
        why = None
        if not out and _YESNO.match(extracts[0].text):
            sentence, why = _with_yesno(sentence, extracts[0])
        elif _opening(sentence.text) in ("yes", "no"):
            # The local roles read no Yes or No off this evidence (agent.local.answer_type.polarity):
            # the model's is a guess the verifier cannot check (a bare "Yes" names nothing to check).
            why = f"says {_opening(sentence.text)}, where the evidence the answer rests on decides neither"
        why = why or _dropped(sentence, out, sources, question=question, outcome=outcome, verifier=verifier)
        if why is None:
            out.append(sentence)
            for n in cites:
                said.setdefault(n, []).append(sentence.text)
                along.setdefault(n, set()).update(m for m in cites if m != n)
            continue
        notes.append(replaced_note(sentence.text, why))
        failed.update(cites)
        for n in cites:
            if not stated(n):
                added.add(n)
                out.append(extracts[n - 1])
    # Nothing of the extractive answer is lost: what the kept sentences do not state is stated as extracted.
    out.extend(e for n, e in enumerate(extracts, start=1) if not stated(n))
    return out, notes


def _with_yesno(sentence: DraftSentence, first: DraftSentence) -> tuple[DraftSentence, str | None]:
    """The model's first sentence with the extractive answer's Yes or No (agent.local.generator
    reads it off the evidence): put first when the sentence opens with neither; a sentence that
    opens with the other word contradicts it and goes (the reason)."""
    word = _YESNO.match(first.text).group(1)  # type: ignore[union-attr]
    said = _opening(sentence.text)
    if said == word.lower():
        return sentence, None
    if said in ("yes", "no"):
        return sentence, f"says {said}, where the evidence the answer rests on says {word.lower()}"
    return sentence.model_copy(update={"text": f"{word}: {sentence.text}"}), None


def _opening(text: str) -> str:
    """The first word, lower-cased."""
    opening = re.match(r"\W*(\w+)", text)
    return opening.group(1).lower() if opening else ""


def _dropped(sentence: DraftSentence, earlier: Sequence[DraftSentence], sources: Sequence[Source], *, question: str,
             outcome: Outcome, verifier: CitationVerifier) -> str | None:
    """None when the verifier keeps `sentence` after `earlier`, else why it goes."""
    def kept(sentences: list[DraftSentence]) -> tuple[int, list[str]]:
        checked = verifier.verify(Draft(outcome=outcome, sentences=sentences), list(sources), question=question)
        return sum(1 for s in checked.sentences if s.citations), checked.dropped

    before, _ = kept(list(earlier)) if earlier else (0, [])
    after, dropped = kept([*earlier, sentence])
    if after > before:
        return None
    mine = [d for d in dropped if sentence.text[:40] in d]
    return mine[0] if mine else (dropped[-1] if dropped else "not supported")
