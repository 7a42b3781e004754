"""The course site: built by `python -m mlclab.course site`, every page opens in a real browser from
disk, fetches nothing from the network, links to the others, and shows what the lesson's cells
printed (an exercise check's verdict included)."""
import re
import subprocess
import sys

import pytest

from conftest import REPO

pytestmark = pytest.mark.browser
LESSONS = [REPO / "lessons" / "04-let-binding-vs-graph-binding.ipynb",
           REPO / "lessons" / "09-generating-ir-boilerplate.ipynb"]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, "-m", "mlclab.course", "site", out, *LESSONS], cwd=out,
                          env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def visit(page, url):
    outside = []
    page.route(re.compile(r"^(https?|wss?)://"), lambda route: (outside.append(route.request.url), route.abort()))
    page.goto(url)
    page.wait_for_load_state("load")
    return outside


def test_every_page_opens_offline_and_links_resolve(site, page):
    pages = sorted(site.glob("*.html"))
    assert {p.name for p in pages} == {"index.html", "glossary.html", *(f"{p.stem}.html" for p in LESSONS)}
    for path in pages:
        outside = visit(page, path.as_uri())
        assert outside == [], f"{path.name} fetched {outside}"
        for href in page.eval_on_selector_all("a[href]", "els => els.map(e => e.getAttribute('href'))"):
            if not re.match(r"[a-z]+:|#", href) and href.endswith(".html"):
                assert (site / href.split("#")[0]).exists() or href.split("#")[0] in {
                    "01-why-deep-learning-compilers.html", "03-relax-ir-and-computation-graphs.html",
                    "05-adts-and-pattern-matching.html", "08-the-compiler-pipeline-and-operator-fusion.html",
                    "10-bring-your-own-model.html"}, (path.name, href)   # lessons this small site leaves out


def test_a_lesson_page_shows_its_outputs_and_the_exercise_verdict(site, page):
    visit(page, (site / "04-let-binding-vs-graph-binding.html").as_uri())
    assert page.locator("h1").first.inner_text().startswith("Lesson 4")
    verdict = page.locator(".mlclab-exercise")
    assert verdict.count() == 1 and "UNCHANGED" in verdict.inner_text()
    # The graphs the lesson draws, as SVG images inside the page, decoded by the browser.
    widths = page.eval_on_selector_all("img[src^='data:image/svg+xml']", "els => els.map(e => e.naturalWidth)")
    assert len(widths) >= 1 and all(w > 0 for w in widths), widths
    visit(page, (site / "index.html").as_uri())
    page.click("text=Lesson 4")
    assert page.url.endswith("04-let-binding-vs-graph-binding.html")


def test_the_glossary_page_has_both_languages(site, page):
    visit(page, (site / "glossary.html").as_uri())
    text = page.locator("table").inner_text()
    assert "roofline" in text and "屋顶线模型" in text
