"""Static HTML of a validation report: what nbconvert, nbviewer and GitHub show.

Self-contained: inline styles only (no ``<style>`` to leak into the page, no script), every
value escaped. The interactive display puts this same HTML above the graph viewer.
"""
from __future__ import annotations

import html
import math
from typing import Optional

import numpy as np

from ..viz.dot import xml_text
from ..viz.overlays import overlay

_FONT = "font-family:var(--jp-ui-font-family,system-ui,sans-serif);font-size:12px"
_MONO = "font-family:var(--jp-code-font-family,monospace);font-size:11px"
# A cell never breaks inside a number ("-1.6" / "977"): a table wider than its column
# scrolls in its own box (_table) instead of widening the page.
_CELL = ("padding:2px 8px;border-bottom:1px solid #d0d7de;text-align:left;vertical-align:top;"
         "white-space:nowrap")
_HEAD = _CELL + ";color:#57606a;font-weight:600"
# A check's colours are the validation overlay's looks (viz.overlays), as its graph paints them.
_GOOD, _BAD = (overlay("validation").style.looks[s].stroke for s in ("ok", "diverged"))
_BAD_ROW = overlay("validation").style.looks["diverged"].fill
_HEATMAP_MAX = 48         # cells per side; bigger outputs are shown block-reduced (max)


def esc(x) -> str:
    """Escaped for HTML, with characters XML forbids (a pasted ANSI escape) made visible."""
    return html.escape(xml_text(x), quote=True)


def fmt_err(x: float) -> str:
    if x == 0:
        return "0"
    if math.isinf(x):
        return "inf"
    return f"{x:.3g}"


def fmt_time(seconds: Optional[float]) -> str:
    if seconds is None:
        return "–"
    for unit, scale in (("s", 1), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def badge(ok: bool) -> str:
    color = _GOOD if ok else _BAD
    word = "pass" if ok else "fail"
    return (f'<span class="mlclab-badge mlclab-{word}" style="display:inline-block;padding:1px 9px;'
            f'border-radius:10px;background:{color};color:#fff;font-weight:700;{_FONT}">{word}</span>')


def preview(a: np.ndarray) -> str:
    """A short, escaped text view of an array (numpy's summarization for big ones)."""
    text = np.array2string(np.asarray(a), precision=4, threshold=24, edgeitems=3, max_line_width=60)
    return f'<pre style="margin:0;{_MONO}">{esc(text)}</pre>'


def _stats(a: np.ndarray) -> tuple[str, str, str]:
    a = np.asarray(a)
    if a.size == 0 or a.dtype.kind not in "biuf":
        return "–", "–", "–"
    f = a.astype(np.float64)
    return f"{np.nanmin(f):.3g}", f"{np.nanmax(f):.3g}", f"{np.nanmean(f):.3g}"


def _table(header: list[str], rows: list[list[str]], row_styles: Optional[list[str]] = None) -> str:
    head = "".join(f'<th style="{_HEAD}">{h}</th>' for h in header)
    body = []
    for i, row in enumerate(rows):
        style = (row_styles or [""] * len(rows))[i]
        cells = "".join(f'<td style="{_CELL}">{c}</td>' for c in row)
        body.append(f'<tr style="{style}">{cells}</tr>')
    return (f'<div style="max-width:100%;overflow-x:auto"><table style="border-collapse:collapse;'
            f'margin:4px 0 8px">{"<tr>" + head + "</tr>"}{"".join(body)}</table></div>')


def _reduce(ratio: np.ndarray) -> tuple[np.ndarray, int]:
    """Block-max ``ratio`` down to at most _HEATMAP_MAX per side (so a mismatch never hides)."""
    rows, cols = ratio.shape
    block = max(1, math.ceil(max(rows, cols) / _HEATMAP_MAX))
    if block == 1:
        return ratio, 1
    pr, pc = (-rows) % block, (-cols) % block
    padded = np.pad(ratio, ((0, pr), (0, pc)), constant_values=0.0)
    r, c = padded.shape
    return padded.reshape(r // block, block, c // block, block).max(axis=(1, 3)), block


def _color(ratio: float) -> str:
    # Within tolerance: white to amber as the error approaches the tolerance. Outside: red.
    if ratio > 1:
        return _BAD
    t = min(max(ratio, 0.0), 1.0)
    r, g, b = (255, int(255 - 64 * t), int(255 - 200 * t))
    return f"#{r:02x}{g:02x}{b:02x}"


def heatmap_svg(ratio: np.ndarray, title: str = "") -> str:
    """An inline SVG heatmap of a 2-D ``tolerance_ratio`` (error / tolerance per element).

    Red cells are outside tolerance; the rest shade from white (exact) to amber (at the
    tolerance). Each cell has a tooltip with its index and ratio.
    """
    ratio = np.asarray(ratio, dtype=np.float64)
    if ratio.ndim != 2 or ratio.size == 0:
        raise ValueError("heatmap_svg needs a non-empty 2-D array")
    cells, block = _reduce(np.nan_to_num(ratio, nan=np.inf, posinf=1e300))
    rows, cols = cells.shape
    size = max(4, min(16, 320 // max(rows, cols)))
    width, height = cols * size, rows * size
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="mlclab-heatmap" width="{width + 2}" '
             f'height="{height + 2}" viewBox="-1 -1 {width + 2} {height + 2}" role="img" '
             f'aria-label="{esc(title or "mismatch heatmap")}">']
    for i in range(rows):
        for j in range(cols):
            v = float(cells[i, j])
            if block == 1:
                where = f"[{i}, {j}]"
            else:
                where = f"[{i * block}:{(i + 1) * block}, {j * block}:{(j + 1) * block}]"
            parts.append(f'<rect x="{j * size}" y="{i * size}" width="{size}" height="{size}" '
                         f'fill="{_color(v)}" stroke="#d0d7de" stroke-width="0.5">'
                         f'<title>{esc(where)}: error/tolerance = {esc(fmt_err(v))}</title></rect>')
    parts.append("</svg>")
    note = f" ({block}×{block} blocks, max)" if block > 1 else ""
    caption = (f'<div style="{_FONT};color:#57606a">{esc(title)} mismatch map{esc(note)}: '
               f'<span style="color:{_BAD}">■</span> outside tolerance, amber near it, '
               "white exact</div>")
    return f'<div class="mlclab-heatmap-box" style="margin:4px 0">{caption}{"".join(parts)}</div>'


def report_html(report) -> str:
    """The whole report as one static HTML fragment."""
    parts = (_summary_html(report), _inputs_html(report), _outputs_html(report),
             _timing_html(report), _bindings_html(report), _notes_html(report))
    return (f'<div class="mlclab-validation" style="{_FONT};border:1px solid #d0d7de;'
            'border-radius:6px;padding:8px 10px;max-width:100%;overflow:auto">'
            f'{"".join(parts)}</div>')


def _summary_html(report) -> str:
    """The badge, the function and the largest errors."""
    return (f'<div style="margin-bottom:6px">{badge(report.ok)} <b>{esc(report.function)}</b>: '
            f'compiled (TVM) vs {esc(report.reference_name)} &nbsp;·&nbsp; max abs err '
            f'<b>{esc(fmt_err(report.max_abs_err))}</b> &nbsp;·&nbsp; max rel err '
            f'<b>{esc(fmt_err(report.max_rel_err))}</b></div>')


def _inputs_html(report) -> str:
    """Where the inputs came from, and each one's shape, dtype and range."""
    origin = "given" if report.seed is None else f"random, seed={report.seed}"
    if report.sizes:
        origin += ", " + ", ".join(f"{k}={v}" for k, v in report.sizes.items())
    rows = [[esc(name), esc(tuple(a.shape)), esc(a.dtype), *map(esc, _stats(a))]
            for name, a in report.inputs]
    return (f'<div><b>inputs</b> <span style="color:#57606a">({esc(origin)})</span></div>'
            + _table(["name", "shape", "dtype", "min", "max", "mean"], rows))


def _outputs_html(report) -> str:
    """Compiled next to reference for each output, with a mismatch map for 2-D ones."""
    rows, heatmaps = [], []
    for o in report.outputs:
        c = o.comparison
        label = "output" if len(report.outputs) == 1 else f"output {o.index}"
        verdict = esc(c.note) if c.note else f"{c.mismatches} of {c.size} outside tolerance"
        rows.append([esc(label), preview(o.actual), preview(o.expected),
                     esc(fmt_err(c.max_abs_err)), esc(fmt_err(c.max_rel_err)),
                     f'<span style="color:{_GOOD if o.ok else _BAD}">{verdict}</span>'])
        if not c.note and c.tolerance_ratio is not None and c.tolerance_ratio.ndim == 2 and c.size:
            heatmaps.append(heatmap_svg(c.tolerance_ratio, label))
    tol = sorted({(o.comparison.rtol, o.comparison.atol) for o in report.outputs})
    tol_text = "; ".join(f"rtol={r:g}, atol={a:g}" for r, a in tol)
    return (f'<div><b>outputs</b> <span style="color:#57606a">({esc(tol_text)})</span></div>'
            + _table(["", "compiled", "reference", "max abs err", "max rel err", "check"], rows)
            + "".join(heatmaps))


def _timing_html(report) -> str:
    """Time per call of both, when both were timed."""
    if report.compiled_time_s is None or report.reference_time_s is None:
        return ""
    ratio = report.reference_time_s / report.compiled_time_s if report.compiled_time_s else math.inf
    if ratio >= 1:
        verdict = f"compiled is {ratio:.2g}× faster"
    else:
        # Usual for tiny tensors: the VM's per-call overhead outweighs the arithmetic.
        verdict = f"numpy is {1 / ratio:.2g}× faster at this size"
    return ('<div style="margin:4px 0"><b>time per call</b>: '
            f"compiled {esc(fmt_time(report.compiled_time_s))}"
            f' · reference {esc(fmt_time(report.reference_time_s))}'
            f' <span style="color:#57606a">({esc(verdict)})</span></div>')


def _bindings_html(report) -> str:
    """Each checked binding against numpy, opened on the first divergence."""
    if not report.bindings:
        return ""
    bad = report.first_divergent_binding
    rows, styles = [], []
    for b in report.bindings:
        c = b.comparison
        where = f"{b.line}: {b.source_line.strip()}" if b.line else ""
        status = ("ok" if b.ok else (esc(c.note) or f"{c.mismatches} of {c.size} differ"))
        rows.append([esc(b.name), esc(b.dsl_name or ""),
                     f'<code style="{_MONO}">{esc(where)}</code>',
                     esc(fmt_err(c.max_abs_err)),
                     f'<span style="color:{_GOOD if b.ok else _BAD}">{status}</span>'])
        styles.append(f"background:{_BAD_ROW}" if b is bad else "")
    return (f'<details{" open" if bad else ""}>'
            f"<summary><b>bindings</b>: {_divergence_html(bad)}</summary>"
            + _table(["binding", "DSL name", "line", "max abs err", "check"], rows, styles)
            + "</details>")


def _divergence_html(bad) -> str:
    if bad is None:
        return "every binding agrees with numpy"
    where = (f" (line {esc(bad.line)}: <code>{esc(bad.source_line.strip())}</code>)"
             if bad.line else "")
    return (f'<span class="mlclab-divergence" style="color:{_BAD}">first divergence: '
            f"<b>{esc(bad.name)}</b>{where}</span>")


def _notes_html(report) -> str:
    return "".join(f'<div style="color:#57606a">note: {esc(n)}</div>' for n in report.notes)
