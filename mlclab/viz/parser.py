"""Relax functions -> the graph model, in three binding views.

Following relay_viz's split (parser -> graph -> plotter), a parser turns IR into a ``Graph`` and
knows nothing about drawing:

- ``DataflowParser`` — graph binding: a DAG in which every value is one node, so a shared value
  has fan-out. Calls to other functions of the module are drawn as their own clusters; calls to
  fused kernels (FuseOps' ``Primitive`` functions) are drawn inline as a cluster per group.
- ``TreeParser`` — what a naive recursive code generator walks: the expression tree under each
  result, where a value used twice appears (and is computed) twice, marked ``recomputed``.
- ``LetParser`` — A-normal form: bindings in order inside their scope (function, ``if`` branch,
  closure), chained by ``seq`` edges, with def-use edges alongside.

Each accepts an mlclab ``CompiledFunction``, a ``relax.Function`` or an ``IRModule``.
"""
from __future__ import annotations

from typing import Optional

from ..frontend.pytorch import module_tree
from .dataflow_walk import DataflowWalk
from .model import Cluster, Graph, Node
from .registry import register_view
from .relax_info import (Described, all_bindings, arg, const_text, const_value_id, describe,
                         format_type, is_primitive, is_tensor_const, literal, lookup, resolve,
                         value_ids)




class RelaxParser:
    """Base of the parsers: resolves the input and gives nodes their ids, names and sources."""

    view = "dataflow"
    layout = "dataflow"             # the Graph's layout intent (mlclab.viz.model.LAYOUTS)
    in_repeated_call = False        # see DataflowWalk (the tree view inlines no fused call)

    def parse(self, obj, function: Optional[str] = None, params: Optional[dict] = None) -> Graph:
        """``params`` maps parameter names to arrays bound to them (weights): drawn as constants."""
        subject = resolve(obj, function)
        self.subject = subject
        self.mod = subject.mod
        self.params = dict(params or {})
        unknown = set(self.params) - {p.name for p in subject.function.params}
        if unknown:
            raise ValueError(f"params: {subject.name} has no parameter "
                             f"{', '.join(map(repr, sorted(unknown)))}; it has "
                             f"{', '.join(p.name for p in subject.function.params)}")
        self.graph = Graph(subject.name, self.view, layout=self.layout)
        if any(info.module is not None for info in subject.bindings.values()):
            # An imported PyTorch model: its module tree names the module clusters
            # (mlclab.viz.modules, applied by views.shape once every node has its source).
            self.graph.modules = module_tree(subject.source)
        self._ids = {}
        self._const_count = 0
        self._build()
        return self.graph

    # -------------------------------------------------------------- shared helpers
    def _ids_of(self, fname):
        if fname not in self._ids:
            self._ids[fname] = value_ids(self.mod[fname], fname)
        return self._ids[fname]

    def _function_cluster(self, fname) -> str:
        func = self.mod[fname]
        kind = "fused" if is_primitive(func) else "function"
        sig = ", ".join(f"{p.name}: {format_type(p.ty)}" for p in func.params)
        cid = f"fn:{fname}"
        self.graph.add_cluster(Cluster(cid, f"fn {fname}({sig})", kind))
        return cid

    def _source(self, var, value):
        if self.in_repeated_call:
            # Another call's vars: no source rather than a wrong one (the pipeline gives each
            # call's values theirs, by identity).
            return None
        return self.subject.source_of(var, value)

    def _param_node(self, fname, var, nid, group):
        vid = self._ids_of(fname)[var]
        bound = var.name in self.params
        node = Node(nid, "const" if bound else "param", var.name, name=var.name, value=vid,
                    type=format_type(var.ty), group=group,
                    attrs={"bound": "weight"} if bound else {},
                    source=self._source(var, None))
        node.text = f"{var.name}: {node.type}"
        return self.graph.add_node(node)

    def _const_node(self, const, group) -> Node:
        self._const_count += 1
        nid = f"{self.subject.name}:const{self._const_count}"
        text = const_text(const)
        node = Node(nid, "const", text or "const", value=const_value_id(const),
                    type=format_type(const.ty), group=group)
        node.text = text or f"const {node.type}"
        return self.graph.add_node(node)

    def _binding_node(self, binding, vid, group, d: Optional[Described] = None):
        """The node for one binding and its description (a MatchCast shows as one)."""
        from tvm import relax

        var, value = binding.var, binding.value
        d = d or describe(value, self.mod)
        node = Node(self._unique(vid), d.kind, d.op, name=var.name, value=vid,
                    type=format_type(var.ty), attrs=d.attrs, group=group,
                    source=self._source(var, value))
        if isinstance(binding, relax.MatchCast):
            node.kind, node.op = "match_cast", "match_cast"
            d = Described("match_cast", "match_cast", {}, [arg(value)])
        return node, d

    def _unique(self, nid):
        if nid not in self.graph.nodes:
            return nid
        k = 2
        while f"{nid}~{k}" in self.graph.nodes:
            k += 1
        return f"{nid}~{k}"


class DataflowParser(RelaxParser, DataflowWalk):
    """Graph binding: one node per value, shared values fan out; functions as clusters.

    It walks the IR as ``DataflowWalk`` reads it (the pipeline's value tracking walks the same
    way); the hooks below draw each piece.
    """

    view = "dataflow"

    def __init__(self, inline_fused: bool = True):
        self.inline_fused = inline_fused

    def _build(self):
        self._call_edges = []       # (call node id, callee name), drawn once all functions are in
        self._outputs_of = {}       # function name -> its result node id
        self.walk(self.subject)
        for call_node, callee in self._call_edges:
            target = self._outputs_of.get(callee)
            if target is not None:
                self.graph.add_edge(call_node, target, 0, "call", "calls")

    # ------------------------------------------------------------------ walk hooks
    def function_group(self, fname) -> str:
        return self._function_cluster(fname)

    def fused_group(self, callee, group) -> str:
        cid, k = f"{group}/{callee}", 1
        while cid in self.graph.clusters:
            k += 1
            cid = f"{group}/{callee}#{k}"
        return self.graph.add_cluster(Cluster(cid, callee, "fused", group)).id

    def branch_group(self, nid, label, group) -> str:
        return self.graph.add_cluster(Cluster(f"{nid}/{label}", label, label, group)).id

    def closure_group(self, nid, var, group) -> str:
        return self.graph.add_cluster(Cluster(f"{nid}/fn", f"fn {var.name}", "closure", group)).id

    def param(self, fname, var, vid, group) -> str:
        return self._param_node(fname, var, vid, group).id

    def free_var(self, fname, var, group) -> str:
        nid = self._unique(f"{fname}:{var.name}")
        return self.graph.add_node(Node(nid, "param", var.name, name=var.name, value=nid,
                                        type=format_type(var.ty), group=group,
                                        attrs={"free": "true"})).id

    def closure_param(self, fname, var, group) -> str:
        pid = self._unique(f"{fname}:{var.name}")
        return self.graph.add_node(Node(pid, "param", var.name, name=var.name, value=pid,
                                        type=format_type(var.ty), group=group)).id

    def const(self, expr, group) -> str:
        return self._const_node(expr, group).id

    def result(self, owner, expr, d, out, group) -> str:
        # A returned tuple or literal is not bound to a var: drawn as a return node.
        nid = self._unique(f"{owner}:return")
        node = self.graph.add_node(Node(nid, "return" if out else d.kind, d.op, value=nid,
                                        type=format_type(getattr(expr, "ty", None)),
                                        attrs=d.attrs, group=group))
        node.text = f"{d.op}(" + ", ".join(_arg_names(d.args)) + ")"
        return nid

    def binding(self, binding, vid, d, group) -> tuple:
        node, d = self._binding_node(binding, vid, group, d)
        self.graph.add_node(node)
        name, value = binding.var.name, binding.value
        if d.kind == "if":
            node.text = f"{name} = if ({_expr_name(value.cond)}) ..."
        elif d.kind == "closure":
            node.text = f"{name} = fn (...)"
        else:
            node.text = _binding_text(name, d, _arg_names(d.args))
        return node.id, d

    def edge(self, src, dst, index):
        self.graph.add_edge(src, dst, index)

    def branch_edge(self, src, dst, index, label):
        self.graph.add_edge(src, dst, index, "branch", label)

    def call(self, nid, callee):
        self._call_edges.append((nid, callee))

    def output(self, fname, nid):
        self.graph.nodes[nid].is_output = True
        self.graph.outputs.append(nid)
        self._outputs_of[fname] = nid


def _arg_names(args) -> list:
    return [_expr_name(x) if kind == "expr" else x for kind, x in args]


def _expr_name(expr) -> str:
    """An argument as binding text names it: a var, a tuple of them, a constant or literal."""
    from tvm import relax

    if isinstance(expr, relax.Var):
        return expr.name
    if isinstance(expr, relax.Tuple):
        return "(" + ", ".join(_expr_name(f) for f in expr.fields) + ")"
    if is_tensor_const(expr):
        return const_text(expr) or "const"
    text = literal(expr)
    return text if text is not None else type(expr).__name__


def _binding_text(name, d: Described, arg_names) -> str:
    if d.kind == "getitem":
        return f"{name} = {arg_names[0]}.{d.attrs['index']}"
    if d.kind == "tuple":
        return f"{name} = (" + ", ".join(arg_names) + ")"
    if d.kind == "const":
        return f"{name} = {d.op}"
    attrs = [f"{k}={v}" for k, v in d.attrs.items() if k != "via"]
    return f"{name} = {d.op}(" + ", ".join(list(arg_names) + attrs) + ")"


class TreeParser(RelaxParser):
    """The expression tree a naive recursive code generator walks from each result.

    Every use of a value expands its whole definition again, so a value shared by two users
    appears twice; every occurrence after the first is marked ``recomputed``. The tree can grow
    exponentially with sharing, so it stops at ``max_nodes`` and marks the cut with ``elided``.
    """

    view = "tree"
    layout = "tree"

    def __init__(self, max_nodes: int = 2000):
        self.max_nodes = max_nodes

    def _build(self):
        from tvm import relax

        fname = self.subject.name
        func = self.mod[fname]
        cid = self._function_cluster(fname)
        ids = self._ids_of(fname)
        defs = {b.var: b.value for b in all_bindings(func)}
        if isinstance(func.body, relax.SeqExpr):
            result = func.body.body
        else:
            result = func.body
        params = set(func.params)
        seen: dict[str, int] = {}
        # An explicit stack, not recursion: a 1,000-deep chain must not hit Python's limit.
        stack = [(result, None, 0, cid, "data", "")]
        root = None
        while stack:
            expr, parent, index, group, ekind, label = stack.pop()
            while isinstance(expr, relax.Var) and isinstance(defs.get(expr), relax.Var):
                expr = defs[expr]                      # aliases compute nothing
            nid, children = self._tree_node(fname, expr, ids, defs, params, seen, group)
            if root is None:
                root = nid
            if parent is not None:
                self.graph.add_edge(nid, parent, index, ekind, label)
            for child in reversed(children):
                stack.append((child[0], nid, child[1], child[2] or group, child[3], child[4]))
        if root is not None:
            self.graph.nodes[root].is_output = True
            self.graph.outputs.append(root)

    def _tree_node(self, fname, expr, ids, defs, params, seen, group):
        """Make the node for one occurrence; return its id and the children still to expand."""
        from tvm import relax

        if len(self.graph.nodes) >= self.max_nodes:
            nid = self._unique(f"{fname}:elided")
            self.graph.add_node(Node(nid, "elided", "…", group=group,
                                     attrs={"reason": f"tree cut at {self.max_nodes} nodes"}))
            return nid, []
        if isinstance(expr, relax.Var):
            vid = ids.get(expr, f"{fname}:{expr.name}")
            seen[vid] = seen.get(vid, 0) + 1
            nid = vid if seen[vid] == 1 else f"{vid}~{seen[vid]}"
            if expr in params or expr not in defs:
                node = self._param_node(fname, expr, nid, group) if expr in params else \
                    self.graph.add_node(Node(nid, "param", expr.name, name=expr.name, value=vid,
                                             type=format_type(expr.ty), group=group,
                                             attrs={"free": "true"}))
                return node.id, []
            value = defs[expr]
            d = describe(value, self.mod)
            node = Node(nid, d.kind, d.op, name=expr.name, value=vid, type=format_type(expr.ty),
                        attrs=d.attrs, group=group, recomputed=seen[vid] > 1,
                        source=self._source(expr, value))
            node.text = _binding_text(expr.name, d, _arg_names(d.args))
            self.graph.add_node(node)
            children = self._arg_children(d.args)
            if d.kind == "if":
                node.text = f"{expr.name} = if ({_expr_name(value.cond)}) ..."
                for pos, label, branch in ((1, "then", value.true_branch),
                                           (2, "else", value.false_branch)):
                    bid = f"{nid}/{label}"
                    self.graph.add_cluster(Cluster(bid, label, label, group))
                    body = branch.body if isinstance(branch, relax.SeqExpr) else branch
                    children.append((body, pos, bid, "branch", label))
            return nid, children
        if is_tensor_const(expr):
            return self._const_node(expr, group).id, []
        d = describe(expr, self.mod)
        nid = self._unique(f"{fname}:{d.kind}")
        self.graph.add_node(Node(nid, d.kind, d.op, value=nid, attrs=d.attrs, group=group,
                                 type=format_type(getattr(expr, "ty", None))))
        return nid, self._arg_children(d.args)

    @staticmethod
    def _arg_children(args):
        from tvm import relax

        children, index = [], 0
        for kind, x in args:
            if kind == "lit":
                continue
            for f in (list(x.fields) if isinstance(x, relax.Tuple) else [x]):
                children.append((f, index, None, "data", ""))
                index += 1
        return children


class LetParser(RelaxParser):
    """A-normal form: each scope lists its bindings in order, ``if`` branches and closures nest.

    ``seq`` edges give the evaluation order (what ``let`` fixes), ``data`` edges the def-use
    links; constants are atoms of ANF, so they stay inline in the binding text.
    """

    view = "let"
    layout = "sequence"

    def _build(self):
        self._call_edges = []       # (let node id, callee name)
        entry = {}                  # function name -> its first node (where a call enters)
        drawn, pending, rest = set(), [self.subject.name], list(self.subject.also)
        while pending or rest:
            fname = pending.pop(0) if pending else rest.pop(0)
            if fname in drawn:
                continue
            drawn.add(fname)
            cid = self._function_cluster(fname)
            func = self.mod[fname]
            env, prev = {}, None
            for p in func.params:
                node = self._param_node(fname, p, self._ids_of(fname)[p], cid)
                env[p] = node.id
                if prev is not None:
                    self.graph.add_edge(prev, node.id, 0, "seq")
                prev = node.id
                entry.setdefault(fname, node.id)
            first, last = self._scope(fname, func.body, env, cid, prev)
            entry.setdefault(fname, first)
            self.graph.outputs.append(last)
            self.graph.nodes[last].is_output = True
            pending += [callee for _, callee in self._call_edges if callee not in drawn]
        for nid, callee in self._call_edges:
            if callee in entry:
                self.graph.add_edge(nid, entry[callee], 0, "call", "calls")

    def _scope(self, fname, seq, env, group, prev):
        """Lay out one scope; returns the ids of its first and last nodes."""
        from tvm import relax

        bindings, result = [], seq
        if isinstance(seq, relax.SeqExpr):
            bindings = [b for block in seq.blocks for b in block.bindings]
            result = seq.body
        first = None
        for b in bindings:
            nid = self._let(fname, b, env, group, prev)
            first, prev = first or nid, nid
        rid = self._result(fname, result, env, group, prev)
        return first or rid, rid

    def _let(self, fname, binding, env, group, prev) -> str:
        """One ``let`` of a scope (chained after ``prev``), with the scopes it opens."""
        from tvm import relax

        var, value = binding.var, binding.value
        node, d = self._binding_node(binding, self._ids_of(fname).get(var, f"{fname}:{var.name}"),
                                     group)
        nid = node.id
        self.graph.add_node(node)
        if prev is not None:
            self.graph.add_edge(prev, nid, 0, "seq")
        self._uses(nid, d.args, env)
        env[var] = nid
        names = _arg_names(d.args)
        node.text = "let " + _binding_text(var.name, d, names)
        if d.kind == "if":
            node.text = f"let {var.name} = if ({names[0]}) ..."
            for label, branch in (("then", value.true_branch), ("else", value.false_branch)):
                bid = f"{nid}/{label}"
                self.graph.add_cluster(Cluster(bid, label, label, group))
                head, _ = self._scope(fname, branch, dict(env), bid, None)
                self.graph.add_edge(nid, head, 0, "branch", label)
        elif d.kind == "closure":
            node.text = f"let {var.name} = fn (...)"
            cid = f"{nid}/fn"
            self.graph.add_cluster(Cluster(cid, f"fn {var.name}", "closure", group))
            inner, pprev = dict(env), None
            for p in value.params:
                pid = self._unique(f"{fname}:{p.name}")
                self.graph.add_node(Node(pid, "param", p.name, name=p.name, value=pid,
                                         type=format_type(p.ty), group=cid))
                if pprev is not None:
                    self.graph.add_edge(pprev, pid, 0, "seq")
                inner[p], pprev = pid, pid
            self._scope(fname, value.body, inner, cid, pprev)
        elif d.kind == "call" and isinstance(value.op, relax.GlobalVar) \
                and isinstance(lookup(self.mod, value.op), relax.Function):
            self._call_edges.append((nid, value.op.name_hint))
        return nid

    def _result(self, fname, result, env, group, prev) -> str:
        """The scope's result: what the tail of the let chain returns."""
        from tvm import relax

        rid = self._unique(f"{fname}:return")
        is_var = isinstance(result, relax.Var)
        node = Node(rid, "return", "return", value=self._ids_of(fname).get(result, rid),
                    group=group, name=result.name if is_var else None,
                    type=format_type(getattr(result, "ty", None)))
        node.text = _expr_name(result)
        self.graph.add_node(node)
        if prev is not None:
            self.graph.add_edge(prev, rid, 0, "seq")
        if is_var:
            if result in env:
                self.graph.add_edge(env[result], rid, 0, "data")
        else:
            self._uses(rid, describe(result, self.mod).args, env)
        return rid

    def _uses(self, nid, args, env):
        from tvm import relax

        index = 0
        for kind, x in args:
            if kind == "lit":
                continue
            for f in (list(x.fields) if isinstance(x, relax.Tuple) else [x]):
                if isinstance(f, relax.Var) and f in env:
                    self.graph.add_edge(env[f], nid, index, "data")
                index += 1



# The built-in views, in the order lists show them. ``show`` is the %%tinynn --show keyword.
register_view("dataflow", DataflowParser, title="graph", show="graph",
              description="graph binding: a DAG, every value one node, shared values fan out")
register_view("let", LetParser, title="let graph",
              description="A-normal form: bindings in order per scope, if branches nested")
register_view("tree", TreeParser, title="tree", show="tree",
              description="what a naive recursive code generator walks: shared values "
                          "recomputed")
register_view("fused", DataflowParser, title="fused", show="fused", after="FuseOps",
              description="the dataflow graph after the build's FuseOps pass: each group "
                          "that becomes one kernel is a cluster")
