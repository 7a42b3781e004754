"""Moving arrays between numpy and the TVM virtual machine: safely, and without copies
where none are needed.

TVM declares kernel arguments 64-byte aligned, and LLVM then reads them with aligned vector
moves: a misaligned numpy array handed to such a kernel crashes the process (a segfault inside
the kernel).
mlclab's build declares them aligned only to their element size instead
(``mlclab.backend.alignment``), so numpy's ordinary 16-byte-aligned arrays can be read in
place.  And a naive conversion -- a fresh ``tvm.runtime.tensor`` per argument, ``.numpy()``
on the result -- costs 60-90 ms around a 3 ms kernel on 2048x2048 arrays, mostly page faults
on fresh 16 MB buffers.  So:

* an input that is C-contiguous, writeable and aligned as the kernels assume (for mlclab's
  kernels: any address numpy gives an array of that dtype) is shared with the VM through
  DLPack, without a copy;
* any other input (strided, read-only, or not aligned as the kernels assume) is copied once
  into a staging buffer that is allocated aligned and reused by the next call with the same
  shape;
* an output is handed back through ``np.from_dlpack``, without a copy, unless it shares
  memory with something the caller must not see change: an input of this call (a function
  that returns its argument, or a reshape of it, gets the argument's memory back from the
  VM), a staging buffer (overwritten by the next call), an output already returned by this
  call, or a tensor something else still holds (a constant of the executable, whose
  memory every call returns).  Those are copied.  Every array a call returns is therefore
  the caller's own: no later call writes to it and writing to it changes no later result.

``Marshaller.call`` does this for any arguments; ``Marshaller.thin`` prepares the same for
one function's common case once (arrays of exactly its dtypes and shapes, handed to the VM
as they are), so that a tiny call costs little more than the VM itself.  A small function
that only runs kernels (``mlclab.kernel_plan``) is called without the VM: its kernels on the
arguments and fresh arrays.
"""
from __future__ import annotations

import functools
import threading
import weakref

import numpy as np

from .kernel_plan import direct_call

# The alignment TVM's own kernels assume for their arguments (and that its allocator gives).
ALIGNMENT = 64

__all__ = ["Marshaller", "aligned_empty", "aligned_copy", "is_aligned", "ALIGNMENT",
           "give_back_memory"]


def is_aligned(array: np.ndarray, alignment: int = ALIGNMENT) -> bool:
    """Whether ``array``'s data starts on an ``alignment``-byte boundary."""
    return array.ctypes.data % alignment == 0


def aligned_empty(shape, dtype="float32", alignment: int = ALIGNMENT) -> np.ndarray:
    """An uninitialized C-contiguous array whose data is ``alignment``-byte aligned, so a
    compiled function can read it in place.  (numpy aligns large arrays to 16 bytes: only
    about a quarter of them happen to be 64-byte aligned.)"""
    dtype = np.dtype(dtype)
    shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(d) for d in shape)
    count = int(np.prod(shape, dtype=np.int64))
    # At least one element is allocated so that even a zero-size result has an aligned
    # data address.
    size = max(count, 1) * dtype.itemsize
    raw = np.empty(size + alignment, dtype=np.uint8)
    start = -raw.ctypes.data % alignment
    return raw[start:start + size].view(dtype)[:count].reshape(shape)


def aligned_copy(array, dtype=None, alignment: int = ALIGNMENT) -> np.ndarray:
    """A 64-byte-aligned C-contiguous copy of ``array`` (optionally cast to ``dtype``)."""
    src = np.asarray(array, dtype=dtype)
    out = aligned_empty(src.shape, src.dtype, alignment)
    np.copyto(out, src)
    return out


def give_back_memory() -> None:
    """Return what one large job freed to the system, so that the kernel's size is what it
    holds, not the peak of its last ``validate``, profile or model build: TVM's pooled
    allocators keep every freed VM buffer for reuse (``vm.builtin.memory_manager.clear``
    frees those not in use; a buffer a result or a running call holds is not in the pool),
    and glibc keeps freed blocks in its heap once its mmap threshold has risen past numpy's
    temporaries (``malloc_trim``). The next cell's peak then starts from what is really in
    use. Milliseconds; the next call faults its buffers in again, which is why a call itself
    never does this."""
    try:
        import tvm_ffi

        clear = tvm_ffi.get_global_func("vm.builtin.memory_manager.clear", allow_missing=True)
        if clear is not None:
            clear()
    except Exception:        # an FFI without the registry query: glibc's part still helps
        pass
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim():
    """glibc's ``malloc_trim``, or None (musl, macOS: their allocators return memory)."""
    import ctypes
    import ctypes.util

    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


def _use_count_function():
    """TVM-FFI's reference count of an object, or None where this build lacks it: a VM
    result referenced from anywhere but the caller's handle is shared (a constant)."""
    try:
        import tvm_ffi

        return tvm_ffi.get_global_func("testing.object_use_count", allow_missing=True)
    except Exception:  # an FFI without the registry query: rely on the address checks
        return None


def _tvm():
    from .tvm_setup import tvm

    return tvm()


class Marshaller:
    """Argument and result conversion for one compiled function.

    ``to_tvm`` and ``to_numpy`` are called as a pair around each VM call.  The staging
    buffers and the inputs of the call in progress are kept per thread, so the marshaller
    never hands one thread's buffer to another; the VM call between the two must still be
    serialized by the caller (a TVM VirtualMachine is not safe to call from two threads).
    """

    def __init__(self, param_dtypes: list, kernel_alignment=ALIGNMENT, device=None):
        """``kernel_alignment``: the alignment in bytes the kernels assume for an argument,
        or ``"element"`` for kernels built by mlclab (``mlclab.backend.alignment``), which
        assume only the element size. ``device``: where the staging buffers live, the
        target's device (``Built.device``; default this machine's CPU, ``"llvm"``'s). Arrays
        are handed over in place through DLPack, so it is host memory."""
        self._device = device
        self.param_dtypes = [str(d) for d in param_dtypes]
        self._alignments = [np.dtype(d).itemsize if kernel_alignment == "element"
                            else int(kernel_alignment) for d in self.param_dtypes]
        # the kernels assume no more than element alignment of any argument, results too
        self._element_aligned = kernel_alignment == "element"
        self._local = threading.local()
        # Arrays returned without a copy, by data address, while the caller keeps them.
        self._returned: dict = {}
        self._use_count = _use_count_function()
        self._from_dlpack = None  # tvm_ffi.from_dlpack, looked up at the first call

    @property
    def device(self):
        if self._device is None:     # the runtime sits below the target registry: the host CPU
            self._device = _tvm().cpu()
        return self._device

    def call(self, fn, arrays):
        """``fn`` (a VM function) called on ``arrays``, its result as numpy arrays: what
        ``to_tvm`` and ``to_numpy`` do around a call, without handing the inputs over
        through thread-local state (a tiny call costs ~1.5 us in the VM; every 0.1 us here
        shows)."""
        tensors, spans = self._import(arrays)
        return self._convert(fn(*tensors), spans)

    def thin(self, fn, lock, shapes, direct=None):
        """A call of ``fn`` (a VM function) prepared once for the common case, or None where
        this marshaller cannot offer one: a function ``call(args)`` that, when every
        argument is a numpy array of exactly its parameter's dtype and its shape in
        ``shapes`` -- C-contiguous, writeable and aligned, so it can be read in place --
        calls ``fn`` holding ``lock`` and returns what ``call`` would.  For anything else it
        returns None before calling anything, and the caller takes the full path.

        What does not change between calls is decided here, once: the dtypes and shapes to
        compare, the functions called.  Per call that leaves a type, dtype, shape and flags
        comparison per argument, the VM call on the arrays themselves, and for a lone
        tensor result the checks of ``_convert`` inlined (a tuple, or a result to copy,
        goes through ``_convert``): a 4-element add costs ~1.6 us more than the VM's own
        ~1.1 us (docs/performance.md, section 3).

        ``direct``: ``(plan, arrays, kernels)`` when the VM function does nothing but run
        kernels (``kernel_plan``; ``arrays`` is ``plan_arrays``', ``kernels`` the kernel
        functions by name): the call then skips the VM -- its instructions (checks,
        allocations, ~0.15 us each) cost more than the kernels of a tiny call -- and runs the
        kernels on the arguments and new ``np.empty`` arrays.  No lock: the VM is not used,
        and a kernel keeps no state between calls (TVM's thread pool is per calling thread).
        The result is the caller's own (nothing else holds it); each kernel checks its
        arguments as the VM's function would (count, dtype, shape), and assumes only
        element alignment of any of them (mlclab's build, ``backend.alignment``), which
        ``np.empty`` gives."""
        use_count = self._use_count
        if use_count is None or len(shapes) != len(self.param_dtypes):
            return None
        import tvm_ffi

        dtypes = [np.dtype(d) for d in self.param_dtypes]
        shapes = [tuple(int(d) for d in shape) for shape in shapes]
        # numpy's ALIGNED flag is the element's alignment: enough only for kernels that assume
        # no more than that (mlclab's); an empty array is staged (see ``_import``).
        if any(a > d.alignment for a, d in zip(self._alignments, dtypes)) or any(
                0 in shape for shape in shapes):
            return None
        dtypes, shapes, count = tuple(dtypes), tuple(shapes), len(shapes)
        to_numpy, shares, ndarray = np.from_dlpack, np.may_share_memory, np.ndarray
        from_dlpack = tvm_ffi.from_dlpack
        tensor_type = tvm_ffi.Tensor
        acquire, release, convert = lock.acquire, lock.release, self._convert
        kernel = out_shape = out_dtype = run = None
        if direct is not None and self._element_aligned:
            kernel, out_shape, out_dtype, run = direct_call(count, *direct)
            empty = np.empty

        # Plain loops with an index, no zip, comprehension or helper call: each of those
        # costs ~0.1 us here (Python 3.11), against the VM's own ~1 us for a tiny call.
        def call(args):
            if len(args) != count:
                return None
            index = 0
            for array in args:
                # ``is``: numpy's built-in dtypes are singletons, and any other spelling of
                # the same dtype (another byte order...) is left to the full path.  ``carray``:
                # C-contiguous, writeable and aligned to its element.
                if (type(array) is not ndarray or array.dtype is not dtypes[index]
                        or array.shape != shapes[index] or not array.flags.carray):
                    return None
                index += 1
            if kernel is not None:          # one kernel: arguments, then its result
                out = empty(out_shape, out_dtype)
                kernel(*args, out)
                return out
            if run is not None:
                return run(args)
            acquire()
            try:
                # The arrays themselves: TVM-FFI imports each through DLPack in C, ~0.15 us
                # an argument against ~0.35 us for tvm_ffi.from_dlpack from Python.
                result = fn(*args)
            finally:
                release()
            # 2 uses: this handle and use_count's argument; more is memory something else
            # holds (a constant).  A result in an input's memory (a function returning its
            # argument, or a reshape of it) shares memory with it.  Either is copied by
            # ``_convert``, as is anything in a tuple.
            if isinstance(result, tensor_type) and use_count(result) <= 2:
                view = to_numpy(result)
                for array in args:
                    if shares(view, array):
                        break
                else:
                    return view
                del view  # (it would count as a holder of the result)
            # (each argument's address through a DLPack import: ~0.2 us against ~0.8 us for
            # numpy's ``array.ctypes.data``)
            return convert(result, [(from_dlpack(array).data_ptr(), array.nbytes)
                                    for array in args])

        return call

    # ------------------------------------------------------------------ inputs
    def tensors(self, arrays: list) -> list:
        """TVM tensors for ``arrays`` (as ``to_tvm``), for a call whose results are not
        handed back (``to_numpy`` is not called after it)."""
        return self._import(arrays)[0]

    def to_tvm(self, arrays: list) -> list:
        """TVM tensors for ``arrays`` (numpy arrays already of the declared dtypes and
        shapes; they may be strided, misaligned or read-only)."""
        tensors, self._local.inputs = self._import(arrays)
        return tensors

    def _import(self, arrays) -> tuple:
        """The tensors for ``arrays`` and the (address, size) of each."""
        from_dlpack = self._from_dlpack
        if from_dlpack is None:
            import tvm_ffi

            from_dlpack = self._from_dlpack = tvm_ffi.from_dlpack
        tensors, spans = [], []
        for index, array in enumerate(arrays):
            tensor = None
            # (an empty array is staged: numpy exports it with all strides 0, which the
            # kernels' compactness check refuses)
            if array.size and array.flags.c_contiguous:
                # Importing costs ~0.2 us, like copying 16 bytes into a staging buffer.  The
                # import checks the alignment itself (cheaper than asking numpy for the
                # address) and refuses a read-only array; contiguity was checked above
                # (require_contiguous=True doubles the import's cost).
                try:
                    tensor = from_dlpack(array, require_alignment=self._alignments[index])
                except Exception:  # not aligned as the kernels assume, or read-only
                    tensor = None
            if tensor is None:
                tensor = self._stage(self._stages(len(arrays)), index, array)
            tensors.append(tensor)
            spans.append((tensor.data_ptr(), array.nbytes))
        return tensors, spans

    def _stages(self, count: int) -> list:
        stages = getattr(self._local, "stages", None)
        if stages is None or len(stages) != count:
            stages = self._local.stages = [None] * count
        return stages

    def _stage(self, stages: list, index: int, array: np.ndarray):
        """Copy ``array`` into parameter ``index``'s aligned staging buffer, reallocating
        it only when the shape changed (a symbolic size) or the dtype did."""
        stage = stages[index]
        if stage is None or stage[1].shape != array.shape or stage[1].dtype != array.dtype:
            tvm = _tvm()
            tensor = tvm.runtime.empty(array.shape, str(array.dtype), device=self.device)
            stage = stages[index] = (tensor, np.from_dlpack(tensor))
        np.copyto(stage[1], array, casting="no")
        return stage[0]

    # ------------------------------------------------------------------ outputs
    def to_numpy(self, result):
        """A numpy array for a TVM tensor result, or a tuple of them for a tuple result;
        every returned array is the caller's own (see the module docstring)."""
        local = self._local
        spans = list(getattr(local, "inputs", ()))
        local.inputs = ()  # the call is over
        return self._convert(result, spans)

    def _convert(self, result, spans: list, holders: int = 1):
        """``spans``: (address, size) of the memory a result must not share -- this call's
        inputs, then the results converted so far.  ``holders``: the references a result
        the caller alone owns has -- its Python handle, plus the tuple containing it."""
        if not hasattr(result, "__dlpack__"):
            if isinstance(result, (int, float, bool, np.generic)):
                return np.asarray(result)
            return tuple(self._convert(item, spans, holders + 1) for item in result)
        held_elsewhere = (self._use_count is not None
                          and self._use_count(result) > holders + 1)  # +1: this call's argument
        address = result.data_ptr()
        view = np.from_dlpack(result)
        size = view.nbytes
        if size and (held_elsewhere or _overlaps(address, size, spans)
                     or (self._use_count is None and self._returned_earlier(address))):
            view = view.copy()
        elif size:
            if self._use_count is None:
                # Without reference counts, remember what was returned: an array the caller
                # still holds keeps its tensor alive, so the VM hands that memory back only
                # if something else (a constant) holds it too.
                self._remember(address, view)
            spans.append((address, size))
        return view

    def _returned_earlier(self, address: int) -> bool:
        earlier = self._returned.get(address)
        return earlier is not None and earlier() is not None

    def _remember(self, address: int, view: np.ndarray) -> None:
        returned = self._returned

        def forget(ref, address=address):
            if returned.get(address) is ref:
                del returned[address]

        returned[address] = weakref.ref(view, forget)


def _overlaps(address: int, size: int, spans) -> bool:
    end = address + size
    for start, length in spans:  # a loop, not any(generator): this runs on every call
        if length and start < end and address < start + length:
            return True
    return False
