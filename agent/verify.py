"""Citation verification: support, not presence.

Rules (DESIGN.md, step 5), applied by `CitationVerifier` to every draft, whatever wrote it:
- a marker that points outside the sources handed to the generator is dropped;
- a quote counts only if it occurs in the cited chunk's text, compared case- and
  whitespace-insensitively (hyphens at line breaks are tolerated: "perfor- mance"), and
  only if it is answer-eligible evidence (`eligibility`): a sentence-level span of prose,
  never a section heading ("5.4 Regularization"), a caption label ("Table 3:") or a
  fragment of a few words;
- a sentence of an answer must be SUPPORTED by its verified quotes (`support`):
  1. every number it states is in the quotes, up to formatting ("28.40" = "28.4",
     "1,000" = "1000", "300K" = "300000", "six" = "6") and one unit conversion
     (a percentage p% = p/100);
  2. every name or identifier it states (acronyms, mixed-case or digit-bearing tokens,
     capitalised words inside the sentence) is in the quotes or in the cited document's
     title or section; a name the question itself uses is also accepted when the cited
     chunk mentions it (the subject of "we" in a paper);
  3. unless the sentence is copied from its quotes, its support score (agent.local.scoring:
     key-term coverage + embedding similarity, against the quotes and the document title)
     clears SUPPORT_MIN, calibrated by bench/calibrate_verifier.py on SciFact.
  A sentence that fails is dropped, with the reason in `Answer.dropped`;
- a refusal's uncited framing sentences are kept (they state what was searched); its
  "closest evidence" is only checked for presence and eligibility: it asserts nothing;
- markers are taken from the draft's structured citations only, never from text: a "[3]"
  inside chunk text (papers cite their own references that way) is neutralised.
"""

from __future__ import annotations

import bisect
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

import numpy as np

from agent.local.text import content_terms, coverage, stem, term_set
from agent.types import Answer, CitationRef, Draft, DraftSentence, Outcome, QuoteRef, Source

_MARKER = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")
# Calibrated by bench/calibrate_verifier.py on SciFact train claims (calibration split:
# claim id % 5 in 0,1,2; best balanced accuracy, SUPPORT vs NEI, with at most 20% of NEI
# accepted). Held out (id % 5 in 3,4; docs/benchmarks.md): 69% of SUPPORT and 16% of NEI
# claims clear it on the score alone, 52% and 7% with the number and name checks.
SUPPORT_MIN = 0.53
# Weight of key-term coverage in the support score (the rest is embedding similarity);
# the local auditor's calibrated weight (agent.local.scoring.W_COVERAGE).
W_COVERAGE = 0.5
# An answer-eligible quote has at least this many words of prose ...
MIN_QUOTE_WORDS = 6
# ... or is a short complete sentence: at least this many words, a capital first letter, a
# full stop, a function word and a word in lower case that is not one ("We used
# warmup_steps = 4000.", "The default is MEAN."). Headings, labels and cut-off pieces miss one.
MIN_SHORT_SENTENCE_WORDS = 3

EmbedFn = Callable[[Sequence[str]], np.ndarray]


# Outcomes whose framing sentences (what was searched, which paper is meant) state no fact.
_UNCITED_OK = (Outcome.REFUSAL, Outcome.CLARIFY)


# ---------------------------------------------------------------------------
# Finding quotes
# ---------------------------------------------------------------------------


def _normalise_with_map(text: str) -> tuple[str, list[int]]:
    """Lower-cased text with whitespace runs collapsed, and each output char's input offset."""
    out: list[str] = []
    offsets: list[int] = []
    prev_space = True
    for i, ch in enumerate(text):
        if ch.isspace():
            if not prev_space:
                out.append(" ")
                offsets.append(i)
            prev_space = True
            continue
        out.append(ch.lower())
        offsets.append(i)
        prev_space = False
    if out and out[-1] == " ":
        out.pop()
        offsets.pop()
    return "".join(out), offsets


def normalise(text: str) -> str:
    return _normalise_with_map(text)[0]


# A hyphen at a line break ("perfor- mance" once whitespace is collapsed).
_BREAK_HYPHEN = re.compile(r"(?<=[a-z])- (?=[a-z])")


def _searchable_forms(text: str) -> Iterator[tuple[str, list[int]]]:
    """The normalised text with its offset map, then (lazily: only a miss needs it) the same
    without line-break hyphens."""
    hay, offsets = _normalise_with_map(text)
    yield hay, offsets
    keep = [True] * len(hay)
    for match in _BREAK_HYPHEN.finditer(hay):
        keep[match.start()] = keep[match.start() + 1] = False
    yield "".join(c for c, k in zip(hay, keep) if k), [o for o, k in zip(offsets, keep) if k]


def quote_span(quote: str, text: str, hint: int = -1) -> tuple[int, int] | None:
    """Where `quote` sits in `text` as (start, end) offsets into `text`, or None: the one quote
    locator of the portal (the citation panel's highlight, the API's quote_start/quote_end).

    Compared as find_quote compares: case- and whitespace-insensitively, a line-break hyphen
    tolerated. `hint` is an offset recorded earlier (Citation.quote_start): the occurrence
    that starts there wins, so a quote that occurs twice marks the one that was audited,
    and a stale hint falls back to the first occurrence rather than marking wrong words.
    """
    q = normalise(quote)
    if not q:
        return None
    for hay, offsets in _searchable_forms(text):
        at = bisect.bisect_left(offsets, hint) if hint >= 0 else len(hay)
        pos = at if at < len(hay) and offsets[at] == hint and hay.startswith(q, at) else hay.find(q)
        if pos >= 0:
            return offsets[pos], offsets[pos + len(q) - 1] + 1
    return None


def find_quote(quote: str, text: str) -> int:
    """Offset of `quote` in `text` (case/whitespace-insensitive), or -1 if it is not there."""
    span = quote_span(quote, text)
    return span[0] if span else -1


_PROMPT_TAG = re.compile(r"</?(?:document|documents|evidence|question)\b[^>]*>", re.IGNORECASE)


def clean_quote(quote: str) -> str:
    """A model's quote without the prompt's own markup (small models copy the opening
    `<document id="3" title=...>` tag along with the sentence) or wrapping quotation marks."""
    text = _PROMPT_TAG.sub(" ", quote)
    text = re.sub(r"\s+", " ", text).strip()
    if len(text) > 2 and text[0] in "\"'“" and text[-1] in "\"'”":
        text = text[1:-1].strip()
    return text


def strip_markers(text: str) -> tuple[str, list[int]]:
    """Split an LLM sentence "... [1][3]" into its text and its markers."""
    markers: list[int] = []
    for group in _MARKER.findall(text):
        markers.extend(int(n) for n in group.split(","))
    clean = _MARKER.sub("", text)
    return re.sub(r"\s+([.,;:])", r"\1", re.sub(r"\s+", " ", clean)).strip(), markers


def neutralise_markers(text: str) -> str:
    """Chunk text may contain "[12]" reference markers; never let them read as citations."""
    return _MARKER.sub(lambda m: "(ref. " + m.group(1) + ")", text)


# ---------------------------------------------------------------------------
# Answer-eligible evidence
# ---------------------------------------------------------------------------

_SECTION_NUMBER = re.compile(r"^\s*(?:[A-Z]|\d+)(?:\.\d+)*\.?\s+(?=[A-Z])")
_CAPTION_LABEL = re.compile(r"^\s*(?:fig(?:ure)?|table|tab|algorithm|listing|eq(?:uation)?)\.?\s*\d+[a-z]?\s*[:.]?",
                            re.IGNORECASE)
_FUNCTION_WORDS = frozenset([
    "the", "a", "an", "of", "to", "in", "on", "at", "by", "for", "with", "from", "as", "and", "or", "but",
    "is", "are", "was", "were", "be", "been", "has", "have", "had", "we", "our", "it", "its", "this", "that",
    "these", "those", "which", "than", "not", "no", "can", "into", "each", "all", "both",
])
_WORDISH = re.compile(r"[A-Za-z][A-Za-z\-']+")


def eligibility(quote: str) -> str:
    """"" when the quote is answer-eligible evidence, else why not (heading, caption
    label, fragment, table residue, question)."""
    text = quote.strip()
    tokens = text.split()
    wordy = [t for t in tokens if _WORDISH.search(t) and sum(c.isalpha() for c in t) >= 2]
    if _CAPTION_LABEL.match(text) and len(tokens) <= 8:
        return "a caption label"
    if _SECTION_NUMBER.match(text) and len(tokens) <= 8 and not re.search(r"[.!?]$", text):
        return "a section heading"
    function_words = sum(1 for t in tokens if t.lower().strip(",.;:()") in _FUNCTION_WORDS)
    short = len(wordy) < MIN_QUOTE_WORDS
    # A run-in heading ("Training Data and Batching.") capitalises every word but the small ones.
    lower_content = any(t[:1].islower() and t.lower().strip(",.;:()") not in _FUNCTION_WORDS for t in wordy)
    complete = text[:1].isupper() and text.endswith((".", "!")) and function_words >= 1 and lower_content
    if short and not (complete and len(wordy) >= MIN_SHORT_SENTENCE_WORDS):
        return "a fragment, not a sentence"
    if len(wordy) < 0.5 * len(tokens) or function_words < (1 if short else 2):
        # "big 6 1024 4096 16 0.3 300K 4.33 26.4 213", "(2014) [37] semi-supervised 92.1
        # Transformer (4 layers)": table rows, whose columns the quote does not name. Prose
        # has function words; rows and labels have almost none.
        return "table or figure residue, not prose"
    if text.endswith("?"):
        return "a question, which states no fact"
    return ""


# ---------------------------------------------------------------------------
# What a sentence asserts: numbers and names
# ---------------------------------------------------------------------------

_NUM = re.compile(
    r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?\s?(%|percent\b|[kKMB]\b)?"
)
_SPELLED = {w: i for i, w in enumerate(
    ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"])}
_SCALE = {"k": Decimal(1000), "K": Decimal(1000), "M": Decimal(10) ** 6, "B": Decimal(10) ** 9}


@dataclass(frozen=True)
class Quantity:
    value: Decimal
    percent: bool
    text: str


def quantities(text: str, *, spelled: bool = True) -> list[Quantity]:
    """The numbers a text states, normalised ("1,000" = "1000", "28.40" = "28.4")."""
    out: list[Quantity] = []
    for m in _NUM.finditer(text):
        whole, frac, unit = m.group(1), m.group(2) or "", m.group(3) or ""
        try:
            value = Decimal(whole.replace(",", "") + frac)
        except InvalidOperation:
            continue
        if unit in _SCALE:
            value *= _SCALE[unit]
        out.append(Quantity(value.normalize(), unit in ("%", "percent"), m.group(0).strip()))
    if spelled:
        for w in re.findall(r"[A-Za-z]+", text):
            if w.lower() in _SPELLED and w.lower() not in ("one", "zero"):
                # "one" is a pronoun as often as a number ("the one that...").
                out.append(Quantity(Decimal(_SPELLED[w.lower()]), False, w))
    return out


def _same_quantity(a: Quantity, b: Quantity) -> bool:
    if a.value == b.value and a.percent == b.percent:
        return True
    if a.value == b.value:
        return True  # "25%" and "25 percent points", or a bare "25" against "25%"
    # One stated unit conversion: a percentage and its fraction (10% = 0.1).
    if a.percent and not b.percent:
        return (a.value / 100).normalize() == b.value
    if b.percent and not a.percent:
        return (b.value / 100).normalize() == a.value
    return False


def missing_numbers(sentence: str, evidence: str, *, allowed: str = "") -> list[str]:
    """Numbers the sentence states that neither the evidence nor `allowed` holds."""
    have = quantities(evidence) + quantities(allowed)
    return [q.text for q in quantities(sentence) if not any(_same_quantity(q, h) for h in have)]


_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-_/.]*[A-Za-z0-9]|[A-Za-z0-9]")
# Capitalised words that name nothing (sentence openers, connectives written in title case).
_NOT_NAMES = frozenset(
    ["i", "a", "an", "the", "this", "that", "these", "those", "it", "its", "they", "their", "we", "our", "in", "on", "at", "for", "of", "by", "with", "from", "to", "as", "and", "or", "but", "both", "each", "however", "moreover", "thus", "therefore", "while", "when", "where", "which", "what", "who", "how", "table", "figure", "section", "appendix", "eq", "equation"]
)


def names(text: str) -> list[str]:
    """Names and identifiers the text states: acronyms and mixed-case or digit-bearing tokens
    ("BLEU", "SBERT", "GPT-4", "d_model"), and capitalised words after the first word."""
    out: dict[str, None] = {}
    tokens = _TOKEN.findall(text)
    for i, raw in enumerate(tokens):
        token = raw.strip(".-/")
        if not token or token.lower() in _NOT_NAMES or token.isdigit():
            continue
        has_alpha = any(c.isalpha() for c in token)
        identifier = has_alpha and (any(c.isdigit() for c in token) or "_" in token
                                    or any(c.isupper() for c in token[1:]))
        capitalised = i > 0 and token[0].isupper() and len(token) > 2
        if identifier or capitalised:
            out.setdefault(token, None)
    return list(out)


def _name_forms(name: str) -> set[str]:
    low = name.lower()
    forms = {low, low.replace("_", ""), low.replace("-", ""), stem(low)}
    return forms


def _text_forms(text: str) -> set[str]:
    bag: set[str] = set()
    for raw in _TOKEN.findall(text):
        token = raw.strip(".-/").lower()
        if not token:
            continue
        bag.update({token, token.replace("_", ""), token.replace("-", ""), stem(token)})
        for part in re.split(r"[-_/]", token):
            if part:
                bag.update({part, stem(part)})
    return bag


def missing_names(sentence: str, context: str, *, question: str = "", chunk: str = "") -> list[str]:
    """Names the sentence states that its evidence context does not hold.

    A name of the question counts when the cited chunk mentions it too: the paper's
    "we" or "our model" is the subject the question asked about.
    """
    bag = _text_forms(context)
    asked = _text_forms(question) & _text_forms(chunk) if question else set()
    missing = []
    for name in names(sentence):
        forms = _name_forms(name)
        if forms & bag or forms & asked:
            continue
        missing.append(name)
    return missing


# ---------------------------------------------------------------------------
# The support check
# ---------------------------------------------------------------------------


_embed_lock = threading.Lock()
_default_embed: EmbedFn | None = None


def default_embed() -> EmbedFn:
    """The local sentence embedder (no database: the verifier embeds a handful of texts)."""
    global _default_embed
    with _embed_lock:
        if _default_embed is None:
            from agent.local.embed import cached
            from knowledge.embeddings import get_embedder

            _default_embed = cached(get_embedder("local").embed)
        return _default_embed


def support_score(sentence: str, evidence: str, *, context: str = "", embed: EmbedFn | None = None) -> float:
    """W_COVERAGE * share of the sentence's key terms found in the evidence (+ context, e.g.
    the document title) + (1 - W_COVERAGE) * cosine similarity of the two embeddings."""
    terms = content_terms(sentence)
    cov = coverage(terms, term_set(f"{evidence} {context}"))
    vecs = (embed or default_embed())([sentence, evidence])
    sim = float(vecs[0] @ vecs[1])
    return W_COVERAGE * cov + (1 - W_COVERAGE) * sim


def _copied(sentence: str, quotes: Sequence[str]) -> bool:
    """The sentence is one of its quotes (or a span of one), give or take punctuation."""
    s = re.sub(r"[^\w%]+", " ", normalise(sentence)).strip()
    if not s:
        return False
    return any(s in re.sub(r"[^\w%]+", " ", normalise(q)).strip() for q in quotes)


@dataclass
class SupportResult:
    ok: bool
    reason: str = ""
    score: float | None = None
    details: dict = field(default_factory=dict)


def support(sentence: str, quotes: Sequence[str], *, context: str = "", question: str = "", chunk: str = "",
            allow_question_numbers: bool = False, embed: EmbedFn | None = None,
            support_min: float = SUPPORT_MIN) -> SupportResult:
    """Whether verified, eligible `quotes` support `sentence` (the rules in the module doc).

    `context`: the cited documents' titles and sections; `chunk`: the cited chunks' text;
    `allow_question_numbers`: a premise correction restates the question's own numbers.
    """
    evidence = " ".join(quotes)
    text = sentence
    # A sentence that embeds its quote verbatim ("the source says "..."") asserts the quote;
    # only the rest of it is checked.
    embedded = False
    for q in quotes:
        pos = find_quote(q, text)
        if pos >= 0 and len(q) > 20:
            text = (text[:pos] + " " + text[pos + len(q):]).strip()
            embedded = True
    if allow_question_numbers and embedded and not question:
        # A premise correction quoting its evidence, checked without the question: the rest
        # restates the premise it denies, which only the question could vouch for.
        return SupportResult(True, "premise correction quoting its evidence")
    numbers = missing_numbers(text, evidence, allowed=question if allow_question_numbers else "")
    if numbers:
        return SupportResult(False, f"states {', '.join(numbers)}, which its quoted evidence does not")
    # A premise correction restates the question's names as well as its numbers.
    absent = missing_names(text, f"{evidence} {context} {question if allow_question_numbers else ''}",
                           question=question, chunk=chunk)
    if absent:
        return SupportResult(False, f"names {', '.join(absent)}, which its quoted evidence does not")
    if _copied(sentence, quotes) or len(content_terms(text)) <= 1:
        return SupportResult(True, "copied from its quote")
    score = support_score(sentence, evidence, context=context, embed=embed)
    if score < support_min:
        return SupportResult(False, f"support score {score:.2f} below {support_min:.2f}", score)
    return SupportResult(True, "", score)


# ---------------------------------------------------------------------------
# The verifier
# ---------------------------------------------------------------------------


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


class CitationVerifier:
    """The deterministic verifier used by every configuration."""

    def __init__(self, *, embed: EmbedFn | None = None, support_min: float = SUPPORT_MIN) -> None:
        self._embed = embed
        self.support_min = support_min

    def _spans(self, sentence: DraftSentence) -> list[QuoteRef]:
        if sentence.evidence:
            return [QuoteRef(source=e.source, text=clean_quote(e.text)) for e in sentence.evidence]
        return [QuoteRef(source=n, text=clean_quote(sentence.quote)) for n in dict.fromkeys(sentence.citations)]

    def verify(self, draft: Draft, sources: list[Source], *, question: str = "") -> Answer:
        kept: list[DraftSentence] = []
        citations: list[CitationRef] = []
        # One citation per (chunk, quote): a reader who clicks [n] sees the very sentence
        # that backs the claim, even when two claims rest on one chunk.
        by_span: dict[tuple[int, str], CitationRef] = {}
        dropped: list[str] = []
        asserting = draft.outcome not in _UNCITED_OK
        for sentence in draft.sentences:
            if not sentence.citations and not sentence.evidence:
                if draft.outcome in _UNCITED_OK:
                    kept.append(sentence.model_copy(update={"text": neutralise_markers(sentence.text)}))
                else:
                    dropped.append(f"uncited sentence: {sentence.text[:80]}")
                continue
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
                why = eligibility(quote)
                if why:
                    dropped.append(f"[{n}] does not support: {sentence.text[:80]} (its quote is {why})")
                    continue
                verified.append((n, source, quote, start))
            if verified and asserting:
                cited = {id(s): s for _, s, _, _ in verified}.values()
                result = support(
                    sentence.text, [q for _, _, q, _ in verified],
                    context=" ".join(f"{s.document_title} {s.section}" for s in cited),
                    question=question, chunk=" ".join(s.text for s in cited),
                    allow_question_numbers=draft.outcome == Outcome.FALSE_PREMISE,
                    embed=self._embed, support_min=self.support_min,
                )
                if not result.ok:
                    dropped.append(f"unsupported: {sentence.text[:80]} ({result.reason})")
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
        return Answer(
            outcome=outcome, sentences=kept, citations=citations,
            missing_note=draft.missing_note, suggestions=draft.suggestions, dropped=dropped,
        )
