"""The one sentence splitter: paragraphs, then Punkt sentences (nupunkt), then headings and
figure captions that extraction left glued to a sentence are split off.

Why nupunkt: on the 25 shared papers it keeps as many devbench evidence spans whole as pysbd
and syntok and splits the hard cases (et al., decimals, citations, quotes, abbreviations)
best, at about 40 times pysbd's speed (bench/sentence_splitters.py, docs/ingestion.md).
"""

from __future__ import annotations

import re
from functools import lru_cache

from knowledge.text.normalise import collapse_spaces

_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n\s*")
# What ends a sentence or a clause before a blank line; without one, the text runs on.
_CLOSING = frozenset(".!?:;")
# A figure or table caption ("Figure 3: ...", "Table 2: ...") starts a sentence of its own;
# what precedes it on the line is usually the figure's legend. Only the colon form is
# split: "... as shown in Table 3. We ..." ends a sentence already.
_CAPTION_START = re.compile(r"(?<=\S)\s+(?=(?:Figure|Fig\.|Table)\s+[A-Z]?\d{1,2}:\s)")
_SECTION_NUMBER = re.compile(r"^(?:[1-9]\d?(?:\.\d{1,2}){0,3}\.?|[A-H](?:\.\d{1,2}){1,3}\.?|[IVX]{1,4}\.)\s+")
_TITLE_FUNCTION_WORDS = {"a", "an", "and", "as", "at", "by", "for", "from", "in", "into", "of", "on", "or", "the",
                         "to", "vs", "vs.", "via", "with", "without", "&", "-", "\u2013", ":"}
NAMED_SECTIONS = {
    "abstract", "introduction", "related work", "related works", "background", "method", "methods",
    "methodology", "approach", "experiments", "experimental setup", "experimental results", "results",
    "evaluation", "discussion", "analysis", "conclusion", "conclusions", "conclusions and future work",
    "conclusion and future work", "future work", "limitations", "ethics statement", "ethical considerations",
    "acknowledgements", "acknowledgments", "acknowledgement", "acknowledgment", "appendix", "appendices",
    "supplementary material", "broader impact", "summary",
    "references", "bibliography", "literature cited", "works cited", "reference",
}
_MAX_TITLE_WORDS = 10
# Words that open a sentence and rarely sit inside a title: where a run-in heading ends
# ("6 Improving Reranking Since the reader is fixed, ...").
_OPENERS = {"since", "the", "we", "our", "this", "these", "here", "given", "although", "while", "when", "unlike",
            "following", "it", "its", "they", "after", "because", "however", "previous", "recent", "existing",
            "table", "figure"}
# A list mark or footnote number before a sentence: "1. The question ...", "(2) We ...".
# A bare number counts when a sentence opening follows it ("1 Notably, with ...").
_LIST_MARK = re.compile(
    r"^(?:\d{1,2}[.)]|\(\d{1,2}\)|[\u2022\u25cf\u25aa\u25e6]|\d{1,2}(?=\s+[A-Z][a-z]+,?\s+[a-z]))\s+")
_BULLET = re.compile(r"(?<=\S)\s+(?=[\u2022\u25cf\u25aa\u25e6]\s)")


@lru_cache(maxsize=1)
def _punkt():
    # nupunkt loads its bundled English model on first use (about 0.2 s); one per process.
    from nupunkt import sent_spans

    return sent_spans


def _is_title_word(token: str) -> bool:
    core = token.strip("()[]:,")
    if not core:
        return True
    return core[0].isupper() or core[0].isdigit() or core.lower() in _TITLE_FUNCTION_WORDS


def split_heading(sentence: str) -> tuple[str, str] | None:
    """(heading, rest) when the sentence starts with a section heading that extraction glued
    to it ("7 Conclusion In this work, ..." -> ("7 Conclusion", "In this work, ...")).

    The heading is a section number (or a named section such as "Conclusion") and a few title
    words; the rest starts where a capitalised word is followed by a lower-case one, the
    shape of a sentence opening. None when there is no such split.
    """
    number = _SECTION_NUMBER.match(sentence)
    tokens = sentence[number.end():].split() if number else sentence.split()
    if len(tokens) < 4:
        return None
    if not number:
        # A named section glued to its first sentence: "Conclusion In this work we ...".
        for size in (3, 2, 1):
            head = " ".join(tokens[:size])
            if head.lower().rstrip(":.") in NAMED_SECTIONS and head[:1].isupper():
                rest = tokens[size:]
                if len(rest) >= 3 and rest[0][:1].isupper() and rest[1][:1].islower():
                    return _cut(sentence, len(tokens) - len(rest))
                return None
        return None
    if not tokens[0][:1].isupper() or tokens[0].lower() in _TITLE_FUNCTION_WORDS:
        return None
    title_like = True
    for i in range(1, min(len(tokens) - 2, _MAX_TITLE_WORDS + 1)):
        title_like = title_like and _is_title_word(tokens[i - 1])
        word, following = tokens[i], tokens[i + 1].lstrip("\"'\u201c\u2018([")
        if not word[:1].isupper():
            continue
        opens = word.replace("-", "").isalpha() and following[:1].islower() and not word.isupper()
        if (title_like and opens) or word.lower() in _OPENERS:
            return _cut(sentence, i, numbered=True)
    return None


def _cut(sentence: str, words_in_heading: int, *, numbered: bool = False) -> tuple[str, str]:
    # Offsets by walking the words, so the two parts are exact slices of the sentence.
    matches = list(re.finditer(r"\S+", sentence))
    index = words_in_heading + (len(_SECTION_NUMBER.match(sentence).group().split()) if numbered else 0)
    cut = matches[index].start()
    return sentence[:cut].rstrip(), sentence[cut:]


def runs_on(before: str, after: str) -> bool:
    """Whether the text after a blank line continues the sentence before it.

    A page or column break inside a sentence leaves a blank line in the extracted text
    ("... is based on integrating" / "three open-source toolkits: ..."): the text before
    ends without closing punctuation and the text after starts in lower case. A heading is
    never followed by a lower-case sentence start, so headings still stand alone.
    """
    before, after = before.rstrip(), after.lstrip()
    if not before or not after or before[-1] in _CLOSING or not after[0].islower():
        return False
    # A numbered heading broken over two lines ("5 The Effectiveness of X" / "with Y") is
    # still a heading: it stands alone, and its second line is split off as usual.
    paragraph = before.rsplit("\n\n", 1)[-1].strip()
    heading = _SECTION_NUMBER.match(paragraph) and len(paragraph.split()) <= _MAX_TITLE_WORDS
    return not (heading or paragraph.lower() in NAMED_SECTIONS)


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of the sentences of `text`, in order, whitespace trimmed.

    A blank line ends a sentence (extraction puts headings and paragraphs on their own), so
    a heading never becomes the first words of the sentence after it; except where the
    sentence runs on across it (`runs_on`: a page or column break).
    """
    spans: list[tuple[int, int]] = []
    pos = 0
    for block in [*_PARAGRAPH_BREAK.finditer(text), None]:
        if block and runs_on(text[pos : block.start()], text[block.end() : block.end() + 1]):
            continue
        end = block.start() if block else len(text)
        paragraph = text[pos:end]
        if paragraph.strip():
            for a, b in _punkt()(paragraph):
                spans.extend(_refine(text, pos + a, pos + b))
        if block:
            pos = block.end()
    return spans


def _refine(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Trim a Punkt span and split off glued captions and headings."""
    piece = text[start:end]
    lead = len(piece) - len(piece.lstrip())
    start, end = start + lead, start + len(piece.rstrip())
    if start >= end:
        return []
    cuts = [start]
    cuts += [start + m.end() for m in _CAPTION_START.finditer(text[start:end])]
    cuts += [start + m.end() for m in _BULLET.finditer(text[start:end])]
    cuts = sorted(set(cuts))
    out: list[tuple[int, int]] = []
    for a, b in zip(cuts, [*cuts[1:], end], strict=True):
        segment = text[a:b].rstrip()
        b = a + len(segment)
        split = split_heading(segment)
        mark = _LIST_MARK.match(segment)
        if split:
            head, rest = split
            out.append((a, a + len(head)))
            out.append((b - len(rest), b))
        elif mark and len(segment[mark.end():].split()) >= 4:
            # The mark is its own fragment, so the item reads (and is quoted) as a sentence.
            out.append((a, a + len(mark.group().rstrip())))
            out.append((a + mark.end(), b))
        elif b > a:
            out.append((a, b))
    return out


def split_sentences(text: str) -> list[str]:
    """The sentences of `text`, each with its whitespace collapsed to single spaces."""
    return [s for s in (collapse_spaces(text[a:b]) for a, b in sentence_spans(text)) if s]


# Words that open a sentence (a run-in heading ends where one of them starts the sentence) and
# that a title rarely starts with.
_SENTENCE_OPENERS = frozenset([
    "the", "we", "our", "in", "for", "to", "when", "this", "these", "here", "given", "since", "although", "while",
    "unlike", "following", "it", "its", "they", "after", "because", "however", "as", "on", "with", "a", "an",
    "each", "first", "finally", "table", "figure", "to", "if", "there", "most", "many", "all", "one", "both",
])
# Words in a run-in heading at most ("C Randomizing Distractor Order in Multi-Document QA Our ...").
_MAX_RUN_IN = 8
_CLAUSE_OPENERS = frozenset(["although", "since", "while", "when", "because", "however", "currently", "unlike",
                             "our", "we", "it", "they", "these", "here"])
_PLAIN_TITLE = re.compile(r"[A-Z][a-z]{2,}")
_PAPER_PART = re.compile(r"Table|Tables|Figure|Figures|Fig\.|Section|Sections|Appendix|Eq\.|Equation")
# A name: a capital letter or a digit after the first letter, or a possessive ("BERT's", "GPT-3").
_NAME = re.compile(r"[A-Z][\w-]*(?:[A-Z0-9][\w-]*['\u2019]s|[A-Z0-9][\w-]*|['\u2019]s)")
_TITLE_WORD = re.compile(r"^(?:[A-Z][A-Za-z]*(?:[-/][A-Za-z]+)*|[A-Z]{2,}\d*|\([A-Z][A-Za-z]*\))[:.]?$")


def run_in_heading(sentence: str) -> tuple[str, str] | None:
    """(heading, rest) when an unnumbered run-in heading opens the sentence ("Reranking When
    training rerankers, we ...", "Language Modeling The first LM dataset is ...").

    The heading is one to six title words (capitalised, or small words inside the title);
    the rest starts with a word that opens sentences ("The", "We", "When", "Table", ...)
    followed by a lower-case word or a number. A title does not start with such an opener, so
    "For MS MARCO we ..." stays whole. Used on sentences when they are quoted (the stored
    chunk text and its sentence boundaries do not change); numbered headings are split off by
    the splitter itself (`split_heading`).
    """
    tokens = sentence.split()
    first = tokens[0].lower().strip(":") if tokens else ""
    if len(tokens) < 4 or first in _SENTENCE_OPENERS or first in {"see", "cf"} or not _TITLE_WORD.match(tokens[0]):
        return None
    for i in range(1, min(_MAX_RUN_IN + 1, len(tokens) - 2)):
        word, following = tokens[i], tokens[i + 1]
        if i == 1 and first in {"appendix", "section", "chapter"} and re.fullmatch(r"[A-Z0-9](?:\.\d{1,2})*[.:]?", word):
            continue  # "Appendix A Architecture and Training Details The architecture ..."
        previous = tokens[i - 1].lower().strip(":.")
        if i > 6 and not all(_is_title_word(t) for t in tokens[:i]):
            # Past six words only a heading in title case ("C Randomizing Distractor Order in
            # Multi-Document QA Our ..."): a sentence-case run that long is a sentence.
            return None
        # An opener may carry its comma ("Zero-shot Retrieval First, the passages ..."), but not
        # the article ("... in Appendix A, it is known").
        opener = word.lower().rstrip(",") if len(word) > 3 else word.lower()
        # A clause opener that never sits inside a title may be followed by a name ("Lexical
        # Models Although BM25 ...", "Impact Statement Our LampNet ...").
        names = opener in _CLAUSE_OPENERS and i >= 2
        # ... or by a part of the paper ("Unsupervised Results In Table 1, we ...", "Procedures In
        # Section 3.1, ..."): a title names no table.
        part = _PAPER_PART.fullmatch(following) and i + 2 < len(tokens) and tokens[i + 2][:1].isdigit()
        if ((opener in _SENTENCE_OPENERS or names) and word[:1].isupper() and previous not in _TITLE_FUNCTION_WORDS
                and (following[:1].islower() or following[:1].isdigit() or names or part)):
            return _cut(sentence, i)
        # A title in title case, then a sentence whose subject is a name ("Model Design LampNet's
        # encoder reads ..."): two or more plain capitalised words never start a sentence so.
        if (i >= 2 and _NAME.fullmatch(word) and following[:1].islower()
                and all(_PLAIN_TITLE.fullmatch(t) for t in tokens[:i])):
            return _cut(sentence, i)
        # A heading in sentence case ("Estimating faithfulness using LLMs The problem ...") has
        # lower-case words too, but no punctuation and no sentence opener before its end.
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9-]*:?|\([A-Z][A-Za-z]*\)", word) or (
                word[:1].isupper() and opener in _SENTENCE_OPENERS):
            return None
    return None


# A run-in heading that ends in a colon: a few title words, then ": " ("Data Structure: Initially,
# ...", "Multi-factor Search: Until now, ..."). Words that make the label a clause ("Our aim is
# two-fold: ...", "They are: ...") or a lead-in are not in a heading.
_LABEL = re.compile(r"^(?P<label>[A-Za-z][^:;,.!?()\[\]]{1,59}?):\s+(?=\S)")
# A PDF may print a word's hyphen as a minus sign or a Unicode hyphen ("Interaction\u2212focused").
_PLAIN_WORD = re.compile(r"[A-Za-z][a-z]+(?:['\u2019]s)?(?:[-\u2010\u2011\u2212][A-Za-z][a-z]*)*")
_CLAUSE_WORDS = frozenset([
    "is", "are", "was", "were", "be", "been", "has", "have", "had", "we", "our", "they", "it", "this", "these",
    "there", "can", "will", "would", "should", "may", "must", "follows", "following", "include", "includes",
    "namely", "i.e", "e.g", "such", "example", "note", "where",
])


# A citation as the subject of a statement: "(Roe et al., 2021) count ...", "(Roe, 2021a) propose ...".
CITATION_START = re.compile(r"^\((?:[A-Z][^()]{0,60}?,\s?)?(?:19|20)\d\d[a-z]?\)\s+(?=[a-z])")


def label_match(sentence: str) -> re.Match | None:
    """The "Label: " that opens a sentence, if any (see `label_heading`)."""
    return _LABEL.match(sentence)


def label_heading(sentence: str) -> tuple[str, str] | None:
    """(label, rest) when a run-in heading ending in a colon opens a sentence that stands on
    its own: "Data Structure: Initially, the ..." -> ("Data Structure:", "Initially, the ...").

    The label is one to five words that start capitalised, without a verb or a pronoun (a clause
    before a colon, "Our aim is two-fold:", is a lead-in, not a heading); the rest starts with a
    capitalised word followed by a lower-case one or a comma, the shape of a sentence opening,
    and has at least five words, or opens with a citation as its subject ("Loss Weighting: (Qiu et
    al., 2023b) focus on ..."). A rest in lower case ("Total: the number of ...") needs its label
    as its subject, and a definition ("MR: Sentiment prediction of movie reviews") too, so those
    stay whole: the caller decides whether the whole is prose. A label that names something
    ("FreshPrompt:", "MS MARCO:") is not a topic: knowledge.text.classify decides on it.
    """
    match = _LABEL.match(sentence)
    if not match:
        return None
    label = match.group("label").split()
    rest = sentence[match.end():].split()
    if not 1 <= len(label) <= 5 or not label[0][:1].isupper() or len(rest) < 5:
        return None
    # A topic ("Data Structure", "Multi-factor Search"), not a name: a label that names a
    # dataset or a method ("MS MARCO:", "BM25 + Doc2query:", "FreshPrompt:") is the subject of
    # what follows, and cutting it would cut what the sentence is about.
    if not all(_PLAIN_WORD.fullmatch(w) or w.lower() in _TITLE_FUNCTION_WORDS for w in label):
        return None
    if any(w.lower().strip("'\u2019") in _CLAUSE_WORDS for w in label):
        return None
    if label[0].lower() in _SENTENCE_OPENERS or label[0].lower().endswith("ly"):
        # A connective before a colon ("However: (a) this is ..."), not a topic.
        return None
    if re.fullmatch(r"\([a-z]\)", rest[0]) and rest[1][:1].isupper():
        # An enumeration starts after the label ("Sparse Retrieval: (a) DeepCT [11] uses ...").
        return sentence[:match.end()].rstrip(), sentence[match.end():]
    if CITATION_START.match(sentence[match.end():]):
        # A statement whose subject is a citation ("Loss Weighting Method: (Qiu et al., 2023b) focus on ...").
        return sentence[:match.end()].rstrip(), sentence[match.end():]
    first, second = rest[:2]
    if not first[:1].isupper() or not (
            second[:1].islower() or first.endswith(",") or first.lower() in _SENTENCE_OPENERS):
        return None
    return sentence[:match.end()].rstrip(), sentence[match.end():]
