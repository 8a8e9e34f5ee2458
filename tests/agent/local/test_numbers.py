"""agent.local.text.numbers: the values a sentence states, not the labels of the paper's parts."""

from __future__ import annotations

import pytest

from agent.local.text import numbers


@pytest.mark.parametrize("sentence, values", [
    ("We warm up for 4,000 steps and use 10% dropout.", {"4000", "10%"}),
    ("As §6 shows, the gain is 2.5 points.", {"2.5"}),
    ("Table 4 and Fig. 2 compare 3 encoders (Section 3.2, Eq. (5)).", {"3"}),
    ("Dense retrievers [12, 14] beat BM25 on 7 of 9 sets [3].", {"7", "9"}),
    ("See Appendix B.1 for the 128 prompts.", {"128"}),
])
def test_numbers_are_values_not_section_table_figure_or_citation_labels(sentence, values):
    assert numbers(sentence) == values
