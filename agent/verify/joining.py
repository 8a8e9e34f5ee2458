"""Words a line break cut in the stored text ("Chat- GPT", "Lamp- Net"), written whole as the
retrieved evidence writes them: the one joiner of the verifier (an answer's sentences and
quotes, as a reader sees them) and of the local roles (the words they score,
agent.local.candidates.read_sources)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from agent.types import Source
from knowledge.text.hyphens import Vocabulary, join_line_breaks, line_broken

# A document's whole vocabulary by its id (knowledge.vocabulary.document_vocabulary); None when
# it cannot be read.
DocumentVocabulary = Callable[[int], Vocabulary | None]
# join(text, documents): the text with its cut words joined as those documents write them.
Joiner = Callable[[str, Iterable[object]], str]


class _Then(Sequence[Vocabulary]):
    """Some vocabularies, then one more read only when a word the first do not decide is met
    (all the retrieved chunks' vocabulary costs more than the rest of a join)."""

    def __init__(self, first: list[Vocabulary], then: Callable[[], Vocabulary]) -> None:
        self.first, self.then = first, then

    def __len__(self) -> int:
        return len(self.first) + 1

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self[n] for n in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if 0 <= i < len(self.first):
            return self.first[i]
        if i == len(self.first):
            return self.then()
        raise IndexError(i)


def document_of(source: Source) -> object:
    """The key a source's document goes by: its id, else its title."""
    return source.document_id if source.document_id is not None else source.document_title


def line_break_joiner(sources: list[Source], document_vocabulary: DocumentVocabulary | None = None) -> Joiner:
    """join(text, documents): `text` with each word a line break cut written whole as the given
    documents write it (knowledge.text.join_line_breaks), then as all the retrieved chunks do.
    A document's evidence is its whole text when `document_vocabulary` reads it, else its
    retrieved chunks: a name one chunk only writes cut ("Chat- GPT") is usually written whole
    elsewhere in the paper. Each vocabulary is read once, when a text first needs it."""
    by_document: dict[object, list[str]] = {}
    for source in sources:
        by_document.setdefault(document_of(source), []).append(source.text)
    vocabularies: dict[object, Vocabulary] = {}

    def vocabulary(key: object) -> Vocabulary:
        if key not in vocabularies:
            whole = document_vocabulary(key) if document_vocabulary is not None and isinstance(key, int) else None
            vocabularies[key] = whole if whole is not None else Vocabulary.of(
                by_document.get(key, []) if key is not None else [s.text for s in sources])
        return vocabularies[key]

    def join(text: str, documents: Iterable[object]) -> str:
        if not line_broken(text):
            return text
        own = [vocabulary(d) for d in dict.fromkeys(documents)]
        return join_line_breaks(text, _Then(own, lambda: vocabulary(None)))

    return join
