"""Server-side SVG charts for benchmark reports, written by hand (no plotting library).

Pure functions returning an SVG string. They work offline, print well, and are accessible:
each chart has role="img", a <title> and a <desc> summarising the data, axis labels,
a legend, and a <title> on every bar or point so a screen reader or a hover shows the value.
Undefined values (None: a rate with no runs behind it) draw no bar and say "n/a".
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from html import escape

# Okabe & Ito colour-blind-safe palette, its pale yellow swapped for brown so every colour shows on white.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#8C564B")
FONT = 'font-family="system-ui, sans-serif"'

_ids = itertools.count(1)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.0f}%"


def _open(width: int, height: int, title: str, desc: str) -> tuple[str, str]:
    n = next(_ids)
    tid, did = f"chart-title-{n}", f"chart-desc-{n}"
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img" aria-labelledby="{tid} {did}" {FONT} font-size="12">'
        f'<title id="{tid}">{escape(title)}</title><desc id="{did}">{escape(desc)}</desc>'
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>'
        f'<text x="{width / 2:.0f}" y="20" text-anchor="middle" font-size="15" font-weight="600">{escape(title)}</text>'
    )
    return head, "</svg>"


def grouped_bars(
    *,
    title: str,
    groups: Sequence[str],
    series: Sequence[tuple[str, Sequence[float | None]]],
    y_label: str = "rate",
    width: int = 860,
    height: int = 400,
) -> str:
    """Bars of rates in [0, 1]: one group per configuration, one bar per series within it."""
    left, right, top, bottom = 56, 16, 56, 96
    plot_w, plot_h = width - left - right, height - top - bottom
    desc = "; ".join(
        f"{g}: " + ", ".join(f"{name} {_pct(values[i])}" for name, values in series) for i, g in enumerate(groups)
    )
    head, tail = _open(width, height, title, desc)
    parts = [head]
    # Legend across the top, below the title.
    x = left
    for k, (name, _) in enumerate(series):
        parts.append(f'<rect x="{x}" y="32" width="12" height="12" fill="{PALETTE[k % len(PALETTE)]}"/>')
        parts.append(f'<text x="{x + 16}" y="42">{escape(name)}</text>')
        x += 24 + 7 * len(name)
    # Horizontal grid lines every 25%.
    for tick in range(5):
        y = top + plot_h - plot_h * tick / 4
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#dddddd"/>')
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{tick * 25}%</text>')
    parts.append(
        f'<text transform="translate(14 {top + plot_h / 2:.0f}) rotate(-90)" text-anchor="middle">{escape(y_label)}</text>'
    )
    group_w = plot_w / max(1, len(groups))
    bar_w = group_w * 0.8 / max(1, len(series))
    for i, g in enumerate(groups):
        gx = left + i * group_w + group_w * 0.1
        for k, (name, values) in enumerate(series):
            value = values[i]
            bx = gx + k * bar_w
            label = f"{g}, {name}: {_pct(value)}"
            if value is None:
                parts.append(
                    f'<text x="{bx + bar_w / 2:.1f}" y="{top + plot_h - 4}" text-anchor="middle" '
                    f'font-size="9" fill="#666666"><title>{escape(label)}</title>n/a</text>'
                )
                continue
            # A zero still gets a hairline, so "0%" reads differently from "n/a" (no bar, a label).
            h = max(1.5, plot_h * max(0.0, min(1.0, value)))
            parts.append(
                f'<rect x="{bx:.1f}" y="{top + plot_h - h:.1f}" width="{bar_w * 0.92:.1f}" height="{h:.1f}" '
                f'fill="{PALETTE[k % len(PALETTE)]}"><title>{escape(label)}</title></rect>'
            )
        # Slanted, so eight long configuration names do not run into each other.
        lx, ly = gx + group_w * 0.4, top + plot_h + 14
        parts.append(
            f'<text x="{lx:.1f}" y="{ly}" text-anchor="end" transform="rotate(-30 {lx:.1f} {ly})">{escape(g)}</text>'
        )
    parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{top + plot_h}" y2="{top + plot_h}" stroke="#333333"/>')
    parts.append(tail)
    return "".join(parts)


def _nice_max(value: float) -> float:
    """A round axis maximum at or above value (1, 2 or 5 times a power of ten: fifths stay round)."""
    if value <= 0:
        return 1.0
    magnitude = 10 ** math.floor(math.log10(value))
    return next(step * magnitude for step in (1, 2, 5, 10) if step * magnitude >= value)


def scatter(
    *,
    title: str,
    points: Sequence[tuple[str, float | None, float | None]],
    x_label: str,
    y_label: str,
    width: int = 860,
    height: int = 360,
) -> str:
    """Points (label, x, y) named in a legend; y is a rate in [0, 1], x any non-negative quantity.

    Configurations often tie on accuracy, so labels beside the points would print over
    each other; the legend on the right names each colour instead.
    """
    left, right, top, bottom = 64, 190, 40, 56
    plot_w, plot_h = width - left - right, height - top - bottom
    shown = [(label, x, y) for label, x, y in points if x is not None and y is not None]
    missing = [label for label, x, y in points if x is None or y is None]
    desc = "; ".join(f"{label}: {x_label} {x:.0f}, {y_label} {_pct(y)}" for label, x, y in shown)
    if missing:
        desc += "; no data for " + ", ".join(missing)
    head, tail = _open(width, height, title, desc)
    parts = [head]
    # Headroom so the largest point and its label stay inside the frame.
    x_max = _nice_max(1.05 * max((x for _, x, _ in shown), default=1.0))
    for tick in range(5):
        y = top + plot_h - plot_h * tick / 4
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#dddddd"/>')
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{tick * 25}%</text>')
    for tick in range(6):
        x = left + plot_w * tick / 5
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top}" y2="{top + plot_h}" stroke="#eeeeee"/>')
        parts.append(
            f'<text x="{x:.1f}" y="{top + plot_h + 16}" text-anchor="middle">{x_max * tick / 5:g}</text>'
        )
    parts.append(
        f'<text x="{left + plot_w / 2:.0f}" y="{height - 12}" text-anchor="middle">{escape(x_label)}</text>'
    )
    parts.append(
        f'<text transform="translate(16 {top + plot_h / 2:.0f}) rotate(-90)" text-anchor="middle">{escape(y_label)}</text>'
    )
    parts.append(f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#333333"/>')
    shapes = ("circle", "square", "diamond")
    for k, (label, x, y) in enumerate(points):
        colour = PALETTE[k % len(PALETTE)]
        # Eight colours, and a second and third shape for more configurations than colours.
        shape = shapes[(k // len(PALETTE)) % len(shapes)]
        ly = top + 8 + 20 * k
        legend_text = escape(label if x is not None and y is not None else f"{label} (no data)")
        parts.append(_marker(shape, left + plot_w + 24, ly, colour, ""))
        parts.append(f'<text x="{left + plot_w + 36}" y="{ly + 4}">{legend_text}</text>')
        if x is None or y is None:
            continue
        px = left + plot_w * min(1.0, x / x_max)
        py = top + plot_h - plot_h * max(0.0, min(1.0, y))
        parts.append(_marker(shape, px, py, colour, f"{label}: {x_label} {x:.0f}, {y_label} {_pct(y)}"))
    parts.append(tail)
    return "".join(parts)


def _marker(shape: str, x: float, y: float, colour: str, tooltip: str) -> str:
    title = f"<title>{escape(tooltip)}</title>" if tooltip else ""
    # A white outline keeps overlapping points apart.
    style = f'fill="{colour}" fill-opacity="0.85" stroke="#ffffff" stroke-width="1.5"'
    if shape == "square":
        return f'<rect x="{x - 6:.1f}" y="{y - 6:.1f}" width="12" height="12" {style}>{title}</rect>'
    if shape == "diamond":
        return f'<polygon points="{x:.1f},{y - 7:.1f} {x + 7:.1f},{y:.1f} {x:.1f},{y + 7:.1f} {x - 7:.1f},{y:.1f}" {style}>{title}</polygon>'
    return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="6" {style}>{title}</circle>'


def report_charts(report) -> dict[str, str]:
    """The two charts of a benchmark report (an agent.benchmark.Report): name -> SVG.

    Accuracy is the human-graded score where any run is graded, else the automatic proxy;
    the chart's series name says which one is shown.
    """
    configs = report.configs
    rows = [report.overall[c] for c in configs]
    human = any(m.accuracy is not None for m in rows)
    acc_name = "accuracy (human)" if human else "accuracy (automatic proxy)"
    acc = [m.accuracy if human else m.proxy_accuracy for m in rows]
    bars = grouped_bars(
        title="Outcome rates per configuration",
        groups=configs,
        series=[
            (acc_name, acc),
            ("hallucination (out-of-scope answered)", [m.hallucination for m in rows]),
            ("refusal", [m.refused for m in rows]),
            ("false premise debunked", [m.false_premise_debunked for m in rows]),
        ],
    )
    points = scatter(
        title="Latency vs accuracy",
        points=[(c, m.latency_p50_ms, a) for c, m, a in zip(configs, rows, acc, strict=True)],
        x_label="median latency (ms)",
        y_label=acc_name,
    )
    return {"rates": bars, "latency": points}
