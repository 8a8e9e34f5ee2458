"""HTML as text blocks, headings marked with their level (knowledge.extract.text makes the page); without Django."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from knowledge.extract.clean import normalise_unicode


class _HTMLText(HTMLParser):
    _BLOCK = {"p", "div", "li", "tr", "br", "section", "article", "pre", "blockquote", "table", "ul", "ol", "dd", "dt"}
    _SKIP = {"script", "style", "noscript", "template", "head"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[tuple[str, int]] = []
        self.buffer: list[str] = []
        self.level = 0
        self.skip = 0

    def _flush(self) -> None:
        text = re.sub(r"\s+", " ", "".join(self.buffer)).strip()
        if text:
            self.blocks.append((text, self.level))
        self.buffer = []
        self.level = 0

    def handle_starttag(self, tag: str, attrs: list) -> None:  # type: ignore[override]
        if tag in self._SKIP:
            self.skip += 1
        elif re.fullmatch(r"h[1-6]", tag):
            self._flush()
            self.level = int(tag[1])
        elif tag in self._BLOCK:
            self._flush()

    def handle_endtag(self, tag: str) -> None:
        if tag in self._SKIP:
            self.skip = max(0, self.skip - 1)
        elif re.fullmatch(r"h[1-6]", tag) or tag in self._BLOCK:
            self._flush()

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.buffer.append(data)


def _html_blocks(text: str) -> list[tuple[str, int]]:
    parser = _HTMLText()
    parser.feed(normalise_unicode(text))
    parser.close()
    parser._flush()
    return parser.blocks
