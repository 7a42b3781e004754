"""Command line: ``mlclab viz FILE.py ...`` draws a function, ``mlclab text FILE.py ...`` prints it.

The file is read as text and compiled by mlclab; it is never imported or executed.
"""
from __future__ import annotations

import argparse
import io
import sys
import tokenize
import warnings
from pathlib import Path
from typing import Optional

FORMATS = ("svg", "pdf", "png", "dot", "txt")


def build_parser() -> argparse.ArgumentParser:
    """The parser; its --view and --style choices are the registered views and text styles."""
    from .inspect.texts import text_styles
    from .viz.registry import view_kinds
    from .viz.views import COLLAPSE

    views, styles = view_kinds(), text_styles()
    parser = argparse.ArgumentParser(
        prog="mlclab", description="See a tinynn program: its graph views and its IR texts.")
    sub = parser.add_subparsers(dest="command", required=True)

    viz = sub.add_parser("viz", help="draw a function's graph",
                         description="Draw one function of FILE as a graph. Without -o, text "
                                     "and SVG go to stdout; PDF and PNG to FILE-FUNCTION-VIEW.FMT.")
    viz.add_argument("file", help="a .py file of tinynn functions (read, never run)")
    viz.add_argument("--function", "-f", help="function to draw (default: main, else the first)")
    viz.add_argument("--view", choices=[v.name for v in views], default="dataflow",
                     help="; ".join(f"{v.name}: {v.description}" for v in views)
                     + " (default: dataflow)")
    viz.add_argument("--format", choices=FORMATS,
                     help="output format (default: from -o's suffix, else svg)")
    viz.add_argument("--collapse", choices=[c for c in COLLAPSE if c],
                     help="fold each called function / fused group into one node")
    viz.add_argument("--depth", type=_depth, help="only nodes this many edges from the result")
    viz.add_argument("-o", "--output", help="output file")

    text = sub.add_parser("text", help="print a function's IR as text",
                          description="Print one function of FILE in a text style.")
    text.add_argument("file", help="a .py file of tinynn functions (read, never run)")
    text.add_argument("--function", "-f", help="function to print (default: main, else the first)")
    text.add_argument("--style", choices=[t.name for t in styles], required=True,
                      help="; ".join(f"{t.name}: {t.description}" for t in styles))
    text.add_argument("-o", "--output", help="output file (default: stdout)")
    return parser


def _depth(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


def main(argv: Optional[list] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        _check_output(args.output)
        fn = _load(args.file, args.function)
    except _UsageError as exc:
        parser.exit(2, f"mlclab: error: {exc}\n")
    except Exception as exc:
        from .lang.diagnostics import DSLError

        if isinstance(exc, DSLError):
            print(str(exc), file=sys.stderr)
            return 1
        raise
    try:
        return _text(fn, args) if args.command == "text" else _viz(fn, args)
    except OSError as exc:             # the output could not be written after all
        parser.exit(2, f"mlclab: error: cannot write {args.output or 'the output'}: "
                       f"{exc.strerror or exc}\n")


class _UsageError(Exception):
    pass


def _check_output(output: Optional[str]) -> None:
    """Refuse an -o that cannot be written before compiling anything."""
    if output is None:
        return
    path = Path(output)
    if path.is_dir():
        raise _UsageError(f"-o {output}: is a directory; give a file name")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise _UsageError(f"-o {output}: no such folder {parent}")


def _read_source(path: str) -> str:
    """The file's text; a binary or non-UTF-8 file is a usage error, not a traceback."""
    file = Path(path)
    if not file.is_file():
        raise _UsageError(f"no such file: {path}")
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise _UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    if b"\0" in data:
        raise _UsageError(f"{path} is a binary file, not Python source")
    # As Python reads a source file: UTF-8 (a BOM some editors write is not part of the
    # source) unless a coding cookie (``# -*- coding: latin-1 -*-``) on line 1 or 2 says otherwise.
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        # A cookie naming no codec, or one contradicting the BOM, is said as Python says it;
        # no cookie and lines that are not UTF-8 get the byte and line from the decode below.
        if "unknown encoding" in str(exc) or "encoding problem" in str(exc):
            raise _UsageError(f"{path}: {exc}") from None
        encoding = "utf-8-sig"
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        said = "UTF-8" if encoding.startswith("utf-8") else f"{encoding} (as its coding line says)"
        raise _UsageError(f"{path} is not {said} text (byte 0x{data[exc.start]:02x} on line "
                          f"{line}); save it as UTF-8") from None


def _load(path: str, function: Optional[str]):
    import mlclab

    source = _read_source(path)
    program = mlclab.compile(source, filename=str(Path(path)))
    names = list(program)
    if not names:
        raise _UsageError(f"{path} defines no tinynn function")
    if function is None:
        function = "main" if "main" in names else names[0]
    if function not in names:
        raise _UsageError(f"no function {function!r} in {path}; it has {', '.join(names)}")
    return program[function]


def _text(fn, args) -> int:
    from .inspect.text import text

    out = text(fn, args.style)
    if args.output:
        Path(args.output).write_text(out, encoding="utf-8")
    else:
        sys.stdout.write(out)
    return 0


def _viz(fn, args) -> int:
    from .viz.dot import MissingDotWarning

    # fn.graph: a view of a build step ("fused") reads the function's build record
    view = fn.graph(args.view, collapse=args.collapse, depth=args.depth)
    fmt = args.format or (Path(args.output).suffix[1:] if args.output and
                          Path(args.output).suffix[1:] in FORMATS else "svg")
    if fmt == "txt":
        return _emit(view.text, args.output)
    if fmt == "dot":
        return _emit(view.source, args.output)
    if args.output is None and fmt == "svg":
        import graphviz

        try:
            return _emit(view.svg(), None)
        except graphviz.ExecutableNotFound:
            from .viz.dot import INSTALL_HINT

            print(f"mlclab: {INSTALL_HINT}", file=sys.stderr)
            return _emit(view.text, None)
    output = args.output or f"{Path(args.file).stem}-{fn.name}-{args.view}.{fmt}"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", MissingDotWarning)
        written = view.render(output, fmt)
    for w in caught:
        if issubclass(w.category, MissingDotWarning):
            print(f"mlclab: {w.message}", file=sys.stderr)
    print(written)
    return 0


def _emit(text: str, output: Optional[str]) -> int:
    if output:
        Path(output).write_text(text, encoding="utf-8")
        print(output)
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
