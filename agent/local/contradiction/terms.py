"""Term sets the contradiction cues compare: content stems, all stems, name stems."""

from __future__ import annotations

import re

from agent.local.text import NEGATIONS, STOPWORDS, anchor_terms, stem, words


def content(text: str) -> list[str]:
    return [stem(w) for w in words(text) if w not in STOPWORDS and w not in NEGATIONS and len(w) > 1]


def stems(text: str) -> set[str]:
    out: set[str] = set()
    for w in words(text):
        if w in STOPWORDS or w in NEGATIONS:
            continue
        out.add(stem(w))
        if "-" in w or "_" in w:
            out.update(stem(p) for p in re.split(r"[-_]", w) if len(p) > 1)
    return out


def name_stems(text: str) -> set[str]:
    """The stems of the text's names (anchor terms) and of their parts ("in-context" -> "context")."""
    out: set[str] = set()
    for a in anchor_terms(text):
        out.add(a)
        out.update(stem(p) for p in re.split(r"[-_]", a) if len(p) > 1)
    return out


# A quoted span of two or more words: the title of a work ("In 'Reading Long Receipts', ...").
_QUOTED = re.compile(r"[\'\"\u2018\u201c]([^\'\"\u2019\u201d]+\s[^\'\"\u2019\u201d]+)[\'\"\u2019\u201d]")


def titled_stems(text: str) -> set[str]:
    """Stems of the words only a quoted title of the text holds: they name a document, not a
    value of the relation the text states, so no other word can stand in their place and
    no negation denies them."""
    out: set[str] = set()
    for m in _QUOTED.finditer(text):
        out |= stems(m.group(1)) | {stem(w) for w in words(m.group(1))}
    rest = _QUOTED.sub(" ", text)
    return out - stems(rest) - {stem(w) for w in words(rest)}


_PARENTHESIS = re.compile(r"\(([^()]*)\)")


def glossed_stems(text: str) -> set[str]:
    """Stems only a parenthesis of the text holds: an aside glossing a name ("the monoT5 (T5
    reranking) paper"), which says which thing is meant, not what the text asserts of it."""
    inside: set[str] = set()
    for m in _PARENTHESIS.finditer(text):
        inside |= stems(m.group(1))
    return inside - stems(_PARENTHESIS.sub(" ", text))


# Kinds of training: a text that denies training ("without any further training of the LM")
# denies each kind of it ("fine-tunes the language model"). General English of the field, as stems.
_TRAINING = "train"
_KINDS_OF_TRAINING = frozenset(stem(w) for w in [
    "fine-tune", "fine-tuned", "fine-tuning", "finetune", "finetuning", "pretrain", "pre-train", "pre-training",
    "retrain", "post-train", "post-training"])


def kind_of(term: str) -> str:
    """The general term a term is a kind of ("fine-tun" -> "train"), or "" when none is known."""
    return _TRAINING if term in _KINDS_OF_TRAINING else ""


def spelled_by(acronym: str, text: str) -> set[str]:
    """Stems of the consecutive content words of `text` whose initials spell `acronym`
    ("lm" in "fine-tune the language model" -> {"languag", "model"}); a short all-letter
    acronym only (2 to 5 letters), and an empty set when none spells it."""
    if not acronym.isalpha() or not 2 <= len(acronym) <= 5:
        return set()
    ws = [w for w in words(text) if w not in STOPWORDS and w not in NEGATIONS and w.isalpha()]
    n = len(acronym)
    for i in range(len(ws) - n + 1):
        if "".join(w[0] for w in ws[i:i + n]) == acronym:
            return {stem(w) for w in ws[i:i + n]}
    return set()


# An agent noun the stemmer cuts to its verb's stem ("annotators" -> "annot", "tokenizer" ->
# "token"): the doer or the tool, not the deed ("annotations", "tokenization"). "order",
# "number" or "filter" keep their ending under the stemmer and are no agent nouns.
_AGENT_ENDING = re.compile(r"[a-z](?:or|er)s?$")


def _agent_noun(word: str) -> bool:
    if not _AGENT_ENDING.search(word):
        return False
    s = stem(word)
    return len(s) < len(word.rstrip("s")) - 1 and not s.endswith(("or", "er"))


def different_words(claim: str, sentence: str) -> set[str]:
    """Stems the two texts share only as different words: one writes the stem only as an
    agent noun ("the human annotators agree"), the other never does ("without human
    annotations"). The stem matches, but the people who annotate are not their annotations,
    so a denial of the one says nothing of the other."""
    def forms(text: str) -> tuple[set[str], set[str]]:
        agents: set[str] = set()
        others: set[str] = set()
        for w in words(text):
            if w not in STOPWORDS and w not in NEGATIONS:
                (agents if _agent_noun(w) else others).add(stem(w))
        return agents, others

    claim_agents, claim_others = forms(claim)
    sent_agents, sent_others = forms(sentence)
    return ((claim_agents - claim_others) & (sent_others - sent_agents)) | (
        (sent_agents - sent_others) & (claim_others - claim_agents))
