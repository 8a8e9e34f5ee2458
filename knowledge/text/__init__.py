"""Text utilities shared by ingestion, indexing and the agent (pure: no Django, no agent).

- `normalise`: the one Unicode clean-up of extracted and uploaded text; `match_key`: the
  folded form used to compare a quote with a passage.
- `sentence_spans` / `split_sentences`: the one sentence splitter (nupunkt, see
  docs/ingestion.md for the comparison that chose it).
- `sentence_kind` / `is_answer_eligible` / `quotable`: whether a sentence is prose a reader
  would accept as evidence, or a heading, figure or table residue, equation, line numbers,
  a bibliography entry, a footnote, a question, an example, an instruction or a lead-in
  to a list (`is_lead_in`: it ends in ":" or "as follows"); `quotable` is
  the one definition of answer-eligible evidence (the agent's roles call it).
- `join_line_breaks` / `Vocabulary`: a word a line break cut ("Chat- GPT"), written whole as the
  texts at hand write it, where a reader sees it (answers, quotes; the stored text keeps it);
  `quote_span`: the one quote locator (case, spaces and hyphens between words aside).
- `is_instruction` / `is_injection`: text addressed to a model (never evidence; an injection
  makes its whole chunk untrusted).
"""

from __future__ import annotations

from knowledge.text.classify import (
    SentenceKind,
    is_answer_eligible,
    is_lead_in,
    layout_score,
    quotable,
    sentence_kind,
    strip_marks,
)
from knowledge.text.hyphens import Vocabulary, join_line_breaks, line_broken, quote_span
from knowledge.text.instructions import is_injection, is_instruction
from knowledge.text.normalise import collapse_spaces, match_key, normalise
from knowledge.text.sentences import (
    label_heading,
    run_in_heading,
    runs_on,
    sentence_spans,
    split_heading,
    split_sentences,
)

__all__ = [
    "SentenceKind", "Vocabulary", "collapse_spaces", "is_answer_eligible", "is_injection", "is_instruction", "is_lead_in", "join_line_breaks", "label_heading",
    "layout_score", "line_broken", "match_key", "normalise", "quotable", "quote_span", "run_in_heading", "runs_on", "sentence_kind", "sentence_spans",
    "split_heading", "split_sentences", "strip_marks",
]
