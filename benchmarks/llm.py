"""GPT-2 small generating text: prefill and decode tokens per second, separately (as
llama.cpp reports prompt processing and generation), through mlclab against PyTorch eager,
torch.compile and ONNX Runtime, at 1 and 2 threads (issue 32).

    python benchmarks/llm.py [--threads 1,2] [--rounds N] [--layers 12] [--no-compile]
    python benchmarks/llm.py --quick      # 2 layers, 1 thread, 3 rounds, no torch.compile

The model is GPT-2 small's architecture from ``transformers.GPT2Config()`` with random
weights (seed 0; nothing is downloaded), written as lesson 13 writes it: a plain
``nn.Module`` whose decode step keeps a **static** KV cache (``PROMPT + NEW`` slots, the
position an input, the cache written with ``index_copy``), with the weights of a
``transformers.GPT2LMHeadModel`` built from that config (its logits are checked against
Hugging Face's). The head is its own copy of the token embedding (GPT-2 ties them; see
docs/performance.md).

Each thread count runs in a process of its own (TVM's thread pool is sized once per
process; PyTorch, torch.compile and ONNX Runtime get the same count). There every runtime
generates the same way: the **prefill** of a ``PROMPT``-token prompt, then ``NEW`` greedy
**decode steps** feeding their caches back, each phase timed within every generation. The
runtimes take turns round by round, the order rotating, and each must choose eager's tokens.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from timing import SETTLE_S  # noqa: E402

RESULT = "LLM-RESULT "
PROMPT, NEW = 128, 32
CHILD_TIMEOUT = 3600
DROPPED = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")  # see run_all.py


def static_gpt2(layers: int):
    """(the static-cache GPT-2 module, the Hugging Face model its weights came from)."""
    import torch
    import torch.nn.functional as F
    from torch import nn

    import mlclab
    mlclab.import_torchvision()       # transformers imports torchvision (see zoo.py)
    import transformers

    class Block(nn.Module):
        def __init__(self, width, heads):
            super().__init__()
            self.heads = heads
            self.ln_1, self.ln_2 = nn.LayerNorm(width), nn.LayerNorm(width)
            self.c_attn, self.c_proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
            self.c_fc, self.mlp_proj = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)

        def forward(self, x, pos, k_cache, v_cache):
            b, t, d = x.shape
            q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2)
                       for z in self.c_attn(self.ln_1(x)).split(d, dim=2))
            k_cache = k_cache.index_copy(2, pos, k)
            v_cache = v_cache.index_copy(2, pos, v)
            scores = q @ k_cache.transpose(-2, -1) / math.sqrt(d // self.heads)
            seen = torch.arange(k_cache.shape[2])[None, :] <= pos[:, None]
            attn = scores.masked_fill(~seen, float("-inf")).softmax(dim=-1)
            x = x + self.c_proj((attn @ v_cache).transpose(1, 2).reshape(b, t, d))
            x = x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))
            return x, k_cache, v_cache

    class GPT(nn.Module):
        def __init__(self, vocab, width, heads, layers, max_len):
            super().__init__()
            self.cache_shape = (layers, 1, heads, max_len, width // heads)
            self.wte, self.wpe = nn.Embedding(vocab, width), nn.Embedding(max_len, width)
            self.h = nn.ModuleList(Block(width, heads) for _ in range(layers))
            self.ln_f = nn.LayerNorm(width)
            self.lm_head = nn.Linear(width, vocab, bias=False)

        def forward(self, ids, pos, k_cache, v_cache):
            x = self.wte(ids) + self.wpe(pos)
            keys, values = [], []
            for i, block in enumerate(self.h):
                x, k, v = block(x, pos, k_cache[i], v_cache[i])
                keys.append(k)
                values.append(v)
            return self.lm_head(self.ln_f(x)[:, -1, :]), torch.stack(keys), torch.stack(values)

    torch.manual_seed(0)
    cfg = transformers.GPT2Config(n_layer=layers)
    hf = transformers.GPT2LMHeadModel(cfg).eval()
    ours = GPT(cfg.vocab_size, cfg.n_embd, cfg.n_head, layers, PROMPT + NEW).eval()
    state = {"wte.weight": hf.transformer.wte.weight, "lm_head.weight": hf.lm_head.weight,
             "wpe.weight": hf.transformer.wpe.weight[:PROMPT + NEW],
             "ln_f.weight": hf.transformer.ln_f.weight, "ln_f.bias": hf.transformer.ln_f.bias}
    conv1d = {"c_attn": "attn.c_attn", "c_proj": "attn.c_proj", "c_fc": "mlp.c_fc",
              "mlp_proj": "mlp.c_proj"}
    for i, block in enumerate(hf.transformer.h):
        for ln in ("ln_1", "ln_2"):
            state[f"h.{i}.{ln}.weight"] = getattr(block, ln).weight
            state[f"h.{i}.{ln}.bias"] = getattr(block, ln).bias
        for mine, theirs in conv1d.items():
            layer = block.get_submodule(theirs)          # Conv1D: weight is (in, out)
            state[f"h.{i}.{mine}.weight"] = layer.weight.T
            state[f"h.{i}.{mine}.bias"] = layer.bias
    ours.load_state_dict({k: v.detach().clone().contiguous() for k, v in state.items()})
    return ours, hf


def _greedy(prefill, decode, prompt, cache_shape, clock=None):
    """The ``NEW`` tokens chosen greedily after ``prompt``; ``prefill``/``decode`` take and
    return numpy arrays. With ``clock``, also the seconds of the prefill and of the
    ``NEW`` decode steps."""
    import numpy as np

    clock = clock or time.perf_counter
    k = np.zeros(cache_shape, np.float32)
    v = np.zeros(cache_shape, np.float32)
    started = clock()
    logits, k, v = prefill(prompt, np.arange(PROMPT), k, v)
    prefilled = clock()
    tokens = []
    for step in range(NEW):
        tokens.append(int(np.argmax(logits)))
        logits, k, v = decode(np.array([[tokens[-1]]]), np.array([PROMPT + step]), k, v)
    return tokens, prefilled - started, clock() - prefilled


def _rounds(fns: dict, prompt, cache_shape, rounds: int):
    """Median prefill and per-step decode ms of each runtime over ``rounds`` generations,
    the runtimes taking turns in an order that rotates round by round (as
    ``timing.interleave``), so that each round's load falls on all of them. Each generation
    starts after ``SETTLE_S`` idle: the previous runtime's workers spin after its last call
    (ONNX Runtime's ~30 ms, OpenBLAS's ~100 ms), and a prefill would otherwise share a core
    with them, as a user's, started after they typed a prompt, never does."""
    import gc
    import statistics
    import time

    names = list(fns)
    prefill, decode = {n: [] for n in names}, {n: [] for n in names}
    gc.disable()
    try:
        for k in range(rounds):
            turn = names[k % len(names):] + names[:k % len(names)]
            for name in (turn if k % 2 == 0 else turn[::-1]):
                time.sleep(SETTLE_S)
                _, p, d = _greedy(*fns[name], prompt, cache_shape)
                prefill[name].append(p * 1e3)
                decode[name].append(d * 1e3 / NEW)
    finally:
        gc.enable()
    return ({n: statistics.median(v) for n, v in prefill.items()},
            {n: statistics.median(v) for n, v in decode.items()})


def _torch_fn(module):
    import numpy as np
    import torch

    def run(*arrays):
        with torch.inference_mode():
            out = module(*(torch.from_numpy(np.asarray(a)) for a in arrays))
        return [t.numpy() for t in out]
    return run


def _onnx_fns(model, examples, threads):
    """ONNX Runtime sessions for prefill and decode, as functions of numpy arrays."""
    import io

    import onnxruntime as ort
    import torch

    fns = []
    for example in examples:
        buffer = io.BytesIO()
        torch.onnx.export(model, example, buffer, dynamo=False, opset_version=17,
                          input_names=["ids", "pos", "k_cache", "v_cache"])
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        session = ort.InferenceSession(buffer.getvalue(), options,
                                       providers=["CPUExecutionProvider"])
        names = [i.name for i in session.get_inputs()]

        def run(*arrays, session=session, names=names):
            return session.run(None, dict(zip(names, arrays)))
        fns.append(run)
    return fns


def measure(threads: int, rounds: int, layers: int, with_compile: bool) -> dict:
    import numpy as np
    import torch

    import mlclab
    from mlclab import tvm_setup

    torch.set_num_threads(threads)
    model, hf = static_gpt2(layers)
    result = {"threads": threads, "layers": layers, "load": os.getloadavg()[0], "missing": {}}
    rng = np.random.default_rng(0)
    prompt = rng.integers(0, 50257, (1, PROMPT))
    empty = torch.zeros(model.cache_shape)
    prefill_ex = (torch.from_numpy(prompt), torch.arange(PROMPT), empty, empty.clone())
    decode_ex = (torch.tensor([[0]]), torch.tensor([PROMPT]), empty, empty.clone())
    with torch.inference_mode():
        want = hf(torch.from_numpy(prompt)).logits[:, -1].numpy()
        got = model(*prefill_ex)[0].numpy()
    result["vs_hf"] = float(np.abs(got - want).max() / np.abs(want).max())

    tvm_setup.tvm()
    started = time.perf_counter()
    fns = {"mlclab": (mlclab.from_torch(model, *prefill_ex), mlclab.from_torch(model, *decode_ex))}
    result["compile_s"] = time.perf_counter() - started
    fns["eager"] = (_torch_fn(model), _torch_fn(model))
    if with_compile:
        try:
            compiled = torch.compile(model)
            fns["torch.compile"] = (_torch_fn(compiled), _torch_fn(compiled))
        except Exception as exc:
            result["missing"]["torch.compile"] = _short(exc)
    try:
        fns["onnxruntime"] = tuple(_onnx_fns(model, (prefill_ex, decode_ex), threads))
    except ImportError:
        result["missing"]["onnxruntime"] = "not installed (pip install 'mlclab[zoo]')"
    except Exception as exc:
        result["missing"]["onnxruntime"] = _short(exc)

    tokens = {}
    for name, (prefill, decode) in list(fns.items()):
        try:                            # also the warm-up: torch.compile compiles here
            tokens[name] = _greedy(prefill, decode, prompt, model.cache_shape)[0]
        except Exception as exc:
            result["missing"][name] = _short(exc)
            del fns[name]
    result["same_tokens"] = {name: t == tokens["eager"] for name, t in tokens.items()}
    result["rounds"] = rounds
    result["prefill_ms"], result["decode_ms"] = _rounds(fns, prompt, model.cache_shape, rounds)
    result["load_after"] = os.getloadavg()[0]
    return result


def _short(exc: Exception) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return f"{type(exc).__name__}: {(lines[0] if lines else '')[:160]}"


def _child(threads: int, rounds: int, layers: int, with_compile: bool) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in DROPPED}
    env.update(TVM_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    cmd = [sys.executable, str(Path(__file__).resolve()), "--one", "--threads", str(threads),
           "--rounds", str(rounds), "--layers", str(layers)] + \
        ([] if with_compile else ["--no-compile"])
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=CHILD_TIMEOUT, env=env)
    except subprocess.TimeoutExpired:
        return {"threads": threads, "error": f"over {CHILD_TIMEOUT} s"}
    for line in out.stdout.splitlines():
        if line.startswith(RESULT):
            return json.loads(line[len(RESULT):])
    tail = (out.stderr.strip().splitlines() or ["?"])[-1]
    return {"threads": threads, "error": f"exit {out.returncode}: {tail[:200]}"}


HEADER = ("| threads | runtime | prefill tok/s | prefill / eager | decode tok/s | "
          "decode / eager | same tokens | load |\n" + "| --- " * 8 + "|")


def rows(result: dict) -> list:
    if "error" in result:
        return [f"| {result['threads']} | error: {result['error']} |"]
    out = []
    eager_p, eager_d = result["prefill_ms"]["eager"], result["decode_ms"]["eager"]
    load = f"{result['load']:.1f}-{result['load_after']:.1f}"
    for name in result["prefill_ms"]:
        p, d = result["prefill_ms"][name], result["decode_ms"][name]
        same = "yes" if result["same_tokens"].get(name) else "NO"
        out.append(f"| {result['threads']} | {name} | {PROMPT / p * 1e3:.0f} | {p / eager_p:.2f}x "
                   f"| {1e3 / d:.1f} | {d / eager_d:.2f}x | {same} | {load} |")
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved generations")
    parser.add_argument("--layers", type=int, default=12, help="GPT-2 small has 12")
    parser.add_argument("--no-compile", action="store_true", help="leave torch.compile out")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: 2 layers, 1 thread, 3 rounds, no torch.compile")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        args.layers, args.threads, args.rounds, args.no_compile = 2, "1", 3, True
    if args.one:
        result = measure(int(args.threads), args.rounds, args.layers, not args.no_compile)
        print(RESULT + json.dumps(result), flush=True)
        return 0
    print(f"GPT-2 small ({args.layers} layers, random weights), a {PROMPT}-token prompt, "
          f"{NEW} new tokens, static cache of {PROMPT + NEW}; ratios are time / eager's "
          f"(under 1: faster), load = 1-minute load average before-after\n")
    print(HEADER)
    results = []
    for threads in [int(t) for t in args.threads.split(",")]:
        result = _child(threads, args.rounds, args.layers, not args.no_compile)
        results.append(result)
        print("\n".join(rows(result)), flush=True)
    for result in results:
        for name, why in result.get("missing", {}).items():
            print(f"\n{result['threads']} thread(s), {name} missing: {why}")
        if "compile_s" in result:
            print(f"\n{result['threads']} thread(s): mlclab compiled prefill and decode in "
                  f"{result['compile_s']:.0f} s; our module's logits vs Hugging Face's GPT-2: "
                  f"{result['vs_hf']:.1e} relative")
    return 0


if __name__ == "__main__":
    sys.exit(main())
