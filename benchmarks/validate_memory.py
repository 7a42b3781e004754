"""Peak memory of ``validate`` on a BERT-base-sized model (random weights, nothing downloaded).

    python benchmarks/validate_memory.py [--layers 12] [--seq 128]

Prints the resident memory before ``validate`` and its peak during it (the kernel's VmHWM,
reset just before), in MB. Issue 21 measured 6.1 GB for BERT-base at seq 128; the target is
that validate needs well under the sum of both sides' intermediates at once.
"""
import argparse
import time


def _status(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise KeyError(field)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--seq", type=int, default=128)
    args = ap.parse_args()

    import mlclab

    mlclab.import_torchvision()
    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    config = BertConfig(num_hidden_layers=args.layers)
    model = BertModel(config).eval()
    ids = torch.randint(0, config.vocab_size, (1, args.seq))
    start = time.perf_counter()
    fn = mlclab.from_torch(model, ids)
    print(f"from_torch: {time.perf_counter() - start:.1f} s, optimized={fn.program.optimized}")
    fn(ids.numpy())                      # the VM and first-call state exist before measuring
    before = _status("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")                     # reset VmHWM to the current RSS
    start = time.perf_counter()
    report = mlclab.validate(fn, ids.numpy())
    took = time.perf_counter() - start
    peak = _status("VmHWM")
    print(f"validate: {took:.1f} s, ok={report.ok}, {len(report.bindings)} bindings, "
          f"max_abs_err={report.max_abs_err:.3g}")
    print(f"RSS before validate {before / 2**20:,.0f} MB; peak during it {peak / 2**20:,.0f} MB "
          f"(+{(peak - before) / 2**20:,.0f} MB)")


if __name__ == "__main__":
    main()
