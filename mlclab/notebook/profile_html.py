"""Static HTML of a profile: the kernel table (slowest first, share of the whole) and a
roofline drawn as inline SVG by mlclab itself. No script and no widget, so nbconvert, nbviewer
and GitHub show the same thing as the live notebook; every label is escaped.
"""
from __future__ import annotations

import math

from .report_html import _CELL, _FONT, _HEAD, _MONO, esc, fmt_time

_W, _H = 460, 300                       # the plot area of the roofline, in px
_LEFT, _BOTTOM, _TOP, _RIGHT = 56, 36, 12, 16
_DOT = "#b91c1c"
_ROOF = "#1d4ed8"


def _num(x: float) -> str:
    return f"{x:.3g}"


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _bytes(n: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n} B"


def profile_table_html(prof) -> str:
    """The kernels, slowest first, with time (median, spread), share, work and roofline place."""
    header = ["kernel", "time (median)", "spread", "share", "FLOPs", "bytes", "FLOP/byte",
              "GFLOP/s", "GB/s", "% of roof", "bound by", "schedule rule", "DSL lines"]
    rows = []
    for k in prof.by_time():
        share = prof.share(k)
        bar = (f'<span style="display:inline-block;width:{round(60 * share)}px;height:8px;'
               f'background:{_DOT};margin-right:4px"></span>')
        rows.append([f"<code>{esc(k.name)}</code>", esc(fmt_time(k.seconds)),
                     esc(f"{fmt_time(k.spread[0])} – {fmt_time(k.spread[1])}"),
                     bar + esc(f"{100 * share:.1f}%"), esc(f"{k.flops:,}"), esc(_bytes(k.bytes)),
                     esc(_num(k.intensity)), esc(_num(k.gflops)), esc(_num(k.gbps)),
                     esc(f"{k.percent_of_roof(prof.peaks):.0f}%"), esc(k.bound(prof.peaks)),
                     _rule(k),
                     "<br>".join(f'<code style="{_MONO}">{esc(_short(f"{n}: {t}"))}</code>'
                                 for n, t in zip(k.lines, k.code))])
    head = "".join(f'<th style="{_HEAD}">{esc(h)}</th>' for h in header)
    body = "".join("<tr>" + "".join(f'<td style="{_CELL}">{c}</td>' for c in row) + "</tr>"
                   for row in rows)
    return f'<table style="border-collapse:collapse;margin:4px 0 8px"><tr>{head}</tr>{body}</table>'


def _rule(kernel) -> str:
    """The schedule rule that took the kernel, the rules that declined it as its tooltip."""
    why = "; ".join(getattr(kernel, "declined", ()))
    title = f' title="declined: {esc(why)}"' if why else ""
    return f"<span{title}>{esc(getattr(kernel, 'rule', None) or '—')}</span>"


def roofline_svg(prof) -> str:
    """Log-log roofline: x = FLOP/byte, y = GFLOP/s; the memory roof (peak GB/s x intensity)
    meets the compute roof (peak GFLOP/s) at the ridge; one dot per kernel, with a tooltip."""
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
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="mlclab-roofline" width="{width}" '
             f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
             f'aria-label="{esc("roofline of " + prof.function)}" style="{_FONT}">',
             f'<rect x="{_LEFT}" y="{_TOP}" width="{_W}" height="{_H}" fill="#fff" '
             f'stroke="#d0d7de"/>']
    for exp in range(round(math.log10(x0)), round(math.log10(x1)) + 1):
        x = px(10 ** exp)
        parts.append(f'<line x1="{x:.1f}" y1="{_TOP}" x2="{x:.1f}" y2="{_TOP + _H}" '
                     f'stroke="#eef1f4"/><text x="{x:.1f}" y="{_TOP + _H + 14}" font-size="10" '
                     f'text-anchor="middle">{esc(_num(10.0 ** exp))}</text>')
    for exp in range(round(math.log10(y0)), round(math.log10(y1)) + 1):
        y = py(10 ** exp)
        parts.append(f'<line x1="{_LEFT}" y1="{y:.1f}" x2="{_LEFT + _W}" y2="{y:.1f}" '
                     f'stroke="#eef1f4"/><text x="{_LEFT - 4}" y="{y + 3:.1f}" font-size="10" '
                     f'text-anchor="end">{esc(_num(10.0 ** exp))}</text>')
    parts.append(f'<text x="{_LEFT + _W / 2}" y="{height - 4}" font-size="11" '
                 f'text-anchor="middle">arithmetic intensity (FLOP/byte)</text>'
                 f'<text x="12" y="{_TOP + _H / 2}" font-size="11" text-anchor="middle" '
                 f'transform="rotate(-90 12 {_TOP + _H / 2})">GFLOP/s</text>')
    # The roofs: bandwidth * intensity up to the ridge, then the compute peak.
    ridge = peaks.ridge
    roofs = (f"roofs: {_num(peaks.gbps)} GB/s memory, {_num(peaks.gflops)} GFLOP/s compute; "
             f"ridge at {_num(ridge)} FLOP/byte")
    parts.append(f'<polyline fill="none" stroke="{_ROOF}" stroke-width="2" points="'
                 f'{px(x0):.1f},{py(peaks.gbps * x0):.1f} {px(ridge):.1f},{py(peaks.gflops):.1f} '
                 f'{px(x1):.1f},{py(peaks.gflops):.1f}"><title>'
                 f'{esc(roofs)}'
                 f'</title></polyline>')
    parts.append(f'<text x="{px(x1) - 4:.1f}" y="{py(peaks.gflops) - 4:.1f}" font-size="10" '
                 f'text-anchor="end" fill="{_ROOF}">{esc(f"{_num(peaks.gflops)} GFLOP/s")}</text>'
                 f'<text x="{px(x0) + 4:.1f}" y="{py(peaks.gbps * x0) - 6:.1f}" font-size="10" '
                 f'fill="{_ROOF}">{esc(f"{_num(peaks.gbps)} GB/s")}</text>')
    for k in placed:
        tip = (f"{k.name}: {fmt_time(k.seconds)} ({100 * prof.share(k):.0f}%), "
               f"{_num(k.intensity)} FLOP/byte, {_num(k.gflops)} GFLOP/s, "
               f"{k.percent_of_roof(peaks):.0f}% of roof ({k.bound(peaks)}-bound)")
        r = 4 + 8 * math.sqrt(prof.share(k))
        parts.append(f'<circle class="mlclab-kernel" cx="{px(k.intensity):.1f}" '
                     f'cy="{py(k.gflops):.1f}" r="{r:.1f}" fill="{_DOT}" fill-opacity="0.6" '
                     f'stroke="{_DOT}"><title>{esc(tip)}</title></circle>')
    parts.append("</svg>")
    unplaced = [k.name for k in prof.kernels if k not in placed]
    note = (f'<div style="color:#57606a">not on the plot (no arithmetic): '
            f'{esc(", ".join(unplaced))}</div>' if unplaced else "")
    above = [k.name for k in placed if k.percent_of_roof(peaks) > 100]
    if above:
        # The memory roof is main-memory bandwidth; a working set that fits in the caches
        # (an input the previous kernel just wrote) is served faster than that.
        note += (f'<div style="color:#57606a">above the memory roof: {esc(", ".join(above))} '
                 f'(its data came from the caches, faster than the main-memory bandwidth the '
                 f'roof is measured at)</div>')
    return "".join(parts) + note


def profile_html(prof) -> str:
    """The whole profile as one static HTML fragment: summary, table, roofline, method."""
    summary = (f'<div style="margin-bottom:6px"><b>{esc(prof.function)}</b>: '
               f'{len(prof.kernels)} kernels, {esc(fmt_time(prof.total_seconds))} in kernels '
               f'(medians of {prof.repeat} runs); whole call {esc(fmt_time(prof.call_seconds))}'
               f'</div>')
    # A profile of a build that fell back says so above its numbers (mlclab.backend.record).
    summary += "".join(f'<div class="mlclab-fallback" style="color:#d1242f">fallback: '
                       f'{esc(str(f))}</div>' for f in getattr(prof, "fallbacks", ()))
    method = (f'<div style="color:#57606a;margin-top:4px">peaks: '
              f'{esc(_num(prof.peak_gflops))} GFLOP/s, {esc(_num(prof.peak_gbps))} GB/s '
              f'({esc(prof.peaks.method)}). FLOPs and bytes from each kernel\'s TIR loop nest '
              f'(a multiply-add counts 2, max counts 1; bytes = each argument buffer once).</div>')
    return (f'<div class="mlclab-profile" style="{_FONT};border:1px solid #d0d7de;'
            f'border-radius:6px;padding:8px 10px;max-width:100%;overflow:auto">{summary}'
            f'{profile_table_html(prof)}{roofline_svg(prof)}{method}</div>')


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
    return (f'<div class="mlclab-profile-compare" style="{_FONT}"><table style="border-collapse:'
            f'collapse;margin:4px 0 8px"><tr>{head}</tr>{body}</table></div>')
