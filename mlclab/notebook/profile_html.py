"""Static HTML of a profile: a compact kernel table (slowest first, share of the whole, the
module or DSL line each kernel computes) and a roofline drawn as inline SVG by mlclab itself,
its slowest kernels labelled. No script and no widget, so nbconvert, nbviewer and GitHub show
the same thing as the live notebook; every label is escaped. Colours are JupyterLab's theme
variables (with light fallbacks elsewhere), so the axes and text stay visible in a dark theme.
"""
from __future__ import annotations

import math

from .report_html import _FONT, _MONO, esc, fmt_time

_W, _H = 460, 300                       # the plot area of the roofline, in px
_LEFT, _BOTTOM, _TOP, _RIGHT = 56, 36, 12, 16
# Theme-aware colours: JupyterLab's variables, light-theme values where they are not defined.
_TEXT = "var(--jp-content-font-color1,#1f2328)"
_MUTED = "var(--jp-content-font-color2,#57606a)"
_BORDER = "var(--jp-border-color2,#d0d7de)"
_GRID = "var(--jp-border-color3,#eef1f4)"
_PLOT = "var(--jp-layout-color0,#fff)"
_DOT = "var(--jp-error-color1,#d32f2f)"
_ROOF = "var(--jp-brand-color1,#1976d2)"
_CELL = (f"padding:2px 4px;border-bottom:1px solid {_BORDER};text-align:left;"
         "vertical-align:top;white-space:nowrap")
_HEAD = _CELL + f";color:{_MUTED};font-weight:600"
_NUM = _CELL.replace("text-align:left", "text-align:right")
_ROWS = 12              # kernels in the table; the rest are one click away
_LABELLED = 8           # roofline dots that carry their kernel's name
_NAME = 24              # characters of a kernel's name shown (the whole name is its tooltip)
_LINE = 22              # characters of a DSL line or module path shown


def _num(x: float) -> str:
    return f"{x:.3g}"


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _bytes(n: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n} B"


def _flops(n: int) -> str:
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}FLOP"
    return f"{n} FLOP"


def _spread(lo: float, hi: float) -> str:
    """``"12–16 ms"``: the fastest and slowest sample in the unit of the slowest."""
    for unit, scale in (("s", 1), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if hi >= scale or unit == "ns":
            return f"{lo / scale:.3g}–{hi / scale:.3g} {unit}"
    raise AssertionError("unreachable")


def _work(k) -> str:
    """``"33.6 M FLOPs · 12.6 MB"``: a kernel's work, short."""
    return f"{_flops(k.flops)}s · {_bytes(k.bytes)}"


def _where(k, imported: bool) -> tuple[str, str]:
    """What a kernel computes, short (the cell) and whole (its tooltip): an imported model's
    module path, or the DSL lines (one line then "+N": a module-tree line per row made rows
    tall)."""
    if imported:
        # No module: the model's own forward, or a fused kernel whose nodes the pipeline could
        # not trace back to one module (a kernel shared by identical layers).
        return (_short(k.module, _LINE), k.module) if k.module else \
            ("–", "no single module: the model's own forward, or shared by several modules")
    if not k.lines:
        return "", ""
    whole = "; ".join(f"{n}: {t}" for n, t in zip(k.lines, k.code))
    first = f"{k.lines[0]}: {k.code[0]}" if k.code else str(k.lines[0])
    more = f" +{len(k.lines) - 1}" if len(k.lines) > 1 else ""
    return _short(first, _LINE) + more, whole


def _table(prof, kernels, imported: bool) -> str:
    header = [("kernel", "under its name, the schedule rule that scheduled it (hover the rule "
                         "for the rules that declined the kernel first)"),
              ("time", f"median of {prof.repeat} runs"),
              ("spread", "fastest–slowest run"), ("share", "of the time in kernels"),
              ("module" if imported else "DSL line", ""),
              ("FLOP/byte", "arithmetic intensity: FLOPs over bytes moved (hover a value for "
                            "both)"), ("GFLOP/s", "hover a value for its GB/s"),
              ("% of roof", "of the roofline above it"), ("bound by", "")]
    rows = []
    for k in kernels:
        share = prof.share(k)
        bar = (f'<span style="display:inline-block;width:{round(30 * share)}px;height:8px;'
               f'background:{_DOT};margin-right:4px"></span>')
        where, where_tip = _where(k, imported)
        # The rule goes under the name, not in a column of its own: the table fits a column.
        name = (f'<code style="{_MONO}" title="{esc(k.name)}">{esc(_short(k.name, _NAME))}</code>'
                if len(k.name) > _NAME else f'<code style="{_MONO}">{esc(k.name)}</code>')
        cells = [
            (f"{name}<br>{_rule(k)}", _CELL),
            (esc(fmt_time(k.seconds)), _NUM),
            (esc(_spread(*k.spread)), _NUM),
            (bar + esc(f"{100 * share:.1f}%"), _CELL),
            (f'<span title="{esc(where_tip)}" style="{_MONO}">{esc(where)}</span>', _CELL),
            (f'<span title="{esc(f"{k.flops:,} FLOPs, {k.bytes:,} bytes ({_work(k)})")}">'
             f'{esc(_num(k.intensity))}</span>', _NUM),
            (f'<span title="{esc(f"{_num(k.gbps)} GB/s")}">{esc(_num(k.gflops))}</span>', _NUM),
            (esc(f"{k.percent_of_roof(prof.peaks):.0f}%"), _NUM),
            (esc(k.bound(prof.peaks)), _CELL)]
        rows.append("<tr>" + "".join(f'<td style="{style}">{c}</td>' for c, style in cells)
                    + "</tr>")
    head = "".join(f'<th style="{_HEAD}"' + (f' title="{esc(tip)}"' if tip else "")
                   + f">{esc(h)}</th>" for h, tip in header)
    return (f'<table style="border-collapse:collapse;margin:4px 0 8px;color:{_TEXT}">'
            f'<tr>{head}</tr>{"".join(rows)}</table>')


def profile_table_html(prof) -> str:
    """The kernels, slowest first: time (median, spread), share, what each computes (module
    or DSL line), work, and roofline place. Past ``_ROWS`` kernels the rest fold away."""
    ordered = prof.by_time()
    imported = any(k.module for k in ordered)
    first, rest = ordered[:_ROWS], ordered[_ROWS:]
    out = _table(prof, first, imported)
    if rest:
        share = sum(prof.share(k) for k in rest)
        out += (f'<details><summary style="color:{_MUTED}">{len(rest)} more kernels '
                f'({100 * share:.1f}% of the time)</summary>{_table(prof, rest, imported)}'
                f'</details>')
    return f'<div style="max-width:100%;overflow-x:auto">{out}</div>'


_CHAR_PX = 6.4          # a 10 px sans-serif character, generously (labels must not touch)


def _label_places(points: list) -> list:
    """``(x, y)`` for each label of ``points`` (``(x, y, text)`` of the dots it names, in
    order of importance), or None where it cannot go: right of its dot, else left of it, else
    a line further down or up on either side, inside the plot and never over a label already
    placed (dots of kernels alike sit on one spot: their labels stack instead of overlapping).
    A label with no room is left out; its dot keeps its tooltip."""
    placed, out = [], []
    for x, y, text in points:
        width = _CHAR_PX * len(text)
        spot = None
        for step in range(17):
            dy = 11 * ((step + 1) // 2) * (1 if step % 2 else -1)
            for lx in (x + 9, x - 9 - width):
                ly = y + 4 + dy
                inside = (_LEFT + 2 <= lx and lx + width <= _LEFT + _W - 2
                          and _TOP + 10 <= ly <= _TOP + _H - 2)
                if inside and not any(abs(ly - py) < 12 and lx < px + pw + 4 and px < lx + width + 4
                                      for px, py, pw in placed):
                    spot = (lx, ly)
                    break
            if spot:
                break
        if spot:
            placed.append((spot[0], spot[1], width))
        out.append(spot)
    return out


def _short_kernel(name: str) -> str:
    return _short(name[len("fused_"):] if name.startswith("fused_") else name, 24)


def _rule(kernel) -> str:
    """The schedule rule that took the kernel, small, the rules that declined it as its
    tooltip."""
    rule = getattr(kernel, "rule", None)
    why = "; ".join(getattr(kernel, "declined", ()))
    title = (f"schedule rule {rule}" if rule else "no schedule rule recorded for it") + (
        f"; declined by {why}" if why else "")
    return (f'<span style="color:{_MUTED};font-size:90%" title="{esc(title)}">'
            f'{esc(rule or "—")}</span>')


def roofline_svg(prof) -> str:
    """Log-log roofline: x = FLOP/byte, y = GFLOP/s; the memory roof (peak GB/s x intensity)
    meets the compute roof (peak GFLOP/s) at the ridge; one dot per kernel with a tooltip,
    the slowest ones labelled; below it, which roof each dot above a roof passed and why."""
    peaks = prof.peaks
    placed = [k for k in prof.kernels if k.flops > 0 and k.bytes > 0 and k.seconds > 0]
    xs = [k.intensity for k in placed] + [peaks.ridge]
    ys = [k.gflops for k in placed] + [peaks.gflops]
    x0 = 10 ** math.floor(math.log10(min(xs) / 2))
    x1 = 10 ** math.ceil(math.log10(max(xs) * 2))
    y0 = 10 ** math.floor(math.log10(min(min(ys), peaks.gbps * x0) / 2))
    y1 = 10 ** math.ceil(math.log10(max(ys) * 1.5))

    def fraction(v, lo, hi):   # where v sits between lo and hi on a log scale
        return (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))

    def px(x):
        return _LEFT + _W * fraction(x, x0, x1)

    def py(y):
        return _TOP + _H * (1 - fraction(y, y0, y1))

    width, height = _LEFT + _W + _RIGHT, _TOP + _H + _BOTTOM
    text = f'style="fill:{_TEXT}"'
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="mlclab-roofline" width="{width}" '
             f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
             f'aria-label="{esc("roofline of " + prof.function)}" '
             f'style="{_FONT};max-width:100%;height:auto">',
             f'<rect x="{_LEFT}" y="{_TOP}" width="{_W}" height="{_H}" '
             f'style="fill:{_PLOT};stroke:{_BORDER}"/>']
    for exp in range(round(math.log10(x0)), round(math.log10(x1)) + 1):
        x = px(10 ** exp)
        parts.append(f'<line x1="{x:.1f}" y1="{_TOP}" x2="{x:.1f}" y2="{_TOP + _H}" '
                     f'style="stroke:{_GRID}"/><text x="{x:.1f}" y="{_TOP + _H + 14}" '
                     f'font-size="10" text-anchor="middle" {text}>{esc(_num(10.0 ** exp))}</text>')
    for exp in range(round(math.log10(y0)), round(math.log10(y1)) + 1):
        y = py(10 ** exp)
        parts.append(f'<line x1="{_LEFT}" y1="{y:.1f}" x2="{_LEFT + _W}" y2="{y:.1f}" '
                     f'style="stroke:{_GRID}"/><text x="{_LEFT - 4}" y="{y + 3:.1f}" '
                     f'font-size="10" text-anchor="end" {text}>{esc(_num(10.0 ** exp))}</text>')
    parts.append(f'<text x="{_LEFT + _W / 2}" y="{height - 4}" font-size="11" '
                 f'text-anchor="middle" {text}>arithmetic intensity (FLOP/byte)</text>'
                 f'<text x="12" y="{_TOP + _H / 2}" font-size="11" text-anchor="middle" '
                 f'transform="rotate(-90 12 {_TOP + _H / 2})" {text}>GFLOP/s</text>')
    # The roofs: bandwidth * intensity up to the ridge, then the compute peak.
    ridge = peaks.ridge
    roofs = (f"roofs: {_num(peaks.gbps)} GB/s memory, {_num(peaks.gflops)} GFLOP/s compute; "
             f"ridge at {_num(ridge)} FLOP/byte")
    roof = f'style="fill:{_ROOF}"'
    parts.append(f'<polyline style="fill:none;stroke:{_ROOF}" stroke-width="2" points="'
                 f'{px(x0):.1f},{py(peaks.gbps * x0):.1f} {px(ridge):.1f},{py(peaks.gflops):.1f} '
                 f'{px(x1):.1f},{py(peaks.gflops):.1f}"><title>{esc(roofs)}</title></polyline>')
    parts.append(f'<text x="{px(x1) - 4:.1f}" y="{py(peaks.gflops) - 4:.1f}" font-size="10" '
                 f'text-anchor="end" {roof}>{esc(f"{_num(peaks.gflops)} GFLOP/s")}</text>'
                 f'<text x="{px(x0) + 4:.1f}" y="{py(peaks.gbps * x0) - 6:.1f}" font-size="10" '
                 f'{roof}>{esc(f"{_num(peaks.gbps)} GB/s")}</text>')
    for k in placed:
        tip = (f"{k.name}: {fmt_time(k.seconds)} ({100 * prof.share(k):.0f}%), "
               f"{_num(k.intensity)} FLOP/byte, {_num(k.gflops)} GFLOP/s, "
               f"{k.percent_of_roof(peaks):.0f}% of roof ({k.bound(peaks)}-bound)")
        r = 4 + 8 * math.sqrt(prof.share(k))
        parts.append(f'<circle class="mlclab-kernel" cx="{px(k.intensity):.1f}" '
                     f'cy="{py(k.gflops):.1f}" r="{r:.1f}" fill-opacity="0.6" '
                     f'style="fill:{_DOT};stroke:{_DOT}"><title>{esc(tip)}</title></circle>')
    # The slowest kernels are named beside their dots (the rest by their tooltips).
    named = sorted(placed, key=lambda k: -k.seconds)[:_LABELLED]
    points = [(px(k.intensity), py(k.gflops), _short_kernel(k.name)) for k in named]
    for spot, (_, _, name) in zip(_label_places(points), points):
        if spot is None:
            continue
        lx, ly = spot
        parts.append(f'<text class="mlclab-kernel-label" x="{lx:.1f}" y="{ly:.1f}" '
                     f'font-size="10" {text}>{esc(name)}</text>')
    parts.append("</svg>")
    return "".join(parts) + _notes(prof, placed)


def _notes(prof, placed: list) -> str:
    """What is not on the plot, and why a dot can sit above its roof: each roof has its own
    reason, so a kernel is explained by the roof it passed."""
    peaks, muted = prof.peaks, f'style="color:{_MUTED}"'
    note = ""
    unplaced = [k.name for k in prof.kernels if k not in placed]
    if unplaced:
        note += (f'<div {muted}>not on the plot (no arithmetic): '
                 f'{esc(", ".join(unplaced))}</div>')
    above = [k for k in placed if k.percent_of_roof(peaks) > 100]
    memory = [k.name for k in above if k.bound(peaks) == "memory"]
    compute = [k.name for k in above if k.bound(peaks) == "compute"]
    if memory:
        # The memory roof is main-memory bandwidth; a working set that fits in the caches
        # (an input the previous kernel just wrote) is served faster than that.
        note += (f'<div {muted}>above the memory roof: {esc(", ".join(memory))} (the roof '
                 f'is main-memory bandwidth as a 32 MiB copy reached it; data the caches still '
                 f'hold, such as an input the previous kernel just wrote, arrives faster, and a '
                 f'busy machine can make the copy slower than the kernel)</div>')
    if compute:
        # The compute roof is what one simple FMA loop reached; it is a measurement, and a
        # kernel that keeps more FMA units busy (or ran while the clock was higher, or the
        # machine less busy) passes it. The caches have nothing to do with it.
        note += (f'<div {muted}>above the compute roof: {esc(", ".join(compute))} (the roof '
                 f'is the best a simple loop of vector multiply-adds reached on this machine, '
                 f'best of 7; a kernel that keeps the multiply-add units busier, or ran at a '
                 f'higher clock or on a less busy machine, passes it: the roof is a '
                 f'measurement, not the hardware\'s limit)</div>')
    return note


def profile_html(prof) -> str:
    """The whole profile as one static HTML fragment: summary, table, roofline, method."""
    summary = (f'<div style="margin-bottom:6px"><b>{esc(prof.function)}</b>: '
               f'{len(prof.kernels)} kernels, {esc(fmt_time(prof.total_seconds))} in kernels '
               f'(medians of {prof.repeat} runs); whole call {esc(fmt_time(prof.call_seconds))}'
               f'</div>')
    # A profile of a build that fell back says so above its numbers (mlclab.backend.record).
    summary += "".join(f'<div class="mlclab-fallback" style="color:#d1242f">fallback: '
                       f'{esc(str(f))}</div>' for f in getattr(prof, "fallbacks", ()))
    method = (f'<div style="color:{_MUTED};margin-top:4px">peaks: '
              f'{esc(_num(prof.peak_gflops))} GFLOP/s, {esc(_num(prof.peak_gbps))} GB/s '
              f'({esc(prof.peaks.method)}). FLOPs and bytes from each kernel\'s TIR loop nest '
              f'(a multiply-add counts 2, max counts 1; bytes = each argument buffer once).</div>')
    return (f'<div class="mlclab-profile" style="{_FONT};color:{_TEXT};border:1px solid '
            f'{_BORDER};border-radius:6px;padding:8px 10px;max-width:100%;box-sizing:border-box;'
            f'overflow:auto">{summary}{profile_table_html(prof)}{roofline_svg(prof)}{method}</div>')


def comparison_html(cmp) -> str:
    """Two profiles side by side: per-kernel times and the b/a ratio, and the totals."""
    header = ["kernel", esc(cmp.a.function) + " (a)", esc(cmp.b.function) + " (b)", "b / a"]
    rows = []
    for name, ka, kb in cmp.rows():
        ratio = (f"{kb.seconds / ka.seconds:.2f}×" if ka and kb and ka.seconds else "")
        rows.append([f"<code>{esc(name)}</code>", esc(fmt_time(ka.seconds)) if ka else "–",
                     esc(fmt_time(kb.seconds)) if kb else "–", esc(ratio)])
    rows.append(["<b>total in kernels</b>", esc(fmt_time(cmp.a.total_seconds)),
                 esc(fmt_time(cmp.b.total_seconds)), f"<b>{esc(f'{cmp.ratio:.2f}×')}</b>"])
    head = "".join(f'<th style="{_HEAD}">{h}</th>' for h in header)
    body = "".join("<tr>" + "".join(f'<td style="{_CELL}">{c}</td>' for c in row) + "</tr>"
                   for row in rows)
    return (f'<div class="mlclab-profile-compare" style="{_FONT};color:{_TEXT};max-width:100%;'
            f'overflow-x:auto"><table style="border-collapse:collapse;margin:4px 0 8px">'
            f'<tr>{head}</tr>{body}</table></div>')
