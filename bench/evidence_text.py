"""Evidence text quality on the shared papers: headings, figure labels and devbench spans.

    PYTHONDONTWRITEBYTECODE=1 .venv/bin/python bench/evidence_text.py                # this tree
    PYTHONDONTWRITEBYTECODE=1 .venv/bin/python bench/evidence_text.py --root ../main # another checkout (before)
    ... --sample 100 --sample-out /tmp/eligible.txt                                  # sentences to read
    ... --cache /tmp/evidence-cache   # keep the extracted pages (extraction is 95 % of the time)
    ... --dump /tmp/sentences.jsonl   # every sentence with its paper, chunk and eligibility
    ... --calibrate                   # refit knowledge.text's layout model on bench/evidence_labels.jsonl
    ... --labels                      # headings, labels, captions read by hand (stop 29): quoted form vs reader
    ... --hyphens /tmp/joins.txt      # line-break hyphens ("Chat- GPT") in eligible sentences, before and
                                      # after knowledge.text.join_line_breaks; every join written to read

Calibration (`--calibrate`, no PDF needed): bench/evidence_labels.jsonl holds sentences read by
hand (ok = a reader accepts it as evidence, else why not). The papers are split in two halves
(sorted file names, even positions = calibration half); the layout model is fitted on the
"calibration" sentences (calibration half only) and the current knowledge.text.quotable is
reported on the labelled sentences of the other half.

Runs the real pure pipeline of the tree at --root: knowledge.extract.extract_pdf, then
knowledge.chunking.chunk_pages with the embedding model's tokenizer, then the sentences the
agent quotes (agent.local.text.split_sentences) of every chunk outside the reference list.
A sentence is answer-eligible when it has a quotable form: knowledge.text.quotable where the
tree has it (the one definition; the form is the sentence without a glued heading or list
mark, and that form is what is measured), else agent.local.eligibility.eligible (the agent's
filter before the two were merged); `--rule knowledge` measures knowledge.text.is_answer_eligible
of a tree without `quotable` (the index's filter before the merge).

Reported:
- the share of sentences, among all and among eligible ones, that start with a section number
  ("6.1 Machine Translation On ..."), contain a figure-label run (three numbers in a row such
  as axis ticks "55 60 65", or a number glued to a word, "75Accuracy"), a table-cell run
  (four cells in a row that are numbers, dashes or marks), an axis or legend label (no
  function word and no closing punctuation), equation residue (three maths symbols or Greek
  letters among mostly one-character tokens), or a reference-list entry (author initials or
  a venue with a year). The patterns are this script's own, simpler than the classifier's
  rules, so they are a check on it, not a copy of it;
- devbench evidence spans found whole inside one eligible sentence, or two adjacent ones,
  of a chunk of their paper (letters and digits compared, case-folded);
- time to extract, chunk and split the 25 papers.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import random
import re
import sys
import time
import unicodedata
from pathlib import Path

from _shared_data import SHARED

HERE = Path(__file__).resolve().parent.parent
SECTION_START = re.compile(r"^(?:[1-9]\d?(?:\.\d{1,2}){0,3}|[A-H]\.\d{1,2}(?:\.\d{1,2})*)\.?\s+[A-Z]")
TICK = re.compile(r"^[-+~(]?\d+(?:\.\d+)?(?:%|k|K|M|st|nd|rd|th)?[)]?$")
# Two digits or a decimal: "75Accuracy" is a tick run into its axis title; "6The" (a footnote
# mark) and "2WikiMQA" (a name) are not.
GLUED = re.compile(r"(?<![A-Za-z\d])(?:\d\d|\d\.\d)[A-Z][a-z]{2,}")


def _key(text: str) -> str:
    return re.sub(r"[\W_]+", "", unicodedata.normalize("NFKC", text).casefold())


CELL = re.compile(r"^(?:[-+~(]?\d+(?:[.,]\d+)?(?:%|[kKMB])?[)]?\*?|[-\u2013\u2014\u2713\u2717\u00d7\u2714\u2718/]|n/a|N/A)$")
MATHS = re.compile(r"[=+<>^_{}\u2190-\u22ff\u0370-\u03ff]")
FUNCTION = frozenset(["a", "an", "the", "of", "to", "in", "for", "and", "with", "that", "on", "by", "is", "are",
                      "was", "were", "be", "we", "it", "this", "as", "from", "at", "our", "which", "or", "not", "can"])
REFERENCE = re.compile(r"(?:\b[A-Z][a-z]+,\s(?:[A-Z]\.\s?){1,3}|\b(?:In Proceedings|Proceedings of|arXiv preprint|"
                       r"CoRR|Transactions of|Conference on)\b).*\b(?:19|20)\d\d\b|\b(?:19|20)\d\d[a-z]?\b.*"
                       r"\b(?:In Proceedings|Proceedings of|arXiv preprint|CoRR)\b")


def _run(sentence: str, pattern: re.Pattern, least: int) -> bool:
    """At least `least` tokens in a row that match `pattern`."""
    run = 0
    for token in sentence.split():
        run = run + 1 if pattern.match(token) else 0
        if run >= least:
            return True
    return False


def _cell_run(sentence: str) -> bool:
    return _run(sentence, CELL, 4)


def _label(sentence: str) -> bool:
    tokens = sentence.split()
    return (not re.search(r"[.!?:;][\"')\]]*$", sentence)
            and not any(t.lower().strip("(),;") in FUNCTION for t in tokens))


def _equation(sentence: str) -> bool:
    tokens = sentence.split()
    short = sum(1 for t in tokens if len(t) <= 2)
    return len(MATHS.findall(sentence)) >= 3 and short >= 0.4 * len(tokens)


def _reference(sentence: str) -> bool:
    return bool(REFERENCE.search(sentence))


def _figure_run(sentence: str) -> bool:
    return _run(sentence, TICK, 3) or bool(GLUED.search(sentence))


LABELS = HERE / "bench" / "evidence_labels.jsonl"


def calibration_half(papers: list[str]) -> set[str]:
    """The papers calibration may see: every other one in sorted order, starting with the first."""
    return set(sorted(papers)[::2])


def calibrate(data: Path) -> None:
    import numpy as np

    from knowledge.text import quotable
    from knowledge.text.classify import LAYOUT_FEATURES, LAYOUT_THRESHOLD, layout_features

    rows = [json.loads(line) for line in LABELS.read_text().splitlines() if line.strip()]
    half = calibration_half([p.stem for p in (data / "papers").glob("*.pdf")])
    fit = [r for r in rows if r["set"] == "calibration"]
    assert all(r["paper"] in half for r in fit), "calibration sentences must come from the calibration half"
    x = np.array([layout_features(r["sentence"]) for r in fit])
    y = np.array([0.0 if r["ok"] else 1.0 for r in fit])
    w, b = np.zeros(x.shape[1]), 0.0
    for _ in range(20000):  # L2-regularised logistic regression, plain gradient descent
        p = 1 / (1 + np.exp(-(x @ w + b)))
        w -= 0.5 * ((x.T @ (p - y)) / len(y) + 0.001 * w)
        b -= 0.5 * float((p - y).mean())
    print(f"fitted on {len(fit)} sentences ({int(y.sum())} rejected by the reader):")
    print("  LAYOUT_WEIGHTS = (" + ", ".join(f"{v:.2f}" for v in w) + f")  # {', '.join(LAYOUT_FEATURES)}")
    print(f"  LAYOUT_BIAS = {b:.2f}")
    p = 1 / (1 + np.exp(-(x @ w + b)))
    rand = np.array([r["pool"] == "random" for r in fit])
    for t in (0.4, 0.5, 0.6, 0.7, 0.8):
        flag = p >= t
        print(f"  threshold {t}: random pool bad caught {(flag & (y == 1) & rand).sum()}/{((y == 1) & rand).sum()}, "
              f"good lost {(flag & (y == 0) & rand).sum()}/{((y == 0) & rand).sum()}")
    print(f"current threshold {LAYOUT_THRESHOLD}; knowledge.text.quotable on the other half's labelled sentences:")
    for name in sorted({r["set"] for r in rows if not r["set"].startswith("heads-")} - {"calibration"}):
        held = [r for r in rows if r["set"] == name and r["paper"] not in half]
        bad = [r for r in held if not r["ok"]]
        good = [r for r in held if r["ok"] and not r["why"].startswith("caption")]
        captions = len(held) - len(bad) - len(good)
        print(f"  {name}: {len(held)} sentences; rejected by the reader {len(bad)}, of them no longer eligible "
              f"{sum(not quotable(r['sentence']) for r in bad)}; accepted {len(good)} (and {captions} captions), "
              f"of them no longer eligible {sum(not quotable(r['sentence']) for r in good)}")
        for r in held:
            if bool(quotable(r["sentence"])) == (not r["ok"]) and not r["why"].startswith("caption"):
                print(f"    {'kept' if r['ok'] is False else 'lost'}: {r['sentence'][:100]}  ({r['why'] or 'accepted'})")


def label_report() -> None:
    """Headings, labels and captions (stop 29, sets "heads-calibration" and "heads-test"): each
    row holds a chunk sentence and the form a reader would quote ("expect", "" = nothing). The
    rules were written reading the calibration half; the test half measures them."""
    from knowledge.text import quotable

    rows = [json.loads(line) for line in LABELS.read_text().splitlines() if line.strip()]
    for name in ("heads-calibration", "heads-test"):
        group = [r for r in rows if r["set"] == name]
        right = [r for r in group if quotable(r["sentence"]) == r["expect"]]
        bad = [r for r in group if not r["expect"]]
        caught = sum(1 for r in bad if not quotable(r["sentence"]))
        good = [r for r in group if r["expect"]]
        lost = [r for r in good if not quotable(r["sentence"])]
        cut = [r for r in good if r["expect"] != r["sentence"]]
        cut_right = sum(1 for r in cut if quotable(r["sentence"]) == r["expect"])
        print(f"{name}: {len(group)} sentences, quoted form as the reader's {len(right)}; not evidence {len(bad)}, "
              f"of them ineligible {caught}; evidence {len(good)}, of them lost {len(lost)}; "
              f"label or mark to cut {len(cut)}, cut right {cut_right}")
        for r in group:
            if quotable(r["sentence"]) != r["expect"]:
                print(f"    {r['why'][:50]:50s} | {r['sentence'][:90]}")


# A line-break hyphen as a reader sees it in a quote: "Chat- GPT", "regres- sion"; not a suspended
# one ("pre- and post-training"). This script's own pattern, simpler than knowledge.text's.
BREAK = re.compile(r"[A-Za-z0-9]- (?!(?:and|or|nor|to|as|vs|versus|than)\b)[A-Za-z]")


def hyphen_report(per_doc: dict, out: Path) -> None:
    """Eligible sentences (their quotable form) with a line-break hyphen, as stored and after
    knowledge.text.join_line_breaks with two kinds of evidence: the sentence's own chunk only
    (the least the verifier has: the cited chunk), and every chunk of its paper (the most: the
    verifier has the paper's retrieved chunks, then the other retrieved ones). Every join is
    written to `out` with the paper, to be read."""
    from knowledge.text import Vocabulary, join_line_breaks

    counts = {"stored": 0, "chunk evidence": 0, "paper evidence": 0}
    lines = []
    for doc, chunks in per_doc.items():
        paper = Vocabulary.of(s for chunk in chunks for s, _ in chunk)
        for chunk in chunks:
            own = Vocabulary.of(s for s, _ in chunk)
            for _, form in chunk:
                if not form or not BREAK.search(form):
                    continue
                counts["stored"] += 1
                by_chunk, by_paper = join_line_breaks(form, [own]), join_line_breaks(form, [paper])
                counts["chunk evidence"] += bool(BREAK.search(by_chunk))
                counts["paper evidence"] += bool(BREAK.search(by_paper))
                before = [m.group(0) for m in re.finditer(r"\S*[A-Za-z0-9]- \S+", form)]
                for word in before:
                    lines.append(f"{doc}\t{word}\tchunk: {join_line_breaks(word, [own])}\t"
                                 f"paper: {join_line_breaks(word, [paper])}")
    print("  eligible sentences with a line-break hyphen: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    out.write_text("\n".join(lines) + "\n")
    print(f"  {len(lines)} hyphenated words written to {out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=HERE, help="checkout whose code is measured")
    parser.add_argument("--data", type=Path, default=SHARED)
    parser.add_argument("--sample", type=int, default=0, help="write this many random eligible sentences")
    parser.add_argument("--sample-out", type=Path, default=Path("eligible_sample.txt"))
    parser.add_argument("--seed", type=int, default=14, help="of the sample (a new seed gives a sample nobody read)")
    parser.add_argument("--calibrate", action="store_true", help="refit the layout model (see above) and stop")
    parser.add_argument("--labels", action="store_true",
                        help="headings, labels and captions read by hand: the quoted form against the reader's")
    parser.add_argument("--hyphens", type=Path, help="count line-break hyphens and write every join here")
    parser.add_argument("--rule", choices=["quotable", "agent", "knowledge"], default="quotable")
    parser.add_argument("--cache", type=Path, help="directory for extracted pages (keyed by file and pdf.py)")
    parser.add_argument("--dump", type=Path, help="write every sentence (paper, chunk, eligible) as JSON lines")
    args = parser.parse_args()
    sys.path.insert(0, str(args.root.resolve()))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.calibrate:
        calibrate(args.data)
        return
    if args.labels:
        label_report()
        return
    from agent.local.text import split_sentences
    from knowledge.chunking import chunk_pages
    from knowledge.extract import CleanPage, extract_pdf

    # The extraction code of the tree (knowledge/pdf.py before it became the knowledge/extract package).
    sources = sorted((args.root / "knowledge" / "extract").glob("*.py")) or [args.root / "knowledge" / "pdf.py"]
    code_key = hashlib.sha256(b"".join(p.read_bytes() for p in sources)).hexdigest()[:12]

    def extract(path: Path) -> tuple[list, int]:
        cached = args.cache / f"{path.stem}.{code_key}.json" if args.cache else None
        if cached and cached.exists():
            data = json.loads(cached.read_text())
            return [CleanPage.from_json(p) for p in data["pages"]], data["page_count"]
        extracted = extract_pdf(path)
        if cached:
            args.cache.mkdir(parents=True, exist_ok=True)
            cached.write_text(json.dumps({"pages": [p.to_json() for p in extracted.pages],
                                          "page_count": extracted.page_count}))
        return extracted.pages, extracted.page_count

    rule = args.rule
    if rule == "quotable":
        try:
            from knowledge.text import quotable as eligible
        except ImportError:
            rule = "agent"
    if rule == "agent":
        from agent.local.eligibility import eligible
    elif rule == "knowledge":
        from knowledge.text import is_answer_eligible

        def eligible(s: str) -> str:
            return s if is_answer_eligible(s) else ""

    questions = json.loads((args.data / "devbench" / "questions.json").read_text())
    timing = {"extract": 0.0, "chunk": 0.0, "split": 0.0}
    per_doc: dict[str, list[list[tuple[str, bool]]]] = {}
    pages = n_chunks = 0
    for path in sorted((args.data / "papers").glob("*.pdf")):
        t = time.perf_counter()
        clean, page_count = extract(path)
        timing["extract"] += time.perf_counter() - t
        pages += page_count
        t = time.perf_counter()
        chunks = chunk_pages(clean)
        n_chunks += len(chunks)
        timing["chunk"] += time.perf_counter() - t
        t = time.perf_counter()
        # (sentence, its quotable form or "")
        per_doc[path.stem] = [[(s, eligible(s)) for s in split_sentences(c.text)] for c in chunks if not c.is_reference]
        timing["split"] += time.perf_counter() - t

    sentences = [s for chunks in per_doc.values() for chunk in chunks for s in chunk]
    ok = [e for _, e in sentences if e]
    all_ = [s for s, _ in sentences]
    print(f"tree: {args.root.resolve()}  eligibility: {rule}")
    print(f"{len(per_doc)} papers, {pages} pages, {n_chunks} chunks; extract {timing['extract']:.1f} s, chunk {timing['chunk']:.1f} s, "
          f"split+classify {timing['split']:.1f} s")
    print(f"sentences in non-reference chunks: {len(all_)}, answer-eligible: {len(ok)} ({100 * len(ok) / len(all_):.1f} %)")
    checks = {"section number": SECTION_START.match, "figure-label run": _figure_run, "table-cell run": _cell_run,
              "axis/legend label": _label, "equation residue": _equation, "reference entry": _reference}
    for label, group in (("all sentences", all_), ("eligible sentences", ok)):
        hits = {name: sum(1 for s in group if check(s)) for name, check in checks.items()}
        flagged = sum(1 for s in group if any(check(s) for check in checks.values()))
        print(f"  {label} ({len(group)}): any pattern {flagged} ({100 * flagged / max(1, len(group)):.2f} %); " + ", ".join(
            f"{name} {n} ({100 * n / max(1, len(group)):.2f} %)" for name, n in hits.items()))

    spans = [(q["expected_doc_ids"], span) for q in questions for span in q["required_evidence_spans"]]
    counts = {"any sentence, 1": 0, "eligible, 1": 0, "eligible, 1 or 2 adjacent": 0}
    for docs, span in spans:
        want = _key(span)
        found = dict.fromkeys(counts, False)
        for doc in docs:
            for chunk in per_doc.get(doc, []):
                if any(want in _key(s) for s, _ in chunk):
                    found["any sentence, 1"] = True
                keys = [_key(e) for _, e in chunk]
                if any(want in k for k in keys if k):
                    found["eligible, 1"] = found["eligible, 1 or 2 adjacent"] = True
                if any(want in a + b for a, b in itertools.pairwise(keys) if a and b):
                    found["eligible, 1 or 2 adjacent"] = True
        for name, hit in found.items():
            counts[name] += hit
    for name, n in counts.items():
        print(f"  devbench spans whole in {name}: {n}/{len(spans)} ({100 * n / len(spans):.0f} %)")
    if args.dump:
        with args.dump.open("w") as out:
            for doc, chunks in per_doc.items():
                for i, chunk in enumerate(chunks):
                    for s, e in chunk:
                        out.write(json.dumps({"paper": doc, "chunk": i, "sentence": s, "eligible": bool(e),
                                              "quotable": e}) + "\n")
    if args.hyphens:
        hyphen_report(per_doc, args.hyphens)
    if args.sample:
        rng = random.Random(args.seed)
        picked = rng.sample(ok, min(args.sample, len(ok)))
        args.sample_out.write_text("\n".join(f"{i + 1:3d}. {s}" for i, s in enumerate(picked)) + "\n")
        print(f"  {len(picked)} eligible sentences written to {args.sample_out}")


if __name__ == "__main__":
    main()
