"""Text utilities shared by ingestion, indexing and the agent (pure: no Django, no agent).

- `normalise`: the one Unicode clean-up of extracted and uploaded text; `match_key`: the
  folded form used to compare a quote with a passage.
- `sentence_spans` / `split_sentences`: the one sentence splitter (nupunkt, see
  docs/ingestion.md for the comparison that chose it).
- `sentence_kind` / `is_answer_eligible`: whether a sentence is prose a reader would accept
  as evidence, or a heading, figure or table residue, equation, line numbers or a
  bibliography entry.
"""

from __future__ import annotations

from knowledge.text.classify import SentenceKind, is_answer_eligible, sentence_kind
from knowledge.text.normalise import collapse_spaces, match_key, normalise
from knowledge.text.sentences import runs_on, sentence_spans, split_heading, split_sentences

__all__ = [
    "SentenceKind", "collapse_spaces", "is_answer_eligible", "match_key", "normalise", "runs_on",
    "sentence_kind", "sentence_spans", "split_heading", "split_sentences",
]
