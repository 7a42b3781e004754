"""A comparison's pairs made from single-side layouts (notebook/compare_pairs.py): each side's
fold state is laid out once and shared by every pair that draws it, the marks of a pair are
written into the sanitized SVG's text exactly as marking the parsed drawing writes them, and
the pairs one click away are ordered by how likely the click is."""
import pytest

torch = pytest.importorskip("torch")

import mlclab  # noqa: E402
from mlclab.notebook.compare_pairs import mark_svg, mark_svg_text  # noqa: E402
from mlclab.notebook.viewer import sanitize_svg  # noqa: E402


@pytest.fixture(scope="module")
def layer():
    torch.manual_seed(0)
    model = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128,
                                             dropout=0.0, batch_first=True)
    return mlclab.from_torch(model, torch.randn(2, 16, 64))


def counting_drawings(monkeypatch) -> list:
    """The sides a comparison lays out from now on: (open modules, full) of each."""
    import mlclab.notebook.compare_sides as sides_module

    calls = []
    real = sides_module.draw_view
    monkeypatch.setattr(sides_module, "draw_view", lambda *a, **k: (
        calls.append((k.get("open_modules"), k.get("full"))), real(*a, **k))[1])
    return calls


def test_marking_the_text_writes_what_marking_the_parsed_drawing_writes(layer):
    c = mlclab.compare(layer, (layer, "FuseOps"), full=True)
    svg = sanitize_svg(c.right["geometry"]["svg"])
    ids = [nid for nid in c.right["nodes"] if f'id="{nid}"' in svg]
    changes = {nid: ("added", "removed", "changed")[k % 3] for k, nid in enumerate(ids[::4])}
    assert len(changes) > 5
    assert mark_svg_text(svg, changes) == mark_svg(svg, changes)
    assert mark_svg_text(svg, {}) == svg and mark_svg_text("", changes) == ""


def test_marking_the_text_finds_escaped_ids_and_leaves_inner_groups_alone():
    svg = sanitize_svg(
        '<svg xmlns="http://www.w3.org/2000/svg"><g id="a&amp;&quot;b" class="node">'
        '<title>x</title><g id="a_inner"><path d="M0,0" stroke="black"/></g>'
        '<polygon fill="white" stroke="black" points="0,0 1,1"/></g>'
        '<g class="node" id="other"><ellipse rx="1"/></g><rect width="1" id="lone"/></svg>')
    changes = {'a&"b': "removed", "other": "added", "lone": "changed", "missing": "added"}
    marked = mark_svg_text(svg, changes)
    assert marked == mark_svg(svg, changes)
    assert 'class="node mlclab-removed"' in marked and 'stroke-dasharray="6,3"' in marked
    assert '<path d="M0,0" stroke="black" />' in marked       # not a direct child: as drawn


def test_a_pair_that_keeps_one_side_as_it_was_lays_out_only_the_other(layer, monkeypatch):
    c = mlclab.compare(layer, (layer, "FuseOps"))
    calls = counting_drawings(monkeypatch)
    c.fold_left = {**c.fold_left, "full": True}            # "draw all" on the left only
    assert calls == [(None, True)]
    c.fold_right = {**c.fold_right, "full": True}          # now both: the left is kept
    assert calls == [(None, True), (None, True)]
    c.fold_left = {**c.fold_left, "full": False}           # the left's first look: kept too
    assert len(calls) == 2


def test_the_marks_of_a_pair_are_the_pairs_and_never_leak_into_a_shared_side(layer):
    c = mlclab.compare(layer, (layer, "FuseOps"))
    first_left = c.left
    c.fold_right = {**c.fold_right, "full": True}          # a new pair, the same left side
    c.fold_right = {**c.fold_right, "full": False}         # back: the first pair, as it was
    assert c.left == first_left
    again = mlclab.compare(layer, (layer, "FuseOps"))
    assert again.left == first_left and again.right == c.right      # deterministic


def test_the_likely_clicks_come_first_the_biggest_module_before_smaller_and_closes_last(layer):
    c = mlclab.compare(layer, (layer, "FuseOps"))
    ops = {ns["path"]: ns["ops"] for ns in c.left["namespaces"].values() if ns["kind"] == "module"}
    opened = [next(iter(l["open_modules"] or ["-"])) for l, _r in c.next_pairs()]
    assert set(opened) == {"linear1", "linear2", "self_attn"}
    firsts = list(dict.fromkeys(opened))
    assert [ops[p] for p in firsts] == sorted((ops[p] for p in firsts), reverse=True)
    assert firsts[0] == "self_attn"
    c.open_module("left", "self_attn")
    closes = [not set(c.fold_left["open_modules"]) <= set(l["open_modules"])
              for l, _r in c.next_pairs()]
    assert closes == sorted(closes) and closes[-1]          # the close after every open
