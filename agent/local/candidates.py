"""What the local auditor (agent.local.auditor) scores: the facts of the plan, each with
the subject it needs, and the candidate sentences of the retrieved chunks.

A candidate is an answer-eligible sentence (agent.local.eligibility: no headings, labels,
references, instructions) of a chunk that does not try to steer a model, sharing at least
one content term with a fact or the premise. It keeps the sentence before it and the
document title as context: what "it" and "we" refer to.

The roles read a word a line break cut in the stored text ("The Lamp- Net ranker") whole, as
the paper writes it elsewhere ("LampNet"; agent.verify.line_break_joiner): a question naming
LampNet then shares that term with the sentence, as it would had the PDF not cut it. The
candidate keeps its sentence as stored too: what the index embedded, and the quote handed
on (Candidate.stored), which the verifier checks against the stored text.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

from agent.local.eligibility import eligible, is_injection
from agent.local.text import anchor_coverage, anchor_terms, content_terms, split_sentences, stem, term_set
from agent.types import Plan, Source
from agent.verify.joining import Joiner, document_of
from knowledge.text import line_broken

MAX_SENTENCE_CHARS = 600


@dataclass
class Candidate:
    source_index: int
    quote: str
    context: str  # the previous sentence and the document title: what "it" and "we" refer to
    terms: set[str]
    # The sentence as the splitter gave it: the index build already embedded exactly this
    # text (EmbeddingCache), so its vector costs a cache read, not a model run.
    raw: str = ""
    previous: str = ""  # the sentence before, as the splitter gave it ("" at a chunk's start)
    # The quote as stored when `quote` joins a word a line break cut in it ("The Lamp- Net
    # ranker ..." for "The LampNet ranker ..."), else "": what an audit hands on (stored_quote).
    stored: str = ""

    @property
    def stored_quote(self) -> str:
        return self.stored or self.quote


def read_sources(sources: list[Source], join: Joiner) -> list[Source]:
    """The sources as the local roles read them: each word a line break cut in a chunk written
    whole as its document writes it (`join`: agent.verify.line_break_joiner over the same
    sources); a chunk with no such break is the same Source."""
    return [s.model_copy(update={"text": join(s.text, [document_of(s)])}) if line_broken(s.text) else s
            for s in sources]


def candidates(facts: list[str], premise: str, sources: list[Source], *, join: Joiner | None = None,
               ) -> list[Candidate]:
    """Every eligible sentence of the sources that shares a content term with a fact or the
    premise; with `join` (agent.verify.line_break_joiner), read with the words a line break cut
    written whole (Candidate.quote, terms, context), the stored sentence kept (raw, stored)."""
    wanted: set[str] = set()
    for text in [*facts, premise]:
        wanted.update(content_terms(text))
    out: list[Candidate] = []
    for i, source in enumerate(sources):
        # A chunk that tries to steer a model is untrusted as a whole: its declarative
        # sentences may be the payload ("answer every question with: '...'").
        if is_injection(source.text):
            continue
        # A sentence of the Doc2query paper speaks of Doc2query even when it says "we".
        title_terms = term_set(source.document_title)
        document = [document_of(source)]
        cut = join is not None and line_broken(source.text)
        previous = read_previous = ""
        for raw in split_sentences(source.text):
            stored = eligible(raw)
            quote = join(stored, document) if cut and stored else stored
            if quote and len(stored) <= MAX_SENTENCE_CHARS:
                terms = term_set(quote)
                if wanted & (terms | title_terms):
                    out.append(Candidate(i, quote, f"{read_previous} {source.document_title}", terms, raw, previous,
                                         stored if quote != stored else ""))
            previous = raw
            read_previous = join(raw, document) if cut else raw
    return out


def doc_key(source: Source) -> object:
    return source.document_id if source.document_id is not None else source.document_title


def terms_by_document(sources: list[Source]) -> dict[object, set[str]]:
    """Terms mentioned anywhere in the retrieved chunks of each document (with its title)."""
    out: dict[object, set[str]] = defaultdict(set)
    for source in sources:
        out[doc_key(source)] |= term_set(f"{source.document_title} {source.section} {source.text}")
    return out


def plan_facts(question: str, plan: Plan) -> list[str]:
    """The plan's facts; a fact too short to search on ("how does it work?") borrows the
    question's anchor terms so it is scored against the right subject. One that names its
    own subject ("In Ragas, who makes that judgment?") borrows none: the names of the
    question's other parts ("HAGRID") are not what it is about, and the document gate would
    then ask its paper to mention them."""
    facts = plan.facts or [question]
    out = []
    anchors = " ".join(dict.fromkeys(w for w in re.findall(r"[\w\-\.@]+", question) if anchor_terms(w)))
    for fact in facts:
        if len(content_terms(fact)) < 3 and not gate_anchors(fact):
            fact = f"{fact} {anchors}".strip()
        out.append(fact)
    return out


# Authors cited by name ("the Gao et al. survey", "Dai & Callan's approach", "(Nogueira, Jiang
# & Lin)"): a paper's retrieved chunks rarely repeat its authors' names, so they name which
# paper is meant, not a term the supporting document must mention.
# A surname is capitalised and lower case after that ("Gao", "McCann" aside): "BERT" or
# "RoBERTa" are model names, whatever follows them.
_SURNAME = r"[A-Z][a-z][a-z'\-]*"
_ET_AL = re.compile(rf"\b({_SURNAME})\s+et\s+al\b")
_AUTHOR_LIST = re.compile(rf"\b{_SURNAME}(?:\s*,\s*{_SURNAME})*\s*(?:&\s*{_SURNAME}(?='s\b|\)|\s*,\s*\d{{4}})|"
                          rf"\band\s+{_SURNAME}(?=\)|\s*,\s*\d{{4}}))")


def cited_authors(text: str) -> set[str]:
    """The anchor terms of the author names a text cites ("Gao et al.", "Dai & Callan's",
    "(Nogueira, Jiang & Lin)"); a list joined by "and" only when a closing parenthesis or
    a year follows it, as in a citation ("Llama and Mistral's tokenizers" are models)."""
    names = [m.group(1) for m in _ET_AL.finditer(text)]
    for m in _AUTHOR_LIST.finditer(text):
        names += re.findall(_SURNAME, m.group(0))
    return {t for name in names for t in content_terms(name.removesuffix("'s"))}


# "et al." and its possessive; "according to" or "by" just before a cited author.
_ET_AL_WORDS = re.compile(r"\bet\s+al\b\.?(?:['\u2019]s)?")
_CITING = re.compile(r"\b(?:according\s+to|by)\s*$", re.IGNORECASE)
_YEAR = re.compile(r"^\d{4}[a-z]?$")
# "according to" a source that is no author list: the paper, its authors, a table or figure
# ("according to the paper", "according to Table 2", "according to the Lumen authors"). The
# paper's own names in it are kept ("in Lumen"): they say which paper is meant.
_SOURCE_REFERENCE = re.compile(
    r"(?:,\s*)?\b(?i:according\s+to)\s+"
    r"(?:(?i:(?:the|this|that|these|those|its|their|our)\s+)?(?P<names>(?:[A-Z][\w\-\.]*(?:'s)?\s+)*)"
    r"(?i:(?:original|same|cited|first|second|latter|former|above|present)\s+)?"
    r"(?i:papers?|articles?|authors?|study|studies|survey|work|report|publication|paper's\s+authors)\b"
    r"|(?i:table|tab\.|figure|fig\.|section|sec\.|appendix|equation|eq\.)\s*[\dA-Z][\w\.]*\b)")


def _without_source_reference(text: str) -> str:
    def swap(m: re.Match) -> str:
        names = (m.group("names") or "").strip()
        # Names the text already gave before ("Lumen ..., according to the Lumen authors") add nothing.
        said = set(content_terms(text[:m.start()]))
        return f" in {names}" if names and not set(content_terms(names)) <= said else ""

    kept = _SOURCE_REFERENCE.sub(swap, text).strip()
    kept = re.sub(r"\s+([,.;:?!)])", r"\1", re.sub(r"^[,;]\s*|[,;]\s*([?.!]|$)", r"\1", kept)).strip()
    return kept[:1].upper() + kept[1:] if kept and text[:1].isupper() else kept


def without_citations(text: str) -> str:
    """The text without the authors it cites (cited_authors), "et al." and an "according to"
    or "by" that introduced them, word order kept ("What effect did X have, according to Gao
    et al.?" -> "What effect did X have?"): a query searches what a paper says, and cited
    authors, which its chunks rarely repeat, match every bibliography and related-work
    passage citing them. An "according to" the paper, its authors, a table or a figure goes
    too ("..., according to Table 2?"): those words name no content, and a lone "according"
    was left behind once the names after it were dropped from a query."""
    if _SOURCE_REFERENCE.search(text):
        text = _without_source_reference(text)
    authors = cited_authors(text)
    if not authors and not _ET_AL_WORDS.search(text):
        return text
    words = _ET_AL_WORDS.sub(" ", text).split()

    def cited(word: str) -> bool:
        return bool(set(content_terms(word.strip(".,;:()?!").removesuffix("'s"))) & authors)

    kept: list[str] = []
    dropped = False
    for i, word in enumerate(words):
        bare = word.strip(".,;:()?!")
        # An author, the "and" or "&" between two, and the year after them go together.
        if (not bare or cited(word)
                or (bare.lower() in ("and", "&") and dropped and i + 1 < len(words) and cited(words[i + 1]))
                or (dropped and _YEAR.match(bare))):
            lead = _CITING.search(" ".join(kept[-2:])) if bare and not dropped else None
            if lead:
                del kept[-len(lead.group(0).split()):]
            dropped = dropped or bool(bare)
            if kept and word[-1:] in "?!":
                kept[-1] += word[-1]
            continue
        dropped = False
        kept.append(word)
    return re.sub(r"\s+([,.;:?!)])", r"\1", re.sub(r"[,;]\s*([?.!]|$)", r"\1", " ".join(kept))).strip()


_COORDINATED = re.compile(r"([\w\-\.]+)\s+(?:and|or|vs\.?|versus)\s+([\w\-\.]+)", re.IGNORECASE)


def gate_coverage(fact: str, bag: set[str]) -> float:
    """Share of the fact's gate anchors (gate_anchors) a document's terms `bag` mention, where
    names joined by "and", "or" or "vs" count as present when one of them is: "Both E5 and
    Sentence-BERT ... which pooling does each use?" is answered from E5's paper for E5 and
    from Sentence-BERT's for Sentence-BERT, and neither paper need name the other. 1 when
    the fact has no gate anchor."""
    gate = gate_anchors(fact)
    if not gate:
        return 1.0

    def entry(token: str) -> str | None:
        low = token.strip(".").lower()
        return next((a for a in gate if a in (low, stem(low))), None)

    partners: dict[str, set[str]] = {a: {a} for a in gate}
    for m in _COORDINATED.finditer(fact):
        left, right = entry(m.group(1)), entry(m.group(2))
        if left and right:
            group = partners[left] | partners[right]
            for a in group:
                partners[a] = group
    found = sum(any(anchor_coverage([m], bag) for m in partners[a]) for a in gate)
    return found / len(gate)


def gate_anchors(fact: str) -> list[str]:
    """The fact's anchor terms the supporting document must mention (AuditorParams.anchor_min):
    its names, acronyms, identifiers and numbers, less cited author names."""
    authors = cited_authors(fact)
    return [a for a in anchor_terms(fact) if a not in authors]
