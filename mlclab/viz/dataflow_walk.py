"""How Relax reads as graph binding: the walk the dataflow view and the value tracking share.

``mlclab.viz.parser.DataflowParser`` draws what it meets; ``mlclab.inspect.values`` lists the values
to carry their identity through the build pipeline. One walk, so both agree on every id.
"""
from __future__ import annotations

from typing import Optional

from .relax_info import Subject, describe, is_tensor_const, lookup, value_ids


class DataflowWalk:
    """How Relax reads as graph binding; the dataflow view and the value tracking both walk so.

    The function first, then the Relax functions it calls (breadth-first), then ``subject.also``.
    A value id per parameter and binding (``relax_info.value_ids``); an alias is its value; a
    tensor constant used twice is one value; a fused group's body is inlined under its caller
    (ids ``caller:fused_name/var``, ``caller:fused_name@2/var`` at its second call site). A
    subclass says what to make of each piece through the hooks at the end; each returns the id
    it gave.
    """

    inline_fused = True
    # True while the body of a fused function is walked at its second or later call site. The
    # builder keeps one of equal fused functions, the first group's: its vars (and the sources
    # the DSL gave them) are the first call's, so they say nothing of where a later call is.
    in_repeated_call = False

    def walk(self, subject: Subject):
        self.subject, self.mod = subject, subject.mod
        self._ids: dict = {}
        self._walk_consts: dict = {}
        self._walk_calls: list = []         # names of Relax functions called, in order
        self._inlined: dict = {}            # fused function -> how many call sites so far
        drawn, pending, rest = set(), [subject.name], list(subject.also)
        while pending or rest:
            fname = pending.pop(0) if pending else rest.pop(0)
            if fname in drawn:
                continue
            drawn.add(fname)
            func = self.mod[fname]
            group = self.function_group(fname)
            env = {p: self.param(fname, p, self._ids_of(fname)[p], group) for p in func.params}
            out = self._seq(fname, fname, func.body, env, group)
            if out is not None:
                self.output(fname, out)
            pending += [c for c in self._walk_calls if c not in drawn]
        return self.finish()

    def _ids_of(self, fname):
        if fname not in self._ids:
            self._ids[fname] = value_ids(self.mod[fname], fname)
        return self._ids[fname]

    def _seq(self, fname, owner, seq, env, group) -> Optional[str]:
        from tvm import relax

        if isinstance(seq, relax.SeqExpr):
            for block in seq.blocks:
                for binding in block.bindings:
                    self._binding(fname, owner, binding, env, group)
            seq = seq.body
        return self._leaf(fname, owner, seq, env, group, out=True)

    def _leaf(self, fname, owner, expr, env, group, out=False) -> str:
        """The value of an argument or of a returned expression."""
        from tvm import relax

        if isinstance(expr, relax.Var):
            if expr not in env:             # a free variable (closure capture): where used
                env[expr] = self.free_var(fname, expr, group)
            return env[expr]
        if is_tensor_const(expr):
            if expr not in self._walk_consts:
                self._walk_consts[expr] = self.const(expr, group)
            return self._walk_consts[expr]
        d = describe(expr, self.mod)        # a returned tuple or literal: a value of its own
        nid = self.result(owner, expr, d, out, group)
        self._connect(fname, owner, nid, d.args, env, group)
        return nid

    def _connect(self, fname, owner, nid, args, env, group):
        from tvm import relax

        index = 0
        for kind, x in args:
            if kind == "lit":
                continue
            for f in (list(x.fields) if isinstance(x, relax.Tuple) else [x]):
                self.edge(self._leaf(fname, owner, f, env, group), nid, index)
                index += 1

    def _binding(self, fname, owner, binding, env, group):
        from tvm import relax

        var, value = binding.var, binding.value
        # Inside an inlined fused group the value belongs to the caller, under the group's name.
        vid = f"{owner}:{fname}/{var.name}" if owner != fname else \
            self._ids_of(fname).get(var, f"{fname}:{var.name}")
        if isinstance(value, relax.Var) and value in env:
            env[var] = env[value]           # an alias computes nothing: the same value
            return
        d = describe(value, self.mod)
        if self.inline_fused and d.kind == "fused" and isinstance(value, relax.Call) \
                and isinstance(lookup(self.mod, value.op), relax.Function):
            env[var] = self._inline(fname, owner, value, env, group)
            return
        nid, d = self.binding(binding, vid, d, group)
        env[var] = nid
        if d.kind == "closure":
            cid = self.closure_group(nid, var, group)
            inner = dict(env)
            for p in value.params:
                inner[p] = self.closure_param(fname, p, cid)
            res = self._seq(fname, owner, value.body, inner, cid)
            if res is not None:
                self.branch_edge(res, nid, 0, "body")
            return
        self._connect(fname, owner, nid, d.args, env, group)
        if d.kind == "if":
            for pos, label, branch in ((1, "then", value.true_branch),
                                       (2, "else", value.false_branch)):
                res = self._seq(fname, owner, branch, dict(env),
                                self.branch_group(nid, label, group))
                if res is not None:
                    self.branch_edge(res, nid, pos, label)
        elif d.kind == "call" and isinstance(lookup(self.mod, value.op), relax.Function):
            self._walk_calls.append(value.op.name_hint)
            self.call(nid, value.op.name_hint)

    def _inline(self, fname, owner, call, env, group) -> str:
        """A fused group's body, its params bound to the call's arguments."""
        callee = call.op.name_hint
        func = self.mod[callee]
        cid = self.fused_group(callee, group)
        inner = {p: self._leaf(fname, owner, a, env, group) for p, a in zip(func.params, call.args)}
        # Each call site's values are values of their own (``fused_add@2/lv``): a model calls
        # one fused function at many places, and each place has its own inputs and source.
        count = self._inlined[callee] = self._inlined.get(callee, 0) + 1
        site = callee if count == 1 else f"{callee}@{count}"
        self.in_repeated_call = count > 1
        try:
            return self._seq(site, owner, func.body, inner, cid)
        finally:
            self.in_repeated_call = False

    # ------------------------------------------------------------------ hooks
    def function_group(self, fname):
        """The group of a function's values (the views draw a cluster)."""

    def fused_group(self, callee, group):
        """The group of an inlined fused function's values, inside ``group``."""

    def branch_group(self, nid, label, group):
        """The group of an ``if`` branch's values (``label``: then/else)."""

    def closure_group(self, nid, var, group):
        """The group of a closure's values."""

    def param(self, fname, var, vid, group) -> str:
        raise NotImplementedError

    def free_var(self, fname, var, group) -> str:
        raise NotImplementedError

    def closure_param(self, fname, var, group) -> str:
        raise NotImplementedError

    def const(self, expr, group) -> str:
        raise NotImplementedError

    def result(self, owner, expr, d, out, group) -> str:
        """A returned expression that is not a var (``out``) or an argument of one."""
        raise NotImplementedError

    def binding(self, binding, vid, d, group) -> tuple:
        """The value of a binding: its id and the description its arguments are read from."""
        raise NotImplementedError

    def edge(self, src, dst, index):
        """``dst`` reads ``src`` as its argument ``index``."""

    def branch_edge(self, src, dst, index, label):
        """``src`` is the result of a branch or closure body of ``dst``."""

    def call(self, nid, callee):
        """``nid`` calls the Relax function ``callee`` (walked after the current function)."""

    def output(self, fname, nid):
        """``nid`` is what function ``fname`` returns."""

    def finish(self):
        """What ``walk`` returns."""
