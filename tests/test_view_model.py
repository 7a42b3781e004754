"""The view model (mlclab.viz.view_model): the one contract between the IR and every display.
Its schema is docs/view-model.md; these tests are its specification."""
import json
import re
from pathlib import Path

import pytest

import mlclab
from programs import SAME_NAME_CALLS
from mlclab.notebook.graphs import view_payload, viewer_views
from mlclab.viz.model import Cluster, Graph, Node
from mlclab.viz.overlays import register_overlay, unregister_overlay
from mlclab.viz.view_model import SCHEMA, VERSION, build, check, from_json, to_json



@pytest.fixture(scope="module")
def calls():
    return mlclab.compile(SAME_NAME_CALLS)["main"]


@pytest.mark.parametrize("view", ["dataflow", "let", "tree", "fused"])
def test_every_view_model_round_trips_through_json(calls, view):
    vm = view_payload(calls, view)
    assert vm["schema"] == SCHEMA and vm["version"] == VERSION
    assert from_json(to_json(vm)) == vm
    assert json.loads(json.dumps(vm)) == vm
    # Edges are data, and the drawing names each one by its index.
    assert vm["edges"] and all(f'id="edge:{k}"' in vm["geometry"]["svg"]
                               for k in range(len(vm["edges"])))
    assert all(f'id="{nid}"' in vm["geometry"]["svg"] for nid in vm["nodes"])


def test_anchors_link_each_y_to_its_own_function_in_every_text(calls):
    # Issue 19's case: main's y = exp(x) calls g's y = log(a).
    vm = view_payload(calls, "dataflow")
    for style in ("let", "relax"):
        lines = vm["texts"][style].splitlines()
        main_y = lines[vm["nodes"]["main:y"]["anchors"][style] - 1]
        g_y = lines[vm["nodes"]["g:y"]["anchors"][style] - 1]
        assert "exp(" in main_y and "log(" not in main_y, style
        assert "log(" in g_y and "exp(" not in g_y, style


def test_namespaces_are_one_hierarchy_and_folded_nodes_say_what_they_fold():
    foo = mlclab.compile("def foo(a: Tensor[(2, 3), f32], b: Tensor[(3, 4), f32]):\n"
                         "    return relu(a @ b)\n")["foo"]
    whole = foo.graph("fused", collapse=None).graph
    group = next(cid for cid, c in whole.clusters.items() if c.kind == "fused")
    vm = build(whole.fold([group]), whole)
    ns = vm["namespaces"][group]
    assert ns["folded"] and ns["kind"] == "fused" and isinstance(ns["nodes"], int)
    (box,) = [n for n in vm["nodes"].values() if n["folded"]]
    assert box["folded"]["namespace"] == group and box["folded"]["nodes"] == ns["nodes"]
    assert box["namespace"] == ns["parent"]


def hand_made():
    g = Graph("f")
    g.add_cluster(Cluster("fn:f", "fn f", "function"))
    g.add_cluster(Cluster("fn:f/module:blk", "blk · Block", "module", "fn:f", path="blk",
                          detail="Block()"))
    for nid, kind in (("f:x", "param"), ("f:a", "op"), ("f:b", "op"), ("f:c", "op")):
        g.add_node(Node(nid, kind, nid[2:], name=nid[2:], value=nid,
                        group="fn:f/module:blk" if nid in ("f:a", "f:b") else "fn:f"))
    g.add_edge("f:x", "f:a")
    g.add_edge("f:a", "f:b")
    g.add_edge("f:b", "f:c")
    g.outputs = ["f:c"]
    return g


def test_overlays_are_layers_summed_up_on_folded_nodes():
    g = hand_made()
    folded = g.fold(["fn:f/module:blk"])
    vm = build(folded, g, overlays={
        "validation": {"f:a": {"status": "ok", "text": "ok"},
                       "f:b": {"status": "diverged", "text": "differs"}},
        # One kernel run twice: two calls, both counted.
        "profile": {
            "f:a": {"kernel": "k1", "call": 0, "share": 0.25, "fill": "#ffffff", "text": "k1"},
            "f:b": {"kernel": "k1", "call": 1, "share": 0.5, "fill": "#ffffff", "text": "k1"},
            "f:c": {"kernel": "k3", "call": 2, "share": 0.25, "fill": "#ffffff", "text": "k3"}}})
    box = "collapsed:fn:f/module:blk"
    check_ = vm["overlays"]["validation"][box]
    assert check_["status"] == "diverged" and check_["text"].startswith("1 of 2 checked values")
    time = vm["overlays"]["profile"][box]
    assert time["share"] == pytest.approx(0.75) and time["hottest"] == "f:b"
    assert time["text"].startswith("75 % of time in 2 kernel calls")
    assert time["badge"] == "75 % of time"
    # "jump to hottest" knows what to open on the way.
    assert time["reveal"] == ["fn:f", "fn:f/module:blk"]
    assert vm["overlays"]["profile"]["f:c"]["share"] == 0.25
    assert "a" in vm["overlays"]["search"][box]["text"].split()


def test_a_new_overlay_is_one_registration():
    g = hand_made()
    register_overlay("bytes", lambda entries, members: {
        "text": f"{sum(e['value'] for e in entries.values())} bytes inside"})
    try:
        vm = build(g.fold(["fn:f/module:blk"]), g,
                   overlays={"bytes": {"f:a": {"value": 3, "text": "3"},
                                       "f:b": {"value": 4, "text": "4"}}})
        assert vm["overlays"]["bytes"]["collapsed:fn:f/module:blk"]["text"] == "7 bytes inside"
    finally:
        unregister_overlay("bytes")
    with pytest.raises(ValueError, match="unknown overlay 'bytes'"):
        build(g, overlays={"bytes": {}})


@pytest.mark.parametrize("entry, message", [
    ({"status": "maybe"}, "status must be one of ok, diverged"),
    ({"fill": "red"}, "fill must be a #rrggbb colour"),
    ("ok", "an entry is a dict"),
])
def test_bad_overlay_entries_name_the_layer_and_node(entry, message):
    with pytest.raises(ValueError, match=f"overlay 'validation', node 'f:a': {message}"):
        build(hand_made(), overlays={"validation": {"f:a": entry}})


def test_check_refuses_what_is_not_this_schema():
    vm = build(hand_made())
    check(vm)
    with pytest.raises(ValueError, match="not a view model"):
        check({"nodes": {}})
    with pytest.raises(ValueError, match="version 99"):
        check({**vm, "version": 99})
    broken = json.loads(json.dumps(vm))
    broken["edges"].append({"src": "f:x", "dst": "f:gone", "index": 0, "kind": "data", "label": ""})
    with pytest.raises(ValueError, match="'f:gone' names a node not in the model"):
        check(broken)
    broken = json.loads(json.dumps(vm))
    broken["namespaces"]["fn:f"]["nodes"] = "4"
    with pytest.raises(ValueError, match="namespace 'fn:f': 'nodes' has type str"):
        check(broken)


def test_the_schema_document_names_every_key_the_code_writes():
    doc = (Path(__file__).resolve().parent.parent / "docs" / "view-model.md").read_text()
    assert f"version {VERSION}" in doc and SCHEMA in doc
    from mlclab.viz.view_model import EDGE_KEYS, NAMESPACE_KEYS, NODE_KEYS

    for key in [*NODE_KEYS, *NAMESPACE_KEYS, *EDGE_KEYS, "overlays", "geometry", "texts",
                "anchors", "copies", "reveal", "hottest"]:
        assert re.search(f"`{key}`", doc), key
    assert viewer_views()[-1] == "fused"


def test_a_new_namespace_kind_is_one_registration():
    from mlclab.notebook.graphs import draw_view
    from mlclab.viz.namespaces import register_namespace_kind, unregister_namespace_kind

    g = hand_made()
    g.clusters["fn:f/module:blk"] = Cluster("fn:f/stage:1", "stage 1", "stage", "fn:f")
    with pytest.raises(ValueError, match="unknown namespace kind 'stage'"):
        build(g)
    register_namespace_kind("stage", {"style": "dashed", "color": "#0e7490"}, collapse=True)
    try:
        vm = draw_view(g)
        assert vm["namespaces"]["fn:f/module:blk"]["kind"] == "stage"
        assert vm["namespaces"]["fn:f/module:blk"]["collapse"]
        assert not vm["namespaces"]["fn:f"]["collapse"]
        assert "#0e7490" in vm["geometry"]["svg"]
        folded = build(g.fold(["fn:f/module:blk"]), g)
        (box,) = [n for n in folded["nodes"].values() if n["folded"]]
        assert box["folded"]["kind"] == "stage" and box["folded"]["nodes"] == 2
    finally:
        unregister_namespace_kind("stage")
