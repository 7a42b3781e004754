"""Lesson 13's exercise: a static KV cache's update, written as an ``nn.Module`` and checked
through ``from_torch`` against numpy on random caches and positions."""
import numpy as np

from ..spec import Exercise, Misconception, Probe, Unanswered

HEADS, MAX_LEN, HEAD_DIM, NEW = 4, 16, 8, 1
SIGNATURE = (f"cache: Tensor[(1, {HEADS}, {MAX_LEN}, {HEAD_DIM}), f32], "
             f"new: Tensor[(1, {HEADS}, {NEW}, {HEAD_DIM}), f32], pos: Tensor[({NEW},), i64]")


def _written(cache, new, pos):
    out = cache.copy()
    out[:, :, pos] = new
    return out


def _added(cache, new, pos):
    out = cache.copy()
    out[:, :, pos] += new
    return out


def _one_later(cache, new, pos):
    out = cache.copy()
    out[:, :, np.minimum(pos + 1, MAX_LEN - 1)] = new
    return out


def _cache_write_callables(cache_write, namespace):
    import torch

    from ...api.torch_model import from_torch

    if not isinstance(cache_write, type) or not issubclass(cache_write, torch.nn.Module):
        raise Unanswered("`CacheWrite` should be an nn.Module class.")
    try:
        module = cache_write()
    except Exception as exc:
        raise Unanswered(f"CacheWrite() failed: {type(exc).__name__}: {exc}", "failed")
    examples = (torch.zeros(1, HEADS, MAX_LEN, HEAD_DIM), torch.ones(1, HEADS, NEW, HEAD_DIM),
                torch.tensor([3]))
    try:
        compiled = from_torch(module, *examples)
    except Exception as exc:
        raise Unanswered(f"from_torch could not compile your CacheWrite: "
                         f"{str(exc).splitlines()[0][:400]}", "failed")
    return {"your compiled `CacheWrite`": compiled}


CACHE_WRITE = Exercise(
    key="13-cache-write", title="Lesson 13: write the static cache", answer="CacheWrite",
    reference=_written, signature=SIGNATURE, adapt=_cache_write_callables, submit="outputs",
    ranges={"pos": (0, MAX_LEN)}, trials=4, rtol=0, atol=0,
    misconceptions=[
        Misconception(lambda c, n, p: c,
                      "the cache came back unchanged: the new keys were never written."),
        Misconception(_added, "the new keys were added to what the slot held; a cache slot is "
                              "overwritten (index_copy, or cache[:, :, pos] = new), not summed."),
        Misconception(_one_later, "the keys landed one slot after `pos`: position p is slot p "
                                  "(the first token is at position 0)."),
    ],
    probes=[Probe(lambda rng: [rng.standard_normal((1, HEADS, MAX_LEN, HEAD_DIM)).astype("f4"),
                               rng.standard_normal((1, HEADS, NEW, HEAD_DIM)).astype("f4"),
                               np.array([MAX_LEN - 1])],
                  "the last slot of the cache (pos = max_len - 1) must be written too.")],
    hints=["Only the slots at `pos` along dimension 2 (the sequence) change; every other slot "
           "keeps what it held.",
           "PyTorch has one call for it: `tensor.index_copy(dim, index, source)`.",
           "Out of place (`index_copy`, not `index_copy_`) the new cache is what forward returns, "
           "which is what the compiled function gives back (an in-place write compiles too, "
           "with a warning)."],
)

EXERCISES = [CACHE_WRITE]
