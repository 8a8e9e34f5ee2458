"""A benchmark report, without Django: metrics per configuration, overall and by category,
reviewer agreement (Cohen's kappa), and the report as CSV rows."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from agent.benchmark.metrics import Metrics, RunRecord, group_metrics


@dataclass
class Report:
    configs: list[str]
    categories: list[str]
    overall: dict[str, Metrics]
    by_category: dict[tuple[str, str], Metrics]
    kappa: float | None
    kappa_runs: int

    def rows(self) -> list[Metrics]:
        """Overall row of each configuration, then its categories."""
        out: list[Metrics] = []
        for c in self.configs:
            out.append(self.overall[c])
            out += [self.by_category[(c, cat)] for cat in self.categories if (c, cat) in self.by_category]
        return out

    def as_dict(self) -> dict:
        return {
            "configs": self.configs,
            "categories": self.categories,
            "kappa": self.kappa,
            "kappa_runs": self.kappa_runs,
            "rows": [m.as_dict() for m in self.rows()],
        }


def compute_report(records: Sequence[RunRecord], *, config_order: Sequence[str] = ()) -> Report:
    """Metrics per configuration, overall and by category, plus reviewer agreement."""
    configs = list(dict.fromkeys([*config_order, *(r.config_name for r in records)]))
    configs = [c for c in configs if any(r.config_name == c for r in records)]
    categories = sorted({r.question.category for r in records})
    grouped: dict[str, list[RunRecord]] = defaultdict(list)
    for r in records:
        grouped[r.config_name].append(r)
    overall = {c: group_metrics(c, "", grouped[c]) for c in configs}
    by_category = {}
    for c in configs:
        for cat in categories:
            members = [r for r in grouped[c] if r.question.category == cat]
            if members:
                by_category[(c, cat)] = group_metrics(c, cat, members)
    pairs = [(r.grades[0], r.grades[1]) for r in records if len(r.grades) >= 2]
    return Report(configs, categories, overall, by_category, cohen_kappa(pairs), len(pairs))


def cohen_kappa(pairs: Sequence[tuple[str, str]]) -> float | None:
    """Cohen's kappa of (first grade, second grade) pairs; None when undefined.

    With many reviewers, "first" and "second" are the first two to grade each run, so this
    is agreement between graders in general, not between two fixed people.
    Undefined when there are no pairs, or when chance agreement is already 1 (both raters
    used one and the same grade for everything).
    """
    n = len(pairs)
    if n == 0:
        return None
    observed = sum(a == b for a, b in pairs) / n
    first = Counter(a for a, _ in pairs)
    second = Counter(b for _, b in pairs)
    expected = sum(first[k] * second[k] for k in set(first) | set(second)) / (n * n)
    if expected == 1:
        return None
    return (observed - expected) / (1 - expected)


CSV_FIELDS = tuple(Metrics.__dataclass_fields__)


def report_csv_rows(report: Report) -> list[list[object]]:
    """Header plus one row per metrics group; None becomes an empty cell."""
    rows: list[list[object]] = [list(CSV_FIELDS)]
    for m in report.rows():
        d = m.as_dict()
        rows.append(["" if d[k] is None else d[k] for k in CSV_FIELDS])
    return rows
