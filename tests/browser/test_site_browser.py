"""The course site: built by `python -m mlclab.course site`, every page opens in a real browser from
disk, fetches nothing from the network, links to the others, shows what the lesson's cells
printed (an exercise check's verdict included), and its viewers are live: a click on a node
answers in the details pane, with no kernel and no network (issue 22).

The site is built from three lessons, not all of them (the whole course takes minutes to
execute): lesson 3 (a viewer), lesson 4 (Graphviz pictures and an exercise) and appendix A2."""
import re
import subprocess
import sys

import pytest

from conftest import REPO

pytestmark = pytest.mark.browser
LESSONS = [REPO / "lessons" / "03-relax-ir-and-computation-graphs.ipynb",
           REPO / "lessons" / "04-let-binding-vs-graph-binding.ipynb",
           REPO / "lessons" / "A2-generating-ir-boilerplate.ipynb"]


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
    page.route(re.compile(r"^(https?|wss?)://"),
               lambda route: (outside.append(route.request.url), route.abort()))
    page.goto(url)
    page.wait_for_load_state("load")
    return outside


def viewers_drawn(page):
    """The number of viewers on the page, once each has drawn its graph from the page alone."""
    viewers = page.locator(".mlclab-viewer")
    for i in range(viewers.count()):
        viewers.nth(i).locator("svg.mlclab-graph g.node").first.wait_for(timeout=15_000)
    return viewers.count()


def test_every_page_opens_offline_and_links_resolve(site, page):
    pages = sorted(site.glob("*.html"))
    lessons = {f"{p.stem}.html" for p in LESSONS}
    assert {p.name for p in pages} == {"index.html", "glossary.html", *lessons}
    for path in pages:
        outside = visit(page, path.as_uri())
        drawn = viewers_drawn(page)
        assert outside == [], f"{path.name} fetched {outside}"
        assert drawn == (1 if path.name.startswith("03-") else 0), (path.name, drawn)
        hrefs = page.eval_on_selector_all("a[href]", "els => els.map(e => e.getAttribute('href'))")
        for href in hrefs:
            if not re.match(r"[a-z]+:|#", href) and href.endswith(".html"):
                assert (site / href.split("#")[0]).exists() or href.split("#")[0] in {
                    "02-building-an-ast-based-frontend.html",
                    "05-blockbuilder-and-framework-integration.html"}, (path.name, href)
                # (lessons this small site leaves out)


def test_a_lesson_page_shows_its_outputs_and_the_exercise_verdict(site, page):
    visit(page, (site / "04-let-binding-vs-graph-binding.html").as_uri())
    assert page.locator("h1").first.inner_text().startswith("Lesson 4")
    verdict = page.locator(".mlclab-exercise")
    assert verdict.count() == 1 and "UNCHANGED" in verdict.inner_text()
    # The graphs the lesson draws, as SVG inline in the page (their text/html), laid out with nodes.
    drawn = page.eval_on_selector_all(
        "div.mlclab-graph > svg",
        "els => els.map(e => [e.getBoundingClientRect().width, "
        "e.querySelectorAll('g.node').length])")
    assert len(drawn) >= 3 and all(w > 0 and n > 0 for w, n in drawn), drawn
    visit(page, (site / "index.html").as_uri())
    page.click("text=Lesson 4")
    assert page.url.endswith("04-let-binding-vs-graph-binding.html")


def test_the_glossary_page_has_both_languages(site, page):
    visit(page, (site / "glossary.html").as_uri())
    text = page.locator("table").inner_text()
    assert "roofline" in text and "屋顶线模型" in text


def test_a_viewer_on_a_lesson_page_answers_a_click(site, page, screenshot):
    page.set_viewport_size({"width": 1100, "height": 900})
    outside = visit(page, (site / "03-relax-ir-and-computation-graphs.html").as_uri())
    assert viewers_drawn(page) == 1
    viewer = page.locator(".mlclab-viewer")
    # The cell that draws it is the one the site shows it under, not a leftover widget repr.
    cell = page.locator(".code_cell", has=viewer)
    assert "cnn.viewer()" in cell.locator(".input_area").inner_text()
    h2 = viewer.locator('g.node[id="cnn:h2"]')
    h2.click()
    details = viewer.locator(".mlclab-details").text_content()
    assert "cnn:h2" in details and "h2 = block2(h1, w2, b2)" in details, details
    assert viewer.locator("g.node.mlclab-selected").get_attribute("id") == "cnn:h2"
    # Search finds every call of an operator, without a kernel.
    viewer.locator(".mlclab-search").fill("softmax")
    assert viewer.locator("g.node.mlclab-match").count() >= 1
    assert outside == []
    screenshot("site-lesson-03-viewer")
