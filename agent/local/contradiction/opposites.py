"""Opposites: a comparison reversed, more against less, an antonym in the claim word's slot."""

from __future__ import annotations

import re
from functools import lru_cache

from agent.local.contradiction.negation import CLAUSE_END
from agent.local.contradiction.terms import content, titled_stems
from agent.local.text import ANTONYMS, NEGATIONS, STOPWORDS, stem, words

# "A is faster than B": the comparative and what stands on each side of it.
_COMPARATIVE = re.compile(r"\b(?P<comp>(?:more|less|fewer)\s+[a-z]+|(?!rather\b|other\b)[a-z]+er)\s+than\s+"
                          r"(?P<after>[^,;:()?.]+)", re.IGNORECASE)


def _comparisons(text: str) -> list[tuple[str, set[str], set[str]]]:
    """(comparative, terms before it in its clause, terms after "than") of each comparison."""
    out = []
    for m in _COMPARATIVE.finditer(text):
        before = CLAUSE_END.split(text[: m.start()])[-1]
        comp = " ".join(stem(w) for w in m.group("comp").lower().split())
        out.append((comp, set(content(before)[-3:]), set(content(m.group("after"))[:3])))
    return out


def reversed_comparison(claim: str, sentence: str) -> bool:
    """The sentence makes the claim's comparison the other way round: "Lumen is faster
    than Quill" against "Quill is faster than Lumen" (or "Quill runs faster than Lumen")."""
    for comp, a, b in _comparisons(claim):
        a, b = a - b, b - a
        if not a or not b:
            continue
        for other, sa, sb in _comparisons(sentence):
            # Words on the same side in both ("parses receipts") are the shared predicate.
            ca, csa, cb, csb = a - sa, sa - a, b - sb, sb - b
            if other == comp and cb & csa and ca & csb:
                return True
    return False



# Words that rank one thing above another, with which side wins: "A outperforms B", "A is
# better than B", "A was preferred over B" put A first; "A underperforms B", "A is worse
# than B" put B first. General English, not a benchmark's wording.
_RANKS = re.compile(
    r"\b(?:(?P<up>better|superior|outperform(?:s|ed|ing)?|beat(?:s|ing)?|surpass(?:es|ed|ing)?|"
    r"preferred|prefer(?:s|ring)?|favou?red|chosen|chose|selected)"
    r"|(?P<down>worse|inferior|underperform(?:s|ed|ing)?|lag(?:s|ged)?\s+behind|trail(?:s|ed)?))"
    r"(?:\s+(?:than|to|over|against))?\s+(?P<after>[^,;:()?.]+)", re.IGNORECASE)
# "A was chosen over B" ranks A first, "we chose A" ranks nothing: only "over" ("preferred
# to" too) after a verb of choice makes it a ranking.
_CHOICE = re.compile(r"^(?:preferred|prefer\w*|favou?red|chosen|chose|selected)$", re.IGNORECASE)


# "prefer A over B", "chose A over B", "opt for A over B", "favour A to B": the verb of choice
# before both sides (_RANKS reads the verb between them: "A was preferred over B").
_CHOSEN_OVER = re.compile(
    r"\b(?:prefer(?:s|red|ring)?|favou?r(?:s|ed|ing)?|cho(?:se|ose|oses|osing)|"
    r"opt(?:s|ed|ing)?\s+for)\s+(?P<a>[^,;:()?.]{2,60}?)\s+(?P<joiner>over|to)\s+(?P<b>[^,;:()?.]+)",
    re.IGNORECASE)


def rankings(text: str) -> list[tuple[set[str], set[str]]]:
    """(what is ranked first, what second) of each ranking in the text, as stems of the
    clause before the ranking word (its last four content words) and of what follows it
    (the first three): "MAX performs worse than MEAN" -> ({mean}, {max, perform})."""
    out = []
    for m in _RANKS.finditer(text):
        word = (m.group("up") or m.group("down")).lower()
        joiner = text[m.end(1) if m.group("up") else m.end(2): m.start("after")].strip().lower()
        # "A was chosen over B" ranks; "chosen to maximise accuracy" is a purpose, and only
        # "preferred to" ranks with "to".
        if _CHOICE.match(word) and not (joiner == "over" or (joiner == "to" and word.startswith("prefer"))):
            continue
        clauses = CLAUSE_END.split(text[: m.start()])
        before = clauses[-1]
        # A ranking set off after a comma ("X achieved bad results on Y (Table 1), worse than
        # Z") has no side of its own before it: it ranks the sentence's subject.
        subject = not content(before) and len(clauses) > 1
        first = set(content(clauses[0])[:4] if subject else content(before)[-4:])
        second = set(content(m.group("after"))[:3])
        first |= {stem(p) for w in words(before)[-6:] if "-" in w for p in w.split("-") if len(p) > 1}
        second |= {stem(p) for w in words(m.group("after"))[:4] if "-" in w for p in w.split("-") if len(p) > 1}
        if m.group("down"):
            first, second = second, first
        out.append((first, second))
    for m in _CHOSEN_OVER.finditer(text):
        # "to" after a verb of choice other than "prefer" is a purpose ("chose X to save memory").
        if m.group("joiner").lower() == "to" and not m.group(0).lower().startswith(("prefer", "favo")):
            continue
        out.append((set(content(m.group("a"))[-3:]), set(content(m.group("b"))[:3])))
    return out


def reversed_ranking(claim: str, sentence: str) -> bool:
    """The sentence ranks the claim's two sides the other way round, whatever words rank
    them: "A was preferred over B" against "A performs worse than B" or "B outperforms A"."""
    for win, lose in rankings(claim):
        win, lose = win - lose, lose - win
        if not win or not lose:
            continue
        for s_win, s_lose in rankings(sentence):
            s_win, s_lose = s_win - s_lose, s_lose - s_win
            # A word on the same side in both ("on receipts") is the shared setting.
            if (win & s_lose) - s_win and (lose & s_win) - s_lose:
                return True
    return False

# General English words of direction (more / less of something, for better / for worse),
# as stems. Not a list of opposite pairs: any word of one side against any of the other.
# What a clash of direction is worth is fitted (agent.local.entailment), not assumed.
_UP = frozenset(stem(w) for w in [
    "increase", "rise", "rose", "risen", "raise", "grow", "grew", "grown", "higher", "more", "greater", "larger",
    "faster", "improve", "enhance", "promote", "encourage", "boost", "elevate", "stimulate", "activate",
    "accelerate", "strengthen", "gain", "better", "outperform", "benefit", "beneficial", "effective", "induce",
    "facilitate", "upregulate", "expand", "exceed", "succeed", "success", "help", "superior"])
_DOWN = frozenset(stem(w) for w in [
    "decrease", "reduce", "lower", "less", "fewer", "smaller", "slower", "diminish", "decline", "drop", "fall",
    "fell", "fallen", "shrank", "worsen", "worse", "impair", "inhibit", "suppress", "repress", "block", "slow",
    "weaken", "loss", "lose", "degrade", "hurt", "attenuate", "downregulate", "ineffective", "fail", "failure",
    "shrink", "underperform", "harm", "harmful", "inferior"])


@lru_cache(maxsize=4096)
def direction(text: str) -> int:
    """+1 when the text says more / better of something, -1 less / worse, 0 neither or both;
    a negation in the text flips it ("does not improve" is -1)."""
    ws = [stem(w) for w in words(text)]
    up = sum(w in _UP for w in ws)
    down = sum(w in _DOWN for w in ws)
    sign = (up > down) - (down > up)
    negated = any(w in NEGATIONS or w.endswith("n't") for w in words(text))
    return -sign if negated else sign


def direction_clash(claim: str, sentence: str) -> bool:
    """The claim and the sentence point opposite ways ("X worsens Y" against "Y improved with X")."""
    a, b = direction(claim), direction(sentence)
    return a * b < 0


# Content words on each side of an opposite that frame it: the smallest reach that keeps
# every antonym cue the old anywhere-in-the-sentence rule gave on a SciFact calibration
# CONTRADICT rationale (2 loses 3 of them, 3 loses 1), while it drops 16 of its 21 fires on
# neutral sentences and 1 of 2 on supporting ones (bench/premise_cue_diff.py e194d12).
_ANTONYM_REACH = 4


def _antonym_frames(text: str) -> dict[str, set[str]]:
    """Each word of the text (and each part of a hyphenated one) with the content stems next
    to it: up to _ANTONYM_REACH content words on each side."""
    ws = words(text)
    content_at = [i for i, w in enumerate(ws) if w not in STOPWORDS and w not in NEGATIONS and len(w) > 1]
    out: dict[str, set[str]] = {}
    for i, w in enumerate(ws):
        before = [stem(ws[j]) for j in content_at if j < i][-_ANTONYM_REACH:]
        after = [stem(ws[j]) for j in content_at if j > i][:_ANTONYM_REACH]
        for form in {w, *(p for p in w.split("-") if len(p) > 1)}:
            out.setdefault(form, set()).update(before + after)
    return out


def _graded(adjective: str) -> tuple[str, ...]:
    """An adjective with its comparative and superlative ("long", "longer", "longest")."""
    stem_ = adjective[:-1] if adjective.endswith("e") else adjective
    return adjective, f"{stem_}er", f"{stem_}est"


# Gradable opposites in every degree (agent.local.text.ANTONYMS lists base and comparative
# forms of a few): "the longest paths" against "the shortest paths". General English.
_DEGREE_PAIRS = [("long", "short"), ("high", "low"), ("large", "small"), ("fast", "slow"), ("strong", "weak"),
                 ("wide", "narrow"), ("deep", "shallow")]
_DEGREES: dict[str, set[str]] = {}
for _a, _b in [*((a, b) for x, y in _DEGREE_PAIRS for a, b in zip(_graded(x), _graded(y))),
               ("best", "worst"), ("big", "small"), ("bigger", "smaller"),
               ("biggest", "smallest"), ("early", "late"), ("earlier", "later"), ("earliest", "latest")]:
    _DEGREES.setdefault(_a, set()).add(_b)
    _DEGREES.setdefault(_b, set()).add(_a)


def _opposites(word: str) -> set[str]:
    return ANTONYMS.get(word, set()) | _DEGREES.get(word, set())


def antonym_in_slot(claim: str, sentence: str) -> bool:
    """The sentence uses the opposite of one of the claim's words (agent.local.text.ANTONYMS)
    in that word's place: next to one of the content words that stand next to it in the
    claim ("Caching increases latency" / "Caching decreases latency"). An opposite elsewhere
    in the sentence speaks of something else ("... before contrastive pre-training" is not
    denied by "After this step, we end up with ...")."""
    claim_frames, sent_frames = _antonym_frames(claim), _antonym_frames(sentence)
    # The words of a quoted title name a paper: the claim asserts nothing with them.
    titled = titled_stems(claim)
    for w, near in claim_frames.items():
        opposite = _opposites(w)
        if not opposite or w in sent_frames or opposite & claim_frames.keys() or stem(w) in titled:
            continue
        if any(near & sent_frames[o] for o in opposite & sent_frames.keys()):
            return True
    return False


# Where in a sequence something sits (the input, a ranking, a document): start, middle or
# end, as the noun after "at/in/near/toward the" or before "of". Lower case only: "Lost in
# the Middle" is a title, not a position.
_POSITION = re.compile(r"\b(?:at|in|near|towards?|to|from)\s+the\s+(?:very\s+)?(?P<a>beginning|start|front|top|middle|"
                       r"cent(?:er|re)|end|back|bottom)\b|\b(?P<b>beginning|start|middle|end)\s+of\b")
_PLACE = {"beginning": "start", "start": "start", "front": "start", "top": "start", "middle": "middle",
          "center": "middle", "centre": "middle", "end": "end", "back": "end", "bottom": "end"}
# Superlatives and verbs of doing well or badly that direction() does not count.
_BEST = frozenset(stem(w) for w in ["best", "highest", "strongest", "optimal", "peak", "excel"])
_WORST = frozenset(stem(w) for w in ["worst", "lowest", "weakest", "poorest", "poorly", "struggle", "suffer"])
_SPLIT_CLAUSE = re.compile(r"[;:()]|,\s+(?:and|but|while|whereas)\b|\b(?:but|while|whereas|although)\b")


def _placed(text: str) -> list[tuple[frozenset[str], int]]:
    """(positions named, how it goes there: +1 well, -1 badly) for each clause of the text
    that names a position and says how well something does."""
    out = []
    for part in _SPLIT_CLAUSE.split(text):
        places = frozenset(_PLACE[m.group("a") or m.group("b")] for m in _POSITION.finditer(part))
        if not places:
            continue
        ws = {stem(w) for w in words(part)}
        how = direction(part) or ((len(ws & _BEST) > len(ws & _WORST)) - (len(ws & _WORST) > len(ws & _BEST)))
        if how:
            out.append((places, how))
    return out


def moved_position(claim: str, sentence: str) -> bool:
    """The sentence says where something does well or badly, and it is not where the claim
    says: "X does best when the passage is in the middle" against "X does best at the
    beginning or end" (the same verdict elsewhere) or "X degrades in the middle" (the
    opposite verdict there). The sentence must not also give the claim's verdict at the
    claim's place, and must share two other content words with the claim (what does well)."""
    claimed = _placed(claim)
    said = _placed(sentence)
    if not claimed or not said:
        return False
    rest = set(content(_POSITION.sub(" ", claim))) & set(content(_POSITION.sub(" ", sentence)))
    if len(rest) < 2:
        return False
    for places, how in claimed:
        if any(how == s_how and places & s_places for s_places, s_how in said):
            continue
        if any((how == s_how and not places & s_places) or (how == -s_how and places <= s_places)
               for s_places, s_how in said):
            return True
    return False
