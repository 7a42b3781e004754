"""Calling a small compiled function without the VM: what its bytecode does, read once.

A tiny call's time is the VM's instructions (~0.15 us each: argument checks, allocations),
not its kernels.  A VM function that only checks its arguments against static shapes,
allocates tensors of static shapes and runs kernels on them (``kernel_plan``) can instead
run those kernels on the caller's arrays and fresh ``np.empty`` ones (``direct_call``):
each kernel checks its own arguments, and fresh arrays are the caller's own.  The
tensors' shapes are constants of the executable, which it does not expose: ``plan_arrays``
reads them from one run of the VM with every kernel call observed.
(``runtime.Marshaller.thin`` uses this; docs/performance.md, section 3.)
"""
from __future__ import annotations

import dataclasses
import operator
import re

import numpy as np

# One instruction of the VM's bytecode as ``Executable.as_text()`` prints it.
_INSTRUCTION = re.compile(r"^\s*(call|ret)\s+(\S+)(?:\s+in:\s*(.*?))?\s*(?:dst:\s*(\S+))?\s*$")


# A function of at most this many kernels, whose intermediates together take at most this
# many bytes, is called without the VM (``kernel_plan``): the VM's per-instruction cost
# (~0.15 us) is what such a call is made of; past that, kernels dominate, and the VM's
# memory pool (reused intermediates) is worth more than the instructions saved.
DIRECT_MAX_KERNELS = 16
DIRECT_MAX_INTERMEDIATE_BYTES = 256 * 1024


@dataclasses.dataclass(frozen=True)
class KernelPlan:
    """What a VM function does, when it does nothing but run kernels: ``calls`` in order,
    each ``(kernel name, registers)`` -- a register is an argument (``0 .. params - 1``) or
    a tensor the function allocated (``allocated``) -- and the register it returns."""

    calls: tuple
    allocated: tuple
    result: int

    def lone_kernel(self, params: int):
        """The name of the plan's one kernel when it is called on the ``params`` arguments
        and then the result, in that order, else None."""
        if len(self.calls) == 1 and self.calls[0][1] == (*range(params), self.result):
            return self.calls[0][0]
        return None


def kernel_plan(bytecode: str, name: str, params: int):
    """The ``KernelPlan`` of VM function ``name`` (``bytecode`` is
    ``Executable.as_text()``), or None: when all the function does is check its ``params``
    arguments against static shapes, allocate tensors of static shapes, call kernels on
    arguments and those tensors, and return one of them, it can be called without the VM:
    each kernel checks its own arguments, and fresh arrays for the tensors are the caller's
    own.  Any other instruction (a constant or a builtin as an argument, a symbolic shape,
    a view, a tuple), more than ``DIRECT_MAX_KERNELS`` kernels, or a result that is an
    argument: None."""
    lines = bytecode.split("\n")
    try:
        start = lines.index(f"@{name}:")
    except ValueError:
        return None
    inputs = {f"%{i}" for i in range(params)}
    storages, allocated, calls, result = set(), [], [], None
    for line in lines[start + 1:]:
        if not line.strip():
            break
        match = _INSTRUCTION.match(line)
        if match is None or result is not None:
            return None
        op, callee, args, dst = match.groups()
        args = [a.strip() for a in (args or "").split(",") if a.strip()]
        if op == "ret":
            result = callee
        elif callee == "vm.builtin.check_tensor_info" and args[0] in inputs:
            continue
        elif callee == "vm.builtin.match_shape" and args[0] in inputs and args[1] == "%void":
            continue                      # (%void: no shape heap, so every size is static)
        elif (callee == "vm.builtin.alloc_storage" and args and args[0] == "%vm"
              and all(_literal(a) for a in args[1:]) and _fresh(dst, inputs, allocated)):
            storages.add(dst)
        elif (callee == "vm.builtin.alloc_tensor" and args and args[0] in storages
              and all(_literal(a) for a in args[1:]) and _fresh(dst, inputs, allocated)):
            allocated.append(dst)
        elif callee == "vm.builtin.null_value" and not args and dst not in inputs:
            continue                      # (a register let go: Python frees it at return)
        elif (not callee.startswith("vm.") and dst == "%void" and args
              and all(a in inputs or a in allocated for a in args)):
            calls.append((callee, tuple(int(a[1:]) for a in args)))
        else:
            return None
    if result not in allocated or not 0 < len(calls) <= DIRECT_MAX_KERNELS:
        return None
    return KernelPlan(tuple(calls), tuple(int(a[1:]) for a in allocated), int(result[1:]))


def _fresh(register: str, inputs: set, allocated: list) -> bool:
    """Whether ``register`` is written here for the first time (the plan gives each
    allocation its own array, so a register the bytecode reuses is not followed)."""
    return register not in inputs and register not in allocated


def one_kernel(bytecode: str, name: str, params: int):
    """The name of the one kernel VM function ``name`` runs on its arguments and its
    result, in that order (``kernel_plan`` with one call), or None."""
    plan = kernel_plan(bytecode, name, params)
    if plan is None or len(plan.allocated) != 1:
        return None
    return plan.lone_kernel(params)


def plan_arrays(executable, device, name: str, plan: KernelPlan, tensors: list):
    """``{register: (shape, dtype)}`` of every tensor ``plan`` allocates, read from one run
    of VM function ``name`` on ``tensors`` (TVM tensors) with every kernel call observed
    (the bytecode names its shapes only as constants), or None if the intermediates take
    more than ``DIRECT_MAX_INTERMEDIATE_BYTES`` or a kernel ran other than planned."""
    from tvm import relax

    seen = []

    def observe(func, symbol, before, ret, *args):
        if before and not str(symbol).startswith("vm."):
            seen.append((str(symbol), [(tuple(int(d) for d in a.shape), str(a.dtype))
                                       if hasattr(a, "shape") else None for a in args]))
        return 0

    vm = relax.VirtualMachine(executable, device=device)
    vm.set_instrument(observe)
    vm[name](*tensors)
    if [k for k, _ in seen] != [k for k, _ in plan.calls]:
        return None
    arrays = {}
    for (_, registers), (_, described) in zip(plan.calls, seen):
        for register, info in zip(registers, described):
            if register in plan.allocated and info is not None:
                arrays.setdefault(register, info)
    if set(arrays) != set(plan.allocated):
        return None
    intermediate = sum(int(np.prod(shape)) * np.dtype(dtype).itemsize
                       for register, (shape, dtype) in arrays.items() if register != plan.result)
    return arrays if intermediate <= DIRECT_MAX_INTERMEDIATE_BYTES else None


def _literal(arg: str) -> bool:
    """A constant of the bytecode (``c[3]``) or an immediate (``i0``), not a register."""
    return re.fullmatch(r"c\[\d+\]|i-?\d+", arg) is not None


def direct_call(count: int, plan: KernelPlan, arrays: dict, kernels: dict):
    """``(kernel, shape, dtype, None)`` for a plan of one kernel on the ``count``
    arguments and then its result (the commonest, written out in ``Marshaller.thin``),
    else ``(None, None, None, run)``: ``run(args)`` runs the plan on the checked arguments
    and fresh arrays; all None if an array would be empty (numpy exports zero strides,
    which the kernels' compactness check refuses)."""
    if any(0 in shape for shape, _ in arrays.values()):
        return None, None, None, None
    arrays = {r: (tuple(shape), np.dtype(dtype)) for r, (shape, dtype) in arrays.items()}
    lone = plan.lone_kernel(count)
    if lone is not None:
        return (kernels[lone], *arrays[plan.result], None)
    # (a C-level itemgetter per kernel and one allocation loop: a comprehension or a
    # nested loop per kernel costs ~0.1-0.2 us, against the VM's ~0.15 us an instruction)
    steps = tuple((kernels[name], operator.itemgetter(*registers)) for name, registers
                  in plan.calls if len(registers) > 1)
    if len(steps) != len(plan.calls):
        return None, None, None, None          # (a kernel of one argument: not seen here)
    fresh = tuple((r, *arrays[r]) for r in plan.allocated)
    blank = (None,) * (max(*plan.allocated, count - 1) + 1 - count)
    result, empty = plan.result, np.empty

    def run(args):
        registers = [*args, *blank]
        for register, shape, dtype in fresh:
            registers[register] = empty(shape, dtype)
        for kernel, arguments in steps:
            kernel(*arguments(registers))
        return registers[result]

    return None, None, None, run
