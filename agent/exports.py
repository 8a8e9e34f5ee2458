"""Exports of answers: a run or a thread as Markdown, the cited papers as BibTeX or RIS.

Pure: views and the API turn rows into these dataclasses (agent.views_exports) and serve
the text. Markdown answers keep their citations as footnotes, each with the document, the
page, the collection and the verified quote, so a pasted answer still shows its evidence.
BibTeX/RIS entries hold what Document.metadata knows (knowledge.metadata): title always,
authors, year and the arXiv identifier when known; nothing is guessed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_MARKERS = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")


@dataclass(frozen=True)
class CitedPassage:
    marker: int
    document_title: str
    page: int
    quote: str
    collection: str = ""
    verified: bool = True


@dataclass(frozen=True)
class ExportedRun:
    question: str
    answer: str
    outcome: str = ""
    searched_as: str = ""
    missing_evidence: str = ""
    url: str = ""
    citations: Sequence[CitedPassage] = ()


@dataclass(frozen=True)
class Paper:
    title: str
    authors: Sequence[str] = ()
    year: int | None = None
    arxiv_id: str = ""
    url: str = ""


def _footnotes(text: str, prefix: str) -> str:
    """[1] and [1, 2] markers as Markdown footnote references [^1] / [^1][^2]."""
    return _MARKERS.sub(lambda m: "".join(f"[^{prefix}{n.strip()}]" for n in m.group(1).split(",")), text)


def _quote(text: str) -> str:
    return " ".join(text.split()).replace('"', "'")


def _run_body(run: ExportedRun, *, heading: str, prefix: str = "") -> list[str]:
    lines = [f"{heading} {run.question}", ""]
    if run.searched_as and run.searched_as != run.question:
        lines += [f"*Searched as: {run.searched_as}*", ""]
    lines += [_footnotes(run.answer.strip() or "(no answer)", prefix), ""]
    if run.missing_evidence:
        lines += [f"> **Missing evidence:** {run.missing_evidence}", ""]
    for c in run.citations:
        where = f"{c.document_title}, p. {c.page}" + (f" (collection: {c.collection})" if c.collection else "")
        check = "" if c.verified else " (quote not verified)"
        lines.append(f'[^{prefix}{c.marker}]: {where}. "{_quote(c.quote)}"{check}')
    if run.citations:
        lines.append("")
    if run.url:
        lines += [f"Source: {run.url}", ""]
    return lines


def run_markdown(run: ExportedRun) -> str:
    """One answer as Markdown: the question as a title, the answer with footnoted citations."""
    return "\n".join(_run_body(run, heading="#")).rstrip() + "\n"


def thread_markdown(title: str, turns: Sequence[ExportedRun], url: str = "") -> str:
    """A thread as Markdown: one section per turn; footnotes are numbered per turn (t1-1, t2-1...)."""
    lines = [f"# {title}", ""]
    if url:
        lines += [f"Source: {url}", ""]
    for n, turn in enumerate(turns, start=1):
        lines += _run_body(turn, heading=f"## {n}.", prefix=f"t{n}-")
    return "\n".join(lines).rstrip() + "\n"


def _key(paper: Paper, taken: set[str]) -> str:
    surname = re.sub(r"[^A-Za-z]", "", paper.authors[0].split(",")[0].split()[-1]) if paper.authors else ""
    word = next((w for w in re.findall(r"[A-Za-z]{4,}", paper.title)), "paper")
    base = (surname or word).lower() + (str(paper.year) if paper.year else "") + (word.lower() if surname else "")
    key, n = base, 1
    while key in taken:
        n += 1
        key = f"{base}{chr(ord('a') + n - 2)}" if n <= 27 else f"{base}{n}"
    taken.add(key)
    return key


def _bib_value(text: str) -> str:
    # Braces keep capitals (BERT) and balance is kept by dropping stray ones.
    return "{" + text.replace("{", "").replace("}", "") + "}"


def bibtex(papers: Sequence[Paper]) -> str:
    """@article entries for arXiv papers (journal = arXiv preprint), @misc for the rest."""
    taken: set[str] = set()
    entries = []
    for paper in papers:
        fields = [("title", _bib_value(paper.title))]
        if paper.authors:
            fields.append(("author", _bib_value(" and ".join(paper.authors))))
        if paper.year:
            fields.append(("year", str(paper.year)))
        kind = "misc"
        if paper.arxiv_id:
            kind = "article"
            fields += [("journal", _bib_value(f"arXiv preprint arXiv:{paper.arxiv_id}")),
                       ("eprint", _bib_value(paper.arxiv_id)), ("archivePrefix", "{arXiv}"),
                       ("url", _bib_value(f"https://arxiv.org/abs/{paper.arxiv_id}"))]
        body = ",\n".join(f"  {name} = {value}" for name, value in fields)
        entries.append(f"@{kind}{{{_key(paper, taken)},\n{body}\n}}")
    return "\n\n".join(entries) + ("\n" if entries else "")


def ris(papers: Sequence[Paper]) -> str:
    """RIS records: JOUR for arXiv papers, GEN for the rest."""
    records = []
    for paper in papers:
        lines = [f"TY  - {'JOUR' if paper.arxiv_id else 'GEN'}", f"TI  - {paper.title}"]
        lines += [f"AU  - {a}" for a in paper.authors]
        if paper.year:
            lines.append(f"PY  - {paper.year}")
        if paper.arxiv_id:
            lines += [f"JO  - arXiv preprint arXiv:{paper.arxiv_id}", f"UR  - https://arxiv.org/abs/{paper.arxiv_id}"]
        lines.append("ER  - ")
        records.append("\n".join(lines))
    return "\n".join(records) + ("\n" if records else "")
