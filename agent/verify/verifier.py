"""CitationVerifier: the deterministic verifier every configuration uses (rules: agent.verify)."""

from __future__ import annotations

from agent.local.text import content_terms, coverage, term_set
from agent.types import Answer, CitationRef, Draft, DraftSentence, Outcome, QuoteRef, Source
from agent.verify.form import form_check
from agent.verify.joining import DocumentVocabulary, document_of, line_break_joiner
from agent.verify.quotes import clean_quote, eligibility, find_quote, neutralise_markers, normalise
from agent.verify.relevance import RELEVANCE_MIN, relevance
from agent.verify.supported import SUPPORT_MIN, EmbedFn, support
from knowledge.text.hyphens import line_broken

# Outcomes whose framing sentences (what was searched, which paper is meant) state no fact.
_UNCITED_OK = (Outcome.REFUSAL, Outcome.CLARIFY)


def _best_sentence(text: str, source: Source) -> str:
    """The chunk sentence that shares most key terms with `text` (a quote-less citation)."""
    from agent.local.text import split_sentences

    terms = content_terms(text)
    best, best_cov = "", 0.0
    for s in split_sentences(source.text):
        cov = coverage(terms, term_set(s))
        if cov > best_cov and not eligibility(s):
            best, best_cov = s, cov
    return best


def _asks_whole_papers(question: str) -> bool:
    from agent.local.planner import clarification

    return clarification(" ".join(question.split())) == "whole_document"


def _joined(sentences: list[DraftSentence], citations: list[CitationRef], sources: list[Source],
            document_vocabulary: DocumentVocabulary | None = None) -> tuple[list[DraftSentence], list[CitationRef]]:
    """The answer as a reader sees it: words a line break cut in the stored text ("Chat- GPT",
    "regres- sion") written whole, as the cited document (then the other retrieved chunks)
    writes them (agent.verify.joining.line_break_joiner: the cited document's whole text when
    `document_vocabulary` reads it). Done after every check, so each citation was verified
    against the stored text; `quote_start` stays an offset into it, and the quote locator
    (quote_span) finds the joined quote there, for the highlight and the API."""
    if not any(line_broken(t) for s in sentences for t in (s.text, s.quote)) and not any(
            line_broken(c.quote) for c in citations):
        return sentences, citations
    document = {source.chunk_id: document_of(source) for source in sources}
    joiner = line_break_joiner(sources, document_vocabulary)

    def join(text: str, chunk_ids: list[int]) -> str:
        return joiner(text, [document[c] for c in chunk_ids if c in document])

    chunk_of = {c.marker: c.chunk_id for c in citations}
    citations = [c.model_copy(update={"quote": join(c.quote, [c.chunk_id])}) for c in citations]
    out = []
    for s in sentences:
        cited = [chunk_of[m] for m in s.citations if m in chunk_of]
        out.append(s.model_copy(update={"text": join(s.text, cited), "quote": join(s.quote, cited)}))
    return out, citations


class CitationVerifier:
    """The deterministic verifier used by every configuration."""

    def __init__(self, *, embed: EmbedFn | None = None, support_min: float = SUPPORT_MIN,
                 relevance_min: float = RELEVANCE_MIN) -> None:
        self._embed = embed
        self.support_min = support_min
        self.relevance_min = relevance_min

    def _spans(self, sentence: DraftSentence) -> list[QuoteRef]:
        if sentence.evidence:
            return [QuoteRef(source=e.source, text=clean_quote(e.text)) for e in sentence.evidence]
        return [QuoteRef(source=n, text=clean_quote(sentence.quote)) for n in dict.fromkeys(sentence.citations)]

    def verify(self, draft: Draft, sources: list[Source], *, question: str = "",
               vocabulary: DocumentVocabulary | None = None) -> Answer:
        """The draft with every sentence its citations do not support dropped (agent.verify);
        `vocabulary` gives a cited document's whole vocabulary for joining line-break hyphens."""
        kept: list[DraftSentence] = []
        citations: list[CitationRef] = []
        # One citation per (chunk, quote): a reader who clicks [n] sees the very sentence
        # that backs the claim, even when two claims rest on one chunk.
        by_span: dict[tuple[int, str], CitationRef] = {}
        dropped: list[str] = list(draft.notes)
        asserting = draft.outcome not in _UNCITED_OK
        # A request to summarise or compare whole papers names nothing narrower than the papers,
        # and its sentences cite only them (agent.llm.whole): relevance to it means nothing.
        whole_papers = bool(question) and _asks_whole_papers(question)
        for sentence in draft.sentences:
            if not sentence.citations and not sentence.evidence:
                if draft.outcome in _UNCITED_OK:
                    kept.append(sentence.model_copy(update={"text": neutralise_markers(sentence.text)}))
                else:
                    dropped.append(f"uncited sentence: {sentence.text[:80]}")
                continue
            if asserting:
                # Sentences that assert nothing (agent.verify.form): a question, the question
                # restated, a repeat, another script, only numbers and symbols.
                spans = self._spans(sentence)
                text, why, notes = form_check(
                    sentence.text, question=question, quotes=[q.text for q in spans],
                    earlier=[k.text for k in kept],
                    passages=" ".join(sources[q.source - 1].text for q in spans if 1 <= q.source <= len(sources)))
                dropped.extend(notes)
                if why:
                    dropped.append(f"asserts nothing: {sentence.text[:80]} ({why})")
                    continue
                if text != sentence.text:
                    sentence = sentence.model_copy(update={"text": text})
            verified: list[tuple[int, Source, str, int]] = []  # (n, source, quote, start)
            for span in self._spans(sentence):
                n = span.source
                if not 1 <= n <= len(sources):
                    dropped.append(f"marker [{n}] points at no retrieved chunk")
                    continue
                source = sources[n - 1]
                quote = span.text or _best_sentence(sentence.text, source)
                start = find_quote(quote, source.text) if quote else -1
                if start < 0:
                    dropped.append(f"[{n}] does not support: {sentence.text[:80]} (quote not in the chunk)")
                    continue
                why = eligibility(quote, source.text)
                if why:
                    dropped.append(f"[{n}] does not support: {sentence.text[:80]} (its quote is {why})")
                    continue
                verified.append((n, source, quote, start))
            if verified and asserting:
                cited = {id(s): s for _, s, _, _ in verified}.values()
                result = support(
                    sentence.text, [q for _, _, q, _ in verified],
                    # A paper's short name (E5) is as much its context as its title.
                    context=" ".join(f"{s.document_title} {s.document_name} {s.section}" for s in cited),
                    question=question, chunk=" ".join(s.text for s in cited),
                    allow_question_numbers=draft.outcome == Outcome.FALSE_PREMISE,
                    embed=self._embed, support_min=self.support_min,
                )
                if not result.ok:
                    dropped.append(f"unsupported: {sentence.text[:80]} ({result.reason})")
                    verified = []
                elif question and draft.outcome != Outcome.FALSE_PREMISE and not whole_papers:
                    # Supported, but is it about what was asked? (agent.verify.relevance; a premise
                    # correction speaks to the premise, which its own checks tie to the question.)
                    score = relevance(question, [q for _, _, q, _ in verified], embed=self._embed)
                    if score < self.relevance_min:
                        dropped.append(f"off the question: {sentence.text[:80]} (relevance {score:.2f} below "
                                       f"{self.relevance_min:.2f})")
                        verified = []
            new_markers: list[int] = []
            for _n, source, quote, start in verified:
                key = (source.chunk_id, normalise(quote))
                ref = by_span.get(key)
                if ref is None:
                    ref = CitationRef(marker=len(citations) + 1, chunk_id=source.chunk_id,
                                      quote=quote, quote_start=start, verified=True)
                    by_span[key] = ref
                    citations.append(ref)
                if ref.marker not in new_markers:
                    new_markers.append(ref.marker)
            if new_markers:
                kept.append(DraftSentence(
                    text=neutralise_markers(sentence.text), citations=new_markers, quote=verified[0][2],
                ))
            elif draft.outcome in _UNCITED_OK:
                kept.append(DraftSentence(text=neutralise_markers(sentence.text)))
            else:
                dropped.append(f"sentence without a supporting citation: {sentence.text[:80]}")
        outcome = draft.outcome
        if outcome not in _UNCITED_OK and not any(s.citations for s in kept):
            # Nothing cited survived: an answer without evidence is not an answer.
            outcome = Outcome.REFUSAL
            kept = [DraftSentence(text="No sentence of the draft answer was supported by the retrieved passages.")]
            citations = []
        kept, citations = _joined(kept, citations, sources, vocabulary)
        return Answer(
            outcome=outcome, sentences=kept, citations=citations,
            missing_note=draft.missing_note, suggestions=draft.suggestions,
            suggestion_documents=draft.suggestion_documents, dropped=dropped,
        )
