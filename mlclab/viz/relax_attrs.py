"""A Relax call's attributes as short text, for the texts and the graphs' details (what
``relax_info.call_attrs`` gives): only the fields that differ from the operator's defaults, as
Relay's printer showed them."""
from __future__ import annotations

import inspect
import re

from ..lang import dims as D


_INT_IMM = re.compile(r"T\.int(?:32|64)\((-?\d+)\)")


def format_tvm_dim(dim) -> str:
    """A shape dimension as mlclab's types spell it (``8``, ``n``, ``n*4 + 1``: see
    ``lang.dims``), so a view and a message agree; TVM's ``T.int64(4)`` noise is removed and
    what ``dims`` cannot spell (``T.max(n, 1)``) is shown as TVM prints it."""
    try:
        return str(int(dim))
    except (TypeError, ValueError):
        text = _INT_IMM.sub(r"\1", str(dim))
    try:
        return D.format_dim(D.parse(text))
    except ValueError:
        return text


def _attr_fields(attrs):
    info = getattr(type(attrs), "__tvm_ffi_type_info__", None)
    names: list[str] = []
    while info is not None:
        names = [f.name for f in info.fields] + names
        info = info.parent_type_info
    return names


def call_attrs(call, non_default: bool = True) -> dict[str, str]:
    """The call's attributes as short strings; unset (None) ones are left out.

    With ``non_default`` (as Relay's printer did) attributes equal to the operator's defaults
    are left out too, so ``nn.conv2d`` shows its padding, not six layout and dilation fields.
    """
    out = _attrs_text(call.attrs)
    if non_default and out:
        default = _default_attrs(call)
        out = {k: v for k, v in out.items() if default.get(k) != v}
    return out


def _attrs_text(attrs) -> dict[str, str]:
    if attrs is None:
        return {}
    out = {}
    for name in _attr_fields(attrs):
        try:
            value = getattr(attrs, name)
        except Exception:     # a field the Python side cannot read: leave it out, never fail
            continue
        if value is None:
            continue
        out[name] = format_value(value)
    return out


def _default_attrs(call) -> dict[str, str]:
    """The attributes the op's Python builder gives when called with the tensor args alone."""
    import tvm
    from tvm.relax import op as relax_op

    if not isinstance(call.op, tvm.ir.Op) or not call.op.name.startswith("relax."):
        return {}
    builder = relax_op
    for part in call.op.name.split(".")[1:]:
        builder = getattr(builder, part, None)
        if builder is None:
            return {}
    # Attributes the builder requires (batch_norm's ``axis``) have no default: pass the call's
    # own values and leave them out of the defaults, so they are always shown.
    try:
        extra = list(inspect.signature(builder).parameters.values())[len(call.args):]
    except (TypeError, ValueError):
        return {}
    required = {p.name: getattr(call.attrs, p.name) for p in extra
                if p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD
                and p.name in _attr_fields(call.attrs)}
    try:
        default = _attrs_text(builder(*call.args, **required).attrs)
    except Exception:     # a builder that wants more than that: show every attribute
        return {}
    return {k: v for k, v in default.items() if k not in required}


def format_value(value) -> str:
    """A Python/FFI attribute value as text: lists as ``[1, 1]``, strings bare, dims cleaned."""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, (int, float, str)):
        return str(value)
    try:
        items = list(value)
    except TypeError:
        return format_tvm_dim(value)
    return "[" + ", ".join(format_value(v) for v in items) + "]"
