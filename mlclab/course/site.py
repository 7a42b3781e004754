"""A static site of the lessons: each lesson executed and exported to HTML, an index and the
glossary, readable offline (no script, style or font fetched from anywhere).

    python -m mlclab.course site OUTDIR [LESSON.ipynb ...]   # then: python -m http.server -d OUTDIR

Why nbconvert and not Jupyter Book 2 / mystmd: mystmd's site themes are downloaded at build time
(its book theme is not published on PyPI or npm as a built template), and this project builds
without network. Widgets cannot run without a kernel, so their views are dropped; each viewer
display also carries its self-contained interactive HTML twin (mlclab.notebook.page: script,
style and drawn views inline), which nbconvert keeps as raw HTML, so the site's viewers pan,
zoom, select and search with no kernel and no network.
"""
from __future__ import annotations

import html
import re
from pathlib import Path

import nbformat

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
LESSONS_DIR = Path(__file__).resolve().parents[2] / "lessons"
# Nothing widens the page (issue 30: the ResNet-18 lesson's page was 4,484 px wide): an
# output, a table, a code block or a picture wider than the text column scrolls or shrinks in
# its own box; table cells break between words, never inside a number.
_STYLE = ("body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;"
          "line-height:1.5}"
          "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px}"
          "nav a{margin-right:1rem}"
          # nbconvert's basic template (classic classes) and its lab template (jp- classes)
          ".output_subarea,.input_area,.text_cell_render,.jp-OutputArea-output,.jp-InputArea,"
          ".jp-RenderedMarkdown{max-width:100%;min-width:0;overflow-x:auto}"
          "pre{max-width:100%;overflow-x:auto}"
          "img{max-width:100%;height:auto}"
          "table{display:block;max-width:100%;overflow-x:auto}"
          "td,th{overflow-wrap:normal;word-break:keep-all}")


def _page(title: str, body: str) -> str:
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{_STYLE}</style></head><body><nav><a href='index.html'>All lessons</a>"
            f"<a href='glossary.html'>Glossary</a></nav>{body}</body></html>")


def _offline(nb) -> None:
    """Keep what reads without a kernel or a network: drop widget views where a static twin
    exists."""
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            static = "text/html" in data or "image/svg+xml" in data or "text/plain" in data
            if WIDGET_MIME in data and static:
                data.pop(WIDGET_MIME)
    nb.metadata.pop("widgets", None)


def _markdown_html(text: str) -> str:
    from nbconvert.filters.markdown_mistune import markdown2html_mistune
    return markdown2html_mistune(text)


def _relink(text: str) -> str:
    """Links between lessons and to the glossary point at the site's pages."""
    def target(m):
        name = "index" if m.group(1) == "README" else m.group(1)
        return f'href="{name}.html{m.group(3) or ""}"'

    return re.sub(r'href="([^"#:/]+)\.(ipynb|md)(#[^"]*)?"', target, text)


def lesson_page(path: Path, execute: bool = True, timeout_s: int = 600) -> str:
    from nbclient import NotebookClient
    from nbconvert import HTMLExporter

    nb = nbformat.read(path, as_version=4)
    if execute:
        NotebookClient(nb, kernel_name="python3", timeout=timeout_s, allow_errors=True,
                       resources={"metadata": {"path": str(path.parent)}}).execute()
    _offline(nb)
    exporter = HTMLExporter(template_name="basic")   # no MathJax, require.js or CDN widget manager
    body, _ = exporter.from_notebook_node(nb)
    title = next((c.source.splitlines()[0].lstrip("# ") for c in nb.cells
                  if c.cell_type == "markdown"), path.stem)
    return _page(title, _relink(body))


def build(outdir: Path, lessons: list[Path] | None = None, execute: bool = True,
          progress=None) -> list[Path]:
    """Write OUTDIR/index.html, OUTDIR/glossary.html and one page per lesson; returns the pages.
    ``progress(text)`` hears each lesson as it starts and ends (executing one takes 10-100 s)."""
    import time
    lessons = lessons or sorted(LESSONS_DIR.glob("[0-9A][0-9]-*.ipynb"))
    outdir.mkdir(parents=True, exist_ok=True)
    pages = []
    items = []
    for number, path in enumerate(lessons, 1):
        page = outdir / f"{path.stem}.html"
        started = time.monotonic()
        if progress:
            doing = "executing" if execute else "exporting"
            progress(f"[{number}/{len(lessons)}] {doing} {path.name} ...")
        page.write_text(lesson_page(path, execute), encoding="utf-8")
        if progress:
            took = time.monotonic() - started
            progress(f"[{number}/{len(lessons)}] {page.name} written in {took:.0f} s")
        pages.append(page)
        title = nbformat.read(path, as_version=4).cells[0].source.splitlines()[0].lstrip("# ")
        items.append(f"<li><a href='{html.escape(page.name)}'>{html.escape(title)}</a></li>")
    glossary = (path.parent if lessons else LESSONS_DIR) / "glossary.md"
    glossary_html = _relink(_markdown_html(glossary.read_text(encoding="utf-8")))
    (outdir / "glossary.html").write_text(_page("Glossary", glossary_html), encoding="utf-8")
    # <ul>, not <ol>: each title carries its own number ("Lesson 8", "Appendix A1")
    (outdir / "index.html").write_text(
        _page("The mlclab course", "<h1>The mlclab course</h1><ul>" + "".join(items) + "</ul>"),
        encoding="utf-8")
    return [outdir / "index.html", outdir / "glossary.html", *pages]
