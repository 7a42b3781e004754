"""The call path between numpy and the VM: zero-copy for any C-contiguous writeable input
(mlclab's kernels assume only element alignment), one copy into a reused aligned buffer for
the rest, and no returned array ever aliasing an input, a
staging buffer, another result, or anything a later call writes."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import mlclab
from mlclab.runtime import ALIGNMENT, Marshaller, aligned_copy, aligned_empty, is_aligned

import tvm

BIG = (256, 256)


def _misaligned(shape, dtype="float32"):
    """A C-contiguous array whose data is deliberately not 64-byte aligned."""
    itemsize = np.dtype(dtype).itemsize
    count = int(np.prod(shape))
    raw = aligned_empty(count + ALIGNMENT, dtype)
    out = raw[1:1 + count].reshape(shape)
    assert out.flags.c_contiguous and not is_aligned(out) and out.ctypes.data % itemsize == 0
    out[...] = np.arange(count).reshape(shape) % 7
    return out


def _ptr(tensor) -> int:
    return np.from_dlpack(tensor).ctypes.data


@pytest.fixture(scope="module")
def prog():
    return mlclab.compile('''
def same(x: Tensor[("n", 256), f32]):
    return x

def reshaped(x: Tensor[(256, 256), f32]):
    return reshape(x, (65536,))

def scaled(a: Tensor[(256, 256), f32], b: Tensor[(256, 256), f32]):
    return a * b + 1.0

def both(x: Tensor[(256, 256), f32]):
    y = x + 1.0
    return y, y

def flags(a: Tensor[(3, 5), f32], b: Tensor[(3, 5), f32]):
    return a < b
''')


# ---------------------------------------------------------------------------------------
# aligned memory helpers


@pytest.mark.parametrize("shape,dtype", [((3, 5), "float32"), ((1000,), "float64"), (7, "int8"),
                                         ((0, 4), "float32"), ((), "float32")])
def test_aligned_empty_is_aligned_and_shaped(shape, dtype):
    a = aligned_empty(shape, dtype)
    assert is_aligned(a) and a.flags.c_contiguous and a.dtype == np.dtype(dtype)
    assert a.shape == ((shape,) if isinstance(shape, int) else shape)


def test_aligned_copy_copies_and_casts():
    src = np.arange(12).reshape(3, 4)[:, ::2]
    out = aligned_copy(src, dtype="float32")
    assert is_aligned(out) and out.dtype == np.float32 and not np.shares_memory(out, src)
    np.testing.assert_array_equal(out, src)


# ---------------------------------------------------------------------------------------
# inputs


def test_large_aligned_input_is_shared_without_copy():
    a = aligned_copy(np.random.rand(*BIG).astype("float32"))
    (t,) = Marshaller(["float32"]).to_tvm([a])
    assert _ptr(t) == a.ctypes.data


@pytest.mark.parametrize("offset", [1, 2, 3, 4])  # 4, 8, 12, 16 bytes past 64
@pytest.mark.parametrize("shape", [BIG, (4,), ()])
def test_element_aligned_kernels_share_misaligned_inputs(offset, shape):
    count = int(np.prod(shape))
    raw = aligned_empty(count + ALIGNMENT, "float32")
    a = raw[offset:offset + count].reshape(shape)
    m = Marshaller(["float32"], kernel_alignment="element")
    (t,) = m.to_tvm([a])
    assert _ptr(t) == a.ctypes.data
    assert getattr(m._local, "stages", None) is None  # no staging buffer was ever made


@pytest.mark.parametrize("offset", [1, 3, 4])
def test_the_public_call_reads_misaligned_inputs_in_place(offset):
    """The kernel reads the caller's memory: ``same`` returns its argument, and the VM hands
    back a tensor at the very address the caller's array has (the result is then copied, so
    the caller still gets its own array)."""
    raw = aligned_empty(3 * 256 + ALIGNMENT, "float32")
    x = raw[offset:offset + 3 * 256].reshape(3, 256)
    x[...] = np.arange(x.size).reshape(x.shape)
    # a fresh build, so that this first call takes the full path (bind, Marshaller.call)
    f = mlclab.compile('def same(x: Tensor[("n", 256), f32]):\n    return x', force=True)["same"]
    seen, staged = [], []
    m = f._marshaller
    convert, stage = m._convert, m._stage

    def spy(result, spans, holders=1):
        seen.append(result.data_ptr())
        return convert(result, spans, holders)

    def stage_spy(*args):
        staged.append(args)
        return stage(*args)

    m._convert, m._stage = spy, stage_spy
    try:
        y = f(x)
    finally:
        del m._convert, m._stage
    assert seen == [x.ctypes.data]
    assert staged == []
    np.testing.assert_array_equal(y, x)
    assert not np.shares_memory(y, x)


def test_misaligned_input_is_copied_into_a_reused_aligned_buffer():
    # for kernels that assume 64-byte alignment (TVM's own; not mlclab's)
    m = Marshaller(["float32"])
    a = _misaligned(BIG)
    (t1,) = m.to_tvm([a])
    assert _ptr(t1) % ALIGNMENT == 0 and _ptr(t1) != a.ctypes.data
    np.testing.assert_array_equal(np.from_dlpack(t1), a)
    b = _misaligned(BIG)
    b += 1
    (t2,) = m.to_tvm([b])
    assert _ptr(t2) == _ptr(t1)  # the same staging buffer, not a fresh allocation
    np.testing.assert_array_equal(np.from_dlpack(t2), b)


def test_staging_buffer_follows_a_symbolic_size():
    m = Marshaller(["float32"])
    for rows in (3, 5, 3):
        a = _misaligned((rows, 256))
        (t,) = m.to_tvm([a])
        np.testing.assert_array_equal(np.from_dlpack(t), a)


@pytest.mark.parametrize("make", [
    lambda: np.asfortranarray(np.random.rand(*BIG).astype("float32")),
    lambda: np.random.rand(BIG[0], 2 * BIG[1]).astype("float32")[:, ::2],
    lambda: np.broadcast_to(np.arange(BIG[1], dtype="float32"), BIG),
    lambda: aligned_copy(np.random.rand(4, 4).astype("float32")),  # small: copied anyway
])
def test_strided_readonly_and_small_inputs_arrive_intact(make):
    a = make()
    (t,) = Marshaller(["float32"]).to_tvm([a])
    view = np.from_dlpack(t)
    assert view.flags.c_contiguous and view.ctypes.data % ALIGNMENT == 0
    np.testing.assert_array_equal(view, a)


@pytest.mark.parametrize("array", [np.array(2.5, "float32"), np.array([True, False, True]),
                                   np.arange(6, dtype="int64").reshape(2, 3)[:, ::2],
                                   np.zeros((0, 3), "float16")])
def test_scalars_booleans_integers_and_empty_arrays_are_staged_intact(array):
    m = Marshaller([str(array.dtype)])
    (t,) = m.to_tvm([array])
    view = np.from_dlpack(t)
    assert view.shape == array.shape and view.dtype == array.dtype
    np.testing.assert_array_equal(view, array)
    back = m.to_numpy(t)  # the staged tensor itself: must come back as a copy
    np.testing.assert_array_equal(back, array)
    assert back.size == 0 or not np.shares_memory(back, view)


def test_readonly_aligned_input_is_not_written():
    a = aligned_copy(np.random.rand(*BIG).astype("float32"))
    a.flags.writeable = False
    (t,) = Marshaller(["float32"]).to_tvm([a])
    np.testing.assert_array_equal(np.from_dlpack(t), a)


# ---------------------------------------------------------------------------------------
# outputs and aliasing, through the public call path


def test_results_are_zero_copy_views_of_fresh_vm_outputs(prog):
    a, b = aligned_copy(np.random.rand(*BIG).astype("float32")), _misaligned(BIG)
    r1 = prog["scaled"](a, b)
    r2 = prog["scaled"](b, a)
    np.testing.assert_allclose(r1, a * b + 1, rtol=1e-6)
    assert not np.shares_memory(r1, r2)
    assert r1.flags.writeable and r1.flags.c_contiguous


@pytest.mark.parametrize("make", [lambda: aligned_copy(np.random.rand(*BIG).astype("float32")),
                                  lambda: _misaligned(BIG),
                                  lambda: np.random.rand(3, 256).astype("float32")])
def test_returning_the_argument_gives_a_copy_that_later_calls_leave_alone(prog, make):
    x = make()
    y = prog["same"](x)
    np.testing.assert_array_equal(y, x)
    assert not np.shares_memory(y, x)
    before = y.copy()
    prog["same"](make() + 5)  # would overwrite y if y were the staging buffer
    np.testing.assert_array_equal(y, before)
    y += 1  # and the caller's array does not change through the result
    np.testing.assert_array_equal(x, before)


def test_a_reshape_view_of_the_argument_is_copied(prog):
    x = aligned_copy(np.random.rand(*BIG).astype("float32"))
    y = prog["reshaped"](x)
    assert not np.shares_memory(y, x)
    np.testing.assert_array_equal(y, x.reshape(-1))


def test_a_tuple_returning_one_tensor_twice_gives_two_arrays(prog):
    x = np.random.rand(*BIG).astype("float32")
    y1, y2 = prog["both"](x)
    assert not np.shares_memory(y1, y2)
    y1[0, 0] = -100
    assert y2[0, 0] == x[0, 0] + 1


def test_boolean_results_round_trip(prog):
    a, b = np.random.rand(3, 5).astype("float32"), np.random.rand(3, 5).astype("float32")
    out = prog["flags"](a, b)
    assert out.dtype == np.bool_
    np.testing.assert_array_equal(out, a < b)


def _const_module():
    """A function that returns a constant: the VM hands back the same tensor each call."""
    from tvm import relax

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((4,), "float32"))
    with bb.function("main", [x]):
        bb.emit_func_output(relax.const(np.arange(4, dtype="float32")))
    ex = tvm.compile(bb.get(), target="llvm")
    return relax.VirtualMachine(ex, tvm.cpu())["main"]


def test_a_constant_result_is_never_shared_between_calls():
    fn = _const_module()
    m = Marshaller(["float32"])

    def call():
        return m.to_numpy(fn(*m.to_tvm([np.zeros(4, "float32")])))

    first = call()
    first[:] = -1  # the caller owns it ...
    second = call()
    np.testing.assert_array_equal(second, np.arange(4))  # ... and later calls don't see it
    assert not np.shares_memory(first, second)


def test_each_thread_stages_into_its_own_buffers():
    # The VM itself is not safe to call from two threads at once, so mlclab.api must
    # serialize calls; the marshaller must not make that harder by sharing buffers.
    m = Marshaller(["float32"])
    seen = {}

    def worker(k):
        a = _misaligned(BIG)
        a += k
        (t,) = m.to_tvm([a])
        # keep t (and so its thread's staging buffer) alive: a freed buffer's address may be
        # handed to the next thread, which would look like sharing
        seen[k] = (t, np.from_dlpack(t).copy(), a)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({_ptr(t) for t, _, _ in seen.values()}) == 3
    for _, staged, original in seen.values():
        np.testing.assert_array_equal(staged, original)


def test_fresh_tuple_results_are_not_copied():
    from tvm import relax

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType(BIG, "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            a = bb.emit(relax.op.add(x, x))
            b = bb.emit(relax.op.multiply(x, x))
            out = bb.emit_output(relax.Tuple([a, b]))
        bb.emit_func_output(out)
    fn = relax.VirtualMachine(tvm.compile(bb.get(), target="llvm"), tvm.cpu())["main"]
    m = Marshaller(["float32"])
    result = fn(*m.to_tvm([np.ones(BIG, "float32")]))
    pointers = [_ptr(result[0]), _ptr(result[1])]
    a, b = m.to_numpy(result)
    assert [a.ctypes.data, b.ctypes.data] == pointers
    np.testing.assert_array_equal(a, 2)


def test_empty_inputs_and_size_one_axes_with_odd_strides_run(prog):
    # numpy exports an empty array with all strides 0 (the kernels' compactness check
    # refuses that: it is staged), and a size-1 axis may carry any stride
    assert prog["same"](np.ones((0, 256), "float32")).shape == (0, 256)
    x = np.arange(256, dtype="float32")[None, :]
    assert x.flags.c_contiguous and x.strides[0] == 0
    np.testing.assert_array_equal(prog["same"](x), x)


def test_a_thin_call_is_offered_only_where_numpys_flags_suffice():
    lock = threading.RLock()
    fn = _const_module()
    # TVM's own kernels assume 64-byte alignment, which no numpy flag says: no thin call
    assert Marshaller(["float32"]).thin(fn, lock, [(4,)]) is None
    element = Marshaller(["float32"], kernel_alignment="element")
    # an empty array is staged (numpy exports it with strides the kernels refuse)
    assert element.thin(fn, lock, [(0, 4)]) is None
    call = element.thin(fn, lock, [(4,)])
    x = np.zeros(4, "float32")
    assert call((x, x)) is None and call([x.astype("float64")]) is None
    assert call([np.zeros(5, "float32")]) is None and call([np.zeros(8, "float32")[::2]]) is None
    first = call([x])  # the constant is copied: the caller owns what it gets
    first[:] = -1
    np.testing.assert_array_equal(call([x]), np.arange(4))


def test_the_thin_call_holds_the_vm_lock_around_the_vm_call_only():
    lock = threading.RLock()
    real = _const_module()
    seen = []

    def fn(*args):
        seen.append(lock._is_owned())
        return real(*args)

    call = Marshaller(["float32"], kernel_alignment="element").thin(fn, lock, [(4,)])
    np.testing.assert_array_equal(call([np.zeros(4, "float32")]), np.arange(4))
    assert seen == [True] and not lock._is_owned()
