"""``%load_ext mlclab`` and the ``%%tinynn`` cell magic.

The cell holds DSL functions. The magic hands the cell text to ``mlclab.api.compile`` (the text is
parsed, never run by Python), binds each compiled function in the notebook under its own name
and shows the views in one display. A rejected program fails the cell, so Run All stops, and
shows only the compact diagnostic (file, line, the source line with a caret): the traceback of
mlclab's internals would say nothing to a student.
"""
from __future__ import annotations

import json

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display
from traitlets import List, Unicode

from ..api.errors import compact_traceback
from .cell_display import CellDisplay, show_choices

def _suppress_traceback(err: BaseException, kind: str) -> BaseException:
    # IPython asks an exception for ``_render_traceback_()`` before formatting one; setting it
    # on the instance keeps the exception's own type (a DSLError stays a DSLError for code that
    # catches it) while the cell shows only the message.
    err._render_traceback_ = lambda: compact_traceback(kind, str(err))
    return err


class CheckFailed(Exception):
    """``%%tinynn --check`` found a compiled function that disagrees with numpy."""

    def _render_traceback_(self):
        return compact_traceback("CheckFailed", str(self))


def _check(validation, fn, seed):
    """``--check`` of one function: its report, or the reason it cannot be checked (inputs
    too large to draw, a size no draw fits) as the cell's only output, naming the function."""
    from ..api.errors import USER_ERRORS

    try:
        return validation.validate(fn, seed=seed)
    except USER_ERRORS as err:
        kind = next(k for k in (MemoryError, TypeError, ValueError, Exception)
                    if isinstance(err, k))
        raise _suppress_traceback(kind(f"--check cannot check {fn.name}: {err}"),
                                  kind.__name__) from None


def _parse_show(values, default) -> list[str]:
    names = []
    for value in values or default:
        names.extend(v for v in value.replace(",", " ").split() if v)
    choices = show_choices()
    unknown = [n for n in names if n not in choices]
    if unknown:
        raise UsageError(f"--show: unknown view {', '.join(map(repr, unknown))}; "
                         f"choose from {', '.join(choices)}")
    return list(dict.fromkeys(names))


def _parse_line(magic, line):
    """The magic's arguments, or a UsageError saying what is wrong with them."""
    try:
        args = parse_argstring(magic, line)
    except ValueError as err:          # shlex: "No closing quotation", "No escaped character"
        raise UsageError(f"%%tinynn: cannot read the arguments {line.strip()!r}: "
                         f"{str(err)[:1].lower()}{str(err)[1:]}") from None
    if args.seed is not None and args.seed < 0:
        raise UsageError(f"--seed must be 0 or more, got {args.seed}")
    return args


def _parse_target(text):
    if text is None:
        return None
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1]              # IPython's argument split keeps the quotes of a value
    if text.startswith("{"):
        try:
            target = json.loads(text)
        except json.JSONDecodeError as err:
            raise UsageError(f"--target: not valid JSON: {err}") from None
    else:
        target = text
    from ..backend.passes import resolve_target

    try:                               # refused here, as a usage error, not as a traceback
        resolve_target(target)
    except (TypeError, ValueError) as err:
        raise UsageError(f"--target: {target!r} is not a target TVM knows ({err}); use "
                         f'"llvm" for this CPU') from None
    return target


@magics_class
class TinyNNMagics(Magics):
    """Compile tinynn DSL cells. Defaults can be set with ``%config TinyNNMagics.show = [...]``."""

    show = List(Unicode(), default_value=["graph", "let", "relax", "tir"],
                help="views a %%tinynn cell shows when --show is not given").tag(config=True)

    def _cell_number(self) -> int:
        # The number in the cell's prompt. IPython 9 bumps ``execution_count`` before running a
        # cell, 8 after; both have stored the cell's input under its number by now.
        return max(len(self.shell.history_manager.input_hist_raw) - 1, 0)

    @magic_arguments()
    @argument("--show", nargs="+", metavar="VIEW",
              help=f"views to show, any of: {', '.join(show_choices())} (space or comma "
                   f"separated)")
    @argument("--target", default=None,
              help='compilation target: "llvm" (default) or a JSON target dict')
    @argument("--fast-math", action="store_true",
              help="let TVM and LLVM rewrite float arithmetic as if it were exact (faster; "
                   "results may differ from numpy's)")
    @argument("-q", "--quiet", action="store_true", help="bind the functions, show nothing")
    @argument("-f", "--force", action="store_true", help="recompile, bypassing the cache")
    @argument("--check", action="store_true",
              help="validate every function against numpy on random inputs; fail the cell if "
                   "one disagrees")
    @argument("--seed", type=int, default=None,
              help="seed of the random inputs of --check and the validate view")
    @cell_magic
    def tinynn(self, line, cell):
        """Compile the DSL functions in this cell and bind each under its own name.

        Example::

            %%tinynn --show graph relax --check
            def mlp(x: Tensor[("n", 784), f32], w: Tensor[(10, 784), f32]):
                return relu(linear(x, w))
        """
        from .. import api
        from ..api import validation
        from ..lang.diagnostics import DSLError

        args = _parse_line(self.tinynn, line)
        show = _parse_show(args.show, self.show)
        target = _parse_target(args.target)
        if args.check and "validate" not in show:
            show.append("validate")

        # One blank line stands for the %%tinynn line, so line numbers in errors and views are
        # the ones the student sees in the cell.
        source = "\n" + cell
        filename = f"<tinynn cell [{self._cell_number()}]>"
        options = {"filename": filename, "force": args.force, "fast_math": args.fast_math}
        if target is not None:
            options["target"] = target
        try:
            program = api.compile(source, **options)
        except DSLError as err:
            raise _suppress_traceback(err, "DSLError")

        for name, fn in program.items():
            self.shell.user_ns[name] = fn

        reports = {}
        if args.check:
            reports = {name: _check(validation, fn, args.seed) for name, fn in program.items()}
        if not args.quiet:
            display(CellDisplay(program, show, reports, target=target or "llvm", seed=args.seed))
        failed = [r for r in reports.values() if not r.ok]
        if failed:
            raise CheckFailed("; ".join(
                f"{r.function} disagrees with numpy: max abs err {r.max_abs_err:.3g}"
                + (f", first divergence at {r.first_divergence}" if r.first_divergence else "")
                for r in failed))


def load_ipython_extension(ipython) -> None:
    """``%load_ext mlclab``: register ``%%tinynn``."""
    ipython.register_magics(TinyNNMagics)
