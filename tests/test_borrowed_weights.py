"""An imported model's large weights are read in PyTorch's memory while it is built, and the
executable owns copies only of what it keeps as it is (frontend.borrowed, backend.own_constants):
packed or re-laid-out weights are not copied first, the compiled code never changes with the
module, and a later build from the imported module refuses weights that changed."""
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import mlclab
from mlclab.frontend.borrowed import BORROW_MIN_BYTES, WeightsChanged


class Lookup(torch.nn.Module):
    """An embedding (read by ``take``: kept as it is) and a linear layer (packed)."""

    def __init__(self):
        super().__init__()
        self.table = torch.nn.Embedding(1024, 512)          # 2 MB
        self.proj = torch.nn.Linear(512, 768)               # 1.5 MB

    def forward(self, ids):
        return self.proj(self.table(ids))


def compiled():
    torch.manual_seed(0)
    model = Lookup().eval()
    ids = torch.tensor([[3, 1000, 7]])
    return model, ids, mlclab.from_torch(model, ids)


def constants_of(mod):
    from tvm import relax
    from tvm.ir.expr import Constant

    found = []
    for _, func in mod.functions_items():
        if isinstance(func, relax.Function):
            relax.analysis.post_order_visit(
                func, lambda e: found.append(e.value)
                if isinstance(e, Constant) and hasattr(e.value, "shape") else None)
    return found


def reads(tensor, torch_tensor) -> bool:
    start = torch_tensor.data_ptr()
    return start <= tensor.data_ptr() < start + torch_tensor.nbytes


def test_large_weights_are_lent_and_only_kept_ones_copied():
    model, _, fn = compiled()
    loans = fn.program.imported.loans
    assert len(loans) == 2 and loans.nbytes == (1024 * 512 + 768 * 512) * 4
    assert model.proj.bias.nbytes < BORROW_MIN_BYTES          # small ones are copied
    # the imported module reads PyTorch's memory: no copy of the model was made at import
    imported = constants_of(fn.program.mod)
    assert any(reads(c, model.table.weight) for c in imported)
    assert any(reads(c, model.proj.weight) for c in imported)
    # the build's last module (what the executable holds) reads none of it: the table is
    # the model's one copy, the linear weight only its packed panels (never copied whole)
    final = constants_of(fn.build_record.runs[-1].mod)
    assert not any(reads(c, p) for c in final for p in model.parameters())
    table, proj = loans._loans
    assert table.owned is not None and any(c.same_as(table.owned) for c in final)
    assert proj.owned is None
    assert any(len(c.shape) == 3 and np.prod(c.shape) == 768 * 512 for c in final)


def test_the_traced_build_copies_no_weight(monkeypatch):
    from mlclab.frontend import borrowed

    copies = []
    copy = borrowed._copy
    monkeypatch.setattr(borrowed, "_copy", lambda t: copies.append(tuple(t.shape)) or copy(t))
    model, ids, fn = compiled()
    assert copies == [(1024, 512)]                    # the table, which the build keeps as is
    report = mlclab.validate(fn, ids.numpy())
    assert report.ok, report
    assert fn.name in fn.program.built._traces        # the traced build was made...
    assert copies == [(1024, 512)]                    # ...reading the weights in place


def test_the_traced_build_refuses_weights_changed_since_it_was_made():
    model, ids, fn = compiled()
    x = ids.numpy()
    first = fn.trace(x)
    np.testing.assert_array_equal(fn.trace(x)[next(iter(first))], first[next(iter(first))])
    kept = model.table.weight[3, 0].item()
    with torch.no_grad():
        model.table.weight[3, 0] += 1.0                # one number, in place
    with pytest.raises(WeightsChanged, match="changed in place after from_torch"):
        fn.trace(x)
    with torch.no_grad():
        model.table.weight[3, 0] = kept                # back as compiled: it runs again
    assert fn.trace(x).keys() == first.keys()


def test_training_after_import_changes_nothing_compiled_and_a_rebuild_refuses():
    model, ids, fn = compiled()
    x = ids.numpy()
    before = fn(x)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(1.0)                                    # what optimizer.step() does
    np.testing.assert_array_equal(fn(x), before)
    with pytest.raises(WeightsChanged, match=r"changed in place after from_torch.*from_torch "
                                             r"again"):
        fn.trace(x)
    report = mlclab.validate(fn, x)                        # outputs only, and it says why
    assert not report.ok                                   # the module is another model now
    assert "changed in place after from_torch" in report._repr_html_()


def test_a_lent_weight_is_never_freed_under_the_compiled_function():
    # In a subprocess: reading freed memory would crash the process, not fail the test.
    code = textwrap.dedent("""
        import gc, numpy as np, torch, mlclab
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Embedding(1024, 512), torch.nn.Linear(512, 768))
        ids = torch.tensor([[3, 1000, 7]])
        fn = mlclab.from_torch(model, ids)
        before = fn(ids.numpy())
        try:              # PyTorch refuses to re-allocate a storage exported through DLPack
            model[0].weight.data.resize_(4096, 4096)
        except RuntimeError as exc:
            print("resize refused:", "not resizable" in str(exc))
        for p in model.parameters():       # new storages for the module: the lent ones stay
            p.data = torch.full((4096, 4096), 7.0)
        del model, p
        gc.collect()
        torch.randn(64, 1024, 1024)        # reuse what was freed
        np.testing.assert_array_equal(fn(ids.numpy()), before)
        trace = fn.trace(ids.numpy())      # the weights compiled, still held
        print("traced:", len(trace) > 0)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "resize refused: True" in out.stdout and "traced: True" in out.stdout, out.stdout


def test_a_built_model_holds_its_weights_once_beside_pytorchs():
    # Resident memory in a fresh process, over the weights' size: the imported module no
    # longer holds a copy of its own (it held one, then the build its packed panels: 2x).
    code = textwrap.dedent("""
        import gc, numpy as np, torch, mlclab
        def rss():
            return int(open("/proc/self/statm").read().split()[1]) * 4096
        torch.manual_seed(0)
        model = torch.nn.Sequential(*[torch.nn.Linear(2048, 2048) for _ in range(8)]).eval()
        x = torch.randn(1, 2048)
        warm = mlclab.from_torch(torch.nn.Linear(8, 16), torch.randn(1, 8))   # TVM, LLVM
        gc.collect()
        before = rss()
        fn = mlclab.from_torch(model, x)
        gc.collect()
        weights = sum(p.nbytes for p in model.parameters())
        print((rss() - before) / weights)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    ratio = float(out.stdout.split()[-1])
    assert ratio < 1.5, f"the build holds {ratio:.2f}x the weights (1 expected, 2 before)"
