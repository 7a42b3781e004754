"""A PyTorch module's weights read in place while it is imported and built, and owned only
where the compiled code keeps them.

Copying every weight at import (what mlclab did) held each one three times once a model was
built: PyTorch's, mlclab's copy, and the layout the build made of it (a matmul's packed
panels, a convolution's blocked weight), which is new memory anyway -- lesson 13's
GPT-2-shaped model: 212 MB, then 212, then 211. Now the importer lends the build PyTorch's
memory (``Loans.lend``, zero-copy through DLPack), every pipeline ends with
``backend.own_constants``, which copies the loaned constants the executable still holds as
they are (once per model: the traced build shares the copies, ``Loans.owned``), and what the
build re-lays out is read from PyTorch's memory once, while ``from_torch`` runs.

The imported module (kept for the views and for the traced build that ``validate`` makes
later) still points into PyTorch's memory, and so does the traced build's executable (a
validation tool: ResNet-18's second copy of its weights was what put lesson 9 over 1 GB). A
later build from the module -- the traced build, the record of a build loaded from the disk
cache -- and every use of the traced build first check the loans (``Loans.check``):
weights that were changed (an optimizer step), freed or re-allocated (``resize_``) since
``from_torch`` are a ``WeightsChanged`` error saying so, never a build of other weights than
the compiled function's. Freed memory is never read: a loan holds its tensor (so the storage
outlives the module), and PyTorch refuses to ``resize_`` a storage exported through DLPack.
Nothing else reads a loaned weight's values after ``from_torch``: the views print a large
constant as metadata, and weights under ``BORROW_MIN_BYTES`` (scalars the views print, index
tables the importer reads) are copied.
"""
from __future__ import annotations

import contextlib
import contextvars
import zlib
from dataclasses import dataclass
from typing import Any

# Smaller tensors are copied at import: they cost nothing, and some are read by value
# (a scalar printed in the IR, an index constant checked at import).
BORROW_MIN_BYTES = 1 << 20

_ACTIVE: contextvars.ContextVar = contextvars.ContextVar("mlclab_loans", default=None)


class WeightsChanged(NotImplementedError, ValueError):
    """A PyTorch weight the imported module reads in place changed after ``from_torch``.
    (A ``NotImplementedError``: ``validate`` then compares the outputs only, and says why; a
    ``ValueError``: the API boundary lets it through as the user's, not as an mlclab bug.)"""


@dataclass
class _Loan:
    tensor: Any          # the detached torch tensor (shares the parameter's storage)
    lent: Any            # the TVM tensor reading it in place
    start: int           # its data pointer and size when lent
    nbytes: int
    checksum: int
    owned: Any = None    # the copy the compiled code holds, made once


def _checksum(tensor) -> int:
    return zlib.crc32(memoryview(tensor.numpy()).cast("B"))


class Loans:
    """The weights one import reads in place (see the module doc)."""

    def __init__(self, what: str = "the model"):
        self.what = what
        self._loans: list[_Loan] = []

    def lend(self, value):
        """A TVM tensor of the torch tensor ``value``: PyTorch's own memory when it is a dense,
        contiguous tensor numpy can hold of at least ``BORROW_MIN_BYTES``, else a copy."""
        import torch

        from ..tvm_setup import tvm

        dense = value.detach()
        if dense.layout != torch.strided:
            dense = dense.to_dense()
        if (dense.is_contiguous() and dense.nbytes >= BORROW_MIN_BYTES
                and dense.device.type == "cpu" and _numpy_can_hold(dense)):
            lent = tvm().runtime.from_dlpack(dense)
            self._loans.append(_Loan(dense, lent, lent.data_ptr(), dense.nbytes,
                                     _checksum(dense)))
            return lent
        return tvm().runtime.from_dlpack(dense.contiguous().clone())

    def __len__(self) -> int:
        return len(self._loans)

    @property
    def nbytes(self) -> int:
        return sum(loan.nbytes for loan in self._loans)

    def loan_of(self, tensor):
        """The loan whose memory the TVM ``tensor`` reads (itself or a view of it), or None."""
        start = tensor.data_ptr()
        for loan in self._loans:
            if loan.start <= start < loan.start + loan.nbytes:
                return loan
        return None

    def owned(self, tensor):
        """A TVM tensor the compiled code may keep for ``tensor``: ``tensor`` itself when it
        reads no loaned memory, else a copy, the same one for every build of this model."""
        loan = self.loan_of(tensor)
        if loan is None:
            return tensor
        if loan.lent.same_as(tensor):
            if loan.owned is None:
                loan.owned = _copy(tensor)
            return loan.owned
        return _copy(tensor)          # a view into a loan (no pass makes one today)

    def check(self) -> None:
        """Raise ``WeightsChanged`` if a loaned weight is not what was compiled."""
        for loan in self._loans:
            if _checksum(loan.tensor) != loan.checksum:
                raise WeightsChanged(
                    f"a weight of {self.what} ({tuple(loan.tensor.shape)}) was changed in "
                    "place after from_torch: the compiled function keeps the weights it was "
                    "compiled with, and a new build from the imported module (the "
                    "layer-by-layer build validate and trace use, the pipeline of a build "
                    "loaded from the disk cache) would read the new ones; call "
                    "mlclab.from_torch again to compile the module as it is now")

    @contextlib.contextmanager
    def building(self, own: bool = True):
        """The loans of the build that runs in here: with ``own``, ``backend.own_constants``
        copies those its executable keeps; without, the executable reads them in place (a
        traced build, which checks them at every use)."""
        token = _ACTIVE.set(self if own else None)
        try:
            yield self
        finally:
            _ACTIVE.reset(token)


def active():
    """The ``Loans`` of the build running on this thread, or None."""
    return _ACTIVE.get()


def _numpy_can_hold(tensor) -> bool:
    try:
        tensor[:0].numpy()
    except (TypeError, RuntimeError):
        return False
    return True


def _copy(tensor):
    import numpy as np

    from ..tvm_setup import tvm

    copy = tvm().runtime.empty(tuple(tensor.shape), str(tensor.dtype), tensor.device)
    np.from_dlpack(copy)[...] = np.from_dlpack(tensor)
    return copy
