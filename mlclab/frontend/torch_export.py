"""Capturing a PyTorch module with ``torch.export``: the ATen graph TVM's importer reads.

What export refuses is an :class:`UnsupportedModel` saying why in the student's terms (a
branch on a tensor's value, a batch of 1 under ``dynamic_batch``), never torch's log.
"""
from __future__ import annotations

import contextlib
import re

from ..lang.source import displayable
from .transformers_compat import prepare_for_export

# Dimension 0 of every input when ``dynamic_batch``: its name in signatures and views.
BATCH = "batch"
# torch.export specialises a size of 0 or 1: a dynamic batch needs an example batch of 2+.
SMALLEST_DYNAMIC_BATCH = 2


class UnsupportedModel(ValueError):
    """A model torch.export cannot capture or TVM cannot translate; says which part."""


def export(module, example_args: tuple, dynamic_batch: bool):
    """The ATen program of ``module`` on ``example_args``, decomposed to the core ATen set
    TVM translates (unless it holds sparse tensors: decomposing those aborts the process)."""
    import torch

    exported = _export(module, example_args, dynamic_batch)
    if _holds_sparse(exported):
        # torch's decompositions abort (SIGABRT) on sparse buffers; TVM's own importer skips
        # them for such programs, and so does mlclab.
        return exported
    # torch 2.13's decomposition looks tensor constants made inside a submodule's forward up
    # by their short name ("lifted_tensor_0") while export filed them under the module's
    # ("h.0.attn.lifted_tensor_0"): GPT-2's attention does that. File them under both.
    for key, value in list(exported.constants.items()):
        exported.constants.setdefault(key.rpartition(".")[2], value)
    try:
        with torch.no_grad(), quiet_torch():
            return exported.run_decompositions()
    except Exception as exc:
        raise UnsupportedModel(f"torch could not decompose {type(module).__name__} into the core "
                               f"ATen operators TVM translates: {first_line(exc)}") from None


def _holds_sparse(exported) -> bool:
    import torch

    values = list(exported.state_dict.values()) + list(exported.constants.values())
    return any(isinstance(v, torch.Tensor) and v.layout != torch.strided for v in values)


def _check_names(module) -> None:
    """torch.export writes submodule names into Python source it then compiles: a name with a
    newline, a NUL or a lone surrogate (``add_module`` takes any str) breaks it."""
    for path, _ in module.named_modules():
        for name in path.split("."):
            try:
                name.encode("utf-8")
                plain = name.isprintable()
            except UnicodeEncodeError:
                plain = False
            if not plain:
                shown = name.encode("utf-8", "backslashreplace").decode("ascii", "replace")
                raise UnsupportedModel(
                    f"torch.export cannot capture a submodule named {shown!r} (in "
                    f"{type(module).__name__}): a module name with a newline, NUL, other "
                    f"control character or lone surrogate cannot be written as code; rename it "
                    f"(add_module with a printable name)")


def _export(module, example_args, dynamic_batch):
    import torch

    _check_names(module)
    prepare_for_export(module)
    dynamic_shapes = None
    if dynamic_batch:
        batch = torch.export.Dim(BATCH)
        dynamic_shapes = tuple({0: batch} if a.ndim else None for a in example_args)
        if _takes_varargs(module):       # forward(self, *args): export nests them in a tuple
            dynamic_shapes = (dynamic_shapes,)
    try:
        with torch.no_grad(), quiet_torch():
            return torch.export.export(module, tuple(example_args), dynamic_shapes=dynamic_shapes)
    except Exception as exc:      # torch's own message says what it could not capture
        first = first_line(exc)
        name = type(module).__name__
        if "data-dependent" in str(exc) or "DataDependent" in type(exc).__name__:
            raise UnsupportedModel(
                f"torch.export could not capture {name}: Python control flow on a tensor's "
                f"value{_user_line(exc)} (torch: {first.split(' (')[0].rstrip('.')}). One traced "
                f"run cannot decide such a branch for every input: use torch.where, or move the "
                f"branch out of forward") from None
        if dynamic_batch and ("Constraints violated" in str(exc) or "batch" in first):
            raise UnsupportedModel(
                f"torch.export could not keep dimension 0 of {name}'s inputs symbolic "
                f"(dynamic_batch=True): {first}. The model fixes its batch size somewhere "
                f"(a reshape to a literal size, a buffer of that size); make it use x.shape[0], "
                f"or import with dynamic_batch=False") from None
        raise UnsupportedModel(
            f"torch.export could not capture {name} on the example inputs: {first} (does "
            f"model(*example_args) run in PyTorch?)") from None


def _takes_varargs(module) -> bool:
    import inspect

    try:
        params = list(inspect.signature(module.forward).parameters.values())
    except (TypeError, ValueError):
        return False
    return bool(params) and params[0].kind == inspect.Parameter.VAR_POSITIONAL


def batch_of_two(example_args: tuple) -> tuple:
    """The examples with a batch of 1 (or 0) repeated to 2 along dimension 0: torch.export
    fixes a size of 0 or 1, so a dynamic batch is exported with a larger example."""
    out = []
    for a in example_args:
        if a.ndim and a.shape[0] < SMALLEST_DYNAMIC_BATCH:
            a = a[:1].expand(SMALLEST_DYNAMIC_BATCH, *a.shape[1:]).clone() if a.shape[0] else a
        out.append(a)
    return tuple(out)


@contextlib.contextmanager
def quiet_torch():
    """torch.export prints the graph it was tracing, and logs warnings, when it gives up, and
    warns about its own internals: the error mlclab raises says what matters, so none of that
    reaches a notebook cell."""
    import io
    import logging
    import warnings

    logger = logging.getLogger("torch")
    level = logger.level
    logger.setLevel(logging.ERROR + 1)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), \
                warnings.catch_warnings():
            # torch's own deprecation notices about its internals ("LeafSpec is deprecated")
            warnings.simplefilter("ignore", FutureWarning)
            yield
    finally:
        logger.setLevel(level)


def _user_line(exc) -> str:
    """Where in the model's code torch.export gave up (its message quotes the line), as
    `` at forward, line 8: `if h.sum() > 0:```, or ""."""
    found = re.search(r'File "[^"]*", line (\d+), in (\w+)\n[ \t]+(\S.*)', str(exc))
    if not found:
        return ""
    line, function, code = found.groups()
    return f" at {function}, line {line}: `{displayable(code.strip())}`"


def first_line(exc) -> str:
    """The first non-blank line of ``exc``'s message (TVM's and torch's run to pages)."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return displayable((lines[0] if lines else type(exc).__name__)[:300])
