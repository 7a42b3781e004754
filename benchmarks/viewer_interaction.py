"""The viewer at real size (issue 20): first display and interactions on an imported model.

Imports torchvision's ResNet-18 (224x224; or ``--model encoder12``, a 12-layer transformer
encoder over 128 tokens; not timed), then measures, median of --repeat runs:

- python: ``fn.viewer()`` (the first view model: parse, fold by module, texts with anchors,
  overlays, Graphviz) and the view model's JSON size; ``open_module("layer3")`` (the kernel's
  relayout after a click); ``save()`` of every view;
- browser (Chromium at /usr/bin/chromium, skipped without it): the saved file opened from
  disk until its graph is drawn; then in the page, each timed with ``performance.now()``:
  a search that zooms to its matches, selecting a node (details and text lines), fit.

    python benchmarks/viewer_interaction.py [--repeat 3] [--model resnet18|encoder12]
    python benchmarks/viewer_interaction.py --lab resnet50|bert

``--lab``: ResNet-50 or a BERT-base (transformers ``BertConfig()``, random weights) in a real
JupyterLab: first display, and opening/closing modules by clicks (``viewer_lab.py``).

Issue 20's targets: interactions under 100 ms, first display under 1 s.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import tempfile
import time


def median_time(fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def resnet18():
    import torch

    import mlclab

    tv = mlclab.import_torchvision()
    torch.manual_seed(0)
    return mlclab.from_torch(tv.models.resnet18(weights=None), torch.randn(1, 3, 224, 224))


def encoder12():
    """A BERT-base-shaped encoder's graph: 12 layers, 12 heads, 128 tokens (d_model 768 would
    not change the graph, only the compile time, so 64 wide)."""
    import torch

    import mlclab

    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128,
                                             dropout=0.0, batch_first=True)
    model = torch.nn.TransformerEncoder(layer, num_layers=12, enable_nested_tensor=False).eval()
    return mlclab.from_torch(model, torch.randn(1, 128, 64))


MODELS = {"resnet18": resnet18, "encoder12": encoder12}


def browser_times(path: str, repeat: int) -> dict:
    from playwright.sync_api import sync_playwright

    out = {}
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path="/usr/bin/chromium",
                              args=["--no-sandbox", "--disable-gpu", "--no-first-run"])
        page = b.new_page(viewport={"width": 1400, "height": 1000})
        loads = []
        for _ in range(repeat):
            start = time.perf_counter()
            page.goto(f"file://{path}")
            page.locator("svg.mlclab-graph g.node").first.wait_for()
            loads.append(time.perf_counter() - start)
        out["open saved file, graph drawn (s)"] = statistics.median(loads)
        timed = """([what, arg]) => {
            const v = document.querySelector('.mlclab-viewer');
            const t0 = performance.now();
            if (what === 'search') { const s = v.querySelector('.mlclab-search'); s.value = arg;
                                     s.dispatchEvent(new Event('input')); }
            if (what === 'select') { const g = v.querySelector('g.node');
                g.dispatchEvent(new PointerEvent('pointerdown', {bubbles: true, button: 0}));
                g.dispatchEvent(new PointerEvent('pointerup', {bubbles: true, button: 0})); }
            if (what === 'fit') v.querySelector('.mlclab-fit').click();
            v.getBoundingClientRect();                     // force style and layout
            return performance.now() - t0; }"""
        for what, arg in (("search", "conv"), ("select", ""), ("fit", "")):
            runs = [page.evaluate(timed, [what, arg]) for _ in range(repeat)]
            out[f"{what} (ms)"] = statistics.median(runs)
        b.close()
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--model", choices=sorted(MODELS), default="resnet18")
    ap.add_argument("--lab", choices=("resnet50", "bert"),
                    help="time first display and module folding in a real JupyterLab instead")
    args = ap.parse_args(argv)
    if args.lab:
        from viewer_lab import main as lab

        lab([args.lab, "--repeat", str(args.repeat)])
        return
    fn = MODELS[args.model]()
    import mlclab.notebook  # noqa: F401  (IPython and anywidget: loaded in any notebook already)

    rows = {}
    viewer = None

    def first():
        nonlocal viewer
        viewer = fn.viewer()
    # The first call pays for parsing the graph and printing the texts; later ones reuse them.
    # (Outside a notebook the very first also imports IPython, ~1.5 s: not counted.)
    rows["fn.viewer(), first call (s)"] = median_time(first, 1)
    rows["fn.viewer(), again (s)"] = median_time(first, args.repeat)
    rows["view model JSON (kB)"] = len(json.dumps(viewer.current)) / 1e3
    rows["nodes drawn / total"] = f"{len(viewer.nodes)} / {viewer.current['overview']['total']}"
    module = "layer3" if args.model == "resnet18" else "layers.5"
    rows[f"open_module({module!r}), relaid out (s)"] = median_time(
        lambda: (setattr(viewer, "open_modules", []), viewer.open_module(module)), args.repeat)
    viewer.open_modules = []
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "resnet18.html"
        rows["save(): every view (s)"] = median_time(lambda: viewer.save(path), 1)
        rows["saved file (kB)"] = path.stat().st_size / 1e3
        if pathlib.Path("/usr/bin/chromium").exists():
            rows.update(browser_times(str(path), args.repeat))
    for key, value in rows.items():
        print(f"{key:45s} {value:.3f}" if isinstance(value, float) else f"{key:45s} {value}")


if __name__ == "__main__":
    main()
