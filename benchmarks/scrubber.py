"""The pass scrubber at real size: Python time to prepare it (every pass's graph and diff), to
draw every pass in its stable layout, and the browser time of one scrub step (slider input to
the next pass drawn and placed), on ResNet-18 and a 12-layer BERT-base-sized encoder.

    python benchmarks/scrubber.py [resnet18|bert]...
    python benchmarks/scrubber.py --traffic [resnet18|bert]...

The browser part opens the saved scrubber (``save()``: no kernel, so it times the front end
alone) in Chromium and steps through every pass with the arrow key, pressed every 150 ms (as a
student steps) and held (each press as soon as the step before is drawn); the median and the
worst step, and the three slowest passes, are printed.

``--traffic`` counts what the live scrubber sends to the front end instead (the JSON of every
comm message, no browser): at creation, on the first visit to each pass in order, and on each
visit after "draw all" on the last pass. Needs /usr/bin/chromium and Playwright.
"""
import statistics
import sys
import tempfile
import time

import mlclab


def resnet18():
    mlclab.import_torchvision()
    import torch
    import torchvision

    return mlclab.from_torch(torchvision.models.resnet18().eval(), torch.randn(1, 3, 224, 224))


def bert():
    mlclab.import_torchvision()
    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    model = BertModel(BertConfig(num_hidden_layers=12, hidden_size=768, num_attention_heads=12,
                                 intermediate_size=3072)).eval()
    return mlclab.from_torch(model, torch.randint(0, 30000, (1, 128)))


STEP = """async (pause) => {
  const v = document.querySelector('.mlclab-viewer'), c = v.querySelector('.mlclab-canvas');
  c.focus();
  const times = [];
  for (let k = 0; k < 60; k++) {
    const before = v.querySelector('.mlclab-pass').textContent;
    if (pause) await new Promise((r) => setTimeout(r, pause));
    const t0 = performance.now();
    c.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowRight', bubbles: true }));
    if (v.querySelector('.mlclab-pass').textContent === before) break;
    await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
    times.push([performance.now() - t0, v.querySelector('.mlclab-pass').textContent,
      v.querySelectorAll('svg.mlclab-graph g.node').length]);
  }
  return times;
}"""


# A student stepping with the arrow key: a press every 150 ms or more (the passes one step away
# are parsed in the idle time between); "held" presses the next as soon as a step is drawn.
PAUSE = 150


def browser_steps(path):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path="/usr/bin/chromium",
                              args=["--no-sandbox", "--disable-gpu"])
        page = b.new_page(viewport={"width": 1100, "height": 900})
        page.goto(f"file://{path}")
        page.wait_for_selector("svg.mlclab-graph g.node")
        held = page.evaluate(STEP, 0)
        page.reload()
        page.wait_for_selector("svg.mlclab-graph g.node")
        pressed = page.evaluate(STEP, PAUSE)
        b.close()
    return held, pressed


def main(names):
    for name in names:
        t = time.perf_counter()
        fn = {"resnet18": resnet18, "bert": bert}[name]()
        built = time.perf_counter() - t
        from mlclab.notebook.scrubber import pass_scrubber

        t = time.perf_counter()
        s = pass_scrubber(fn)
        prepare = time.perf_counter() - t
        t = time.perf_counter()
        s.draw_all()
        drawn = time.perf_counter() - t
        nodes = max(len(v["nodes"]) for v in s.views.values())
        path = tempfile.mktemp(suffix=".html")
        s.save(path)
        held, pressed = browser_steps(path)
        print(f"{name}: build {built:.1f} s; scrubber prepared in {prepare:.2f} s "
              f"(first pass drawn), "
              f"all {len(s.views)} passes drawn in {drawn:.2f} s (largest {nodes} nodes)")
        for how, timed in (("pressed every 150 ms", pressed), ("held (back to back)", held)):
            steps = [t for t, _, _ in timed]
            slowest = sorted(timed, reverse=True)[:3]
            print(f"  browser step, {how}: median {statistics.median(steps):.1f} ms, "
                  f"worst {max(steps):.1f} ms over {len(steps)} steps; slowest: "
                  + "; ".join(f"{label.split(' (')[0]} {t:.0f} ms ({n} nodes)"
                              for t, label, n in slowest))


def traffic(names):
    import json

    from comm import DummyComm

    from mlclab.notebook.scrubber import pass_scrubber

    sent = [0]
    DummyComm.publish_msg = lambda self, msg_type, data=None, metadata=None, buffers=None, **keys: \
        sent.__setitem__(0, sent[0] + len(json.dumps(data, default=str)))

    def mb(x):
        return f"{x / 1e6:.2f} MB"

    for name in names:
        fn = {"resnet18": resnet18, "bert": bert}[name]()
        sent[0] = 0
        s = pass_scrubber(fn)
        created, first, whole = sent[0], [], []
        for visits, order in ((first, list(s.views)[1:]), (whole, None)):
            if order is None:
                s.unfold()
                order = list(s.views)[:-1]
            for view in order:
                sent[0] = 0
                s.view = view
                visits.append(sent[0])
        print(f"{name}: created {mb(created)}; first visits to {len(first)} passes "
              f"{mb(sum(first))} (largest {mb(max(first))}); after 'draw all' {mb(sum(whole))} "
              f"(largest {mb(max(whole))})")


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--traffic"]:
        traffic(args[1:] or ["resnet18", "bert"])
    else:
        main(args or ["resnet18", "bert"])
