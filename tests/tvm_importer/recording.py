"""What ``cases.py`` (generated) calls: ``record`` stands where TVM's tests checked its
importer, and ``collect`` runs every test function of the file to gather the cases."""
from __future__ import annotations

import itertools

_RECORDED: list = []


def record(torch_model, example_args=None, *_, args=None, dynamic_shapes=None, **__):
    """One case: what TVM's test checked its importer on."""
    if example_args is None:
        example_args = args
    _RECORDED.append((torch_model, tuple(example_args), dynamic_shapes))


def _param_id(value) -> str:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return str(value)
    name = getattr(value, "__name__", None) or str(value)
    return name.replace("torch.ops.", "").replace(" ", "")


def _parametrizations(func) -> list:
    """Every keyword set pytest's ``parametrize`` marks on ``func`` would call it with."""
    tables = []
    for mark in getattr(func, "pytestmark", []):
        if mark.name != "parametrize":
            continue
        argnames, values = mark.args[0], mark.args[1]
        names = ([n.strip() for n in argnames.split(",")] if isinstance(argnames, str)
                 else list(argnames))
        rows = [v if len(names) > 1 else (v,) for v in values]
        tables.append([dict(zip(names, row)) for row in rows])
    return [{k: v for part in combo for k, v in part.items()}
            for combo in itertools.product(*tables)]


def collect(namespace: dict) -> list:
    """``[(case_id, module, example_args, dynamic_shapes)]`` for every ``test_*`` function in
    ``namespace``, in file order.

    The id is ``test_name[params]:k`` -- the k-th check (0-based) of that parametrization.
    Each parametrization runs with torch's seed set to 0, so the example inputs are the same
    on every call and in every process.
    """
    import torch

    cases = []
    for name, func in list(namespace.items()):
        if not (name.startswith("test_") and callable(func)):
            continue
        for kwargs in _parametrizations(func):
            params = "-".join(_param_id(v) for v in kwargs.values())
            label = f"{name}[{params}]" if kwargs else name
            torch.manual_seed(0)
            _RECORDED.clear()
            func(**kwargs)
            cases.extend((f"{label}:{k}", module, example, dynamic)
                         for k, (module, example, dynamic) in enumerate(_RECORDED))
    _RECORDED.clear()
    return cases
