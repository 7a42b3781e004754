"""Command line: ``mlclab viz FILE.py ...`` draws a function, ``mlclab text FILE.py ...`` prints it.

The file is read as text and compiled by mlclab; it is never imported or executed.
"""
from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path
from typing import Optional

VIEWS = ("dataflow", "tree", "let")
FORMATS = ("svg", "pdf", "png", "dot", "txt")
STYLES = ("relax", "relay", "let", "tir")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mlclab", description="See a tinynn program: its graph views and its IR texts.")
    sub = parser.add_subparsers(dest="command", required=True)

    viz = sub.add_parser("viz", help="draw a function's graph",
                         description="Draw one function of FILE as a graph. Without -o, text "
                                     "and SVG go to stdout; PDF and PNG to FILE-FUNCTION-VIEW.FMT.")
    viz.add_argument("file", help="a .py file of tinynn functions (read, never run)")
    viz.add_argument("--function", "-f", help="function to draw (default: main, else the first)")
    viz.add_argument("--view", choices=VIEWS, default="dataflow",
                     help="graph binding (dataflow), naive recursive codegen (tree) or A-normal "
                          "form (let); default: dataflow")
    viz.add_argument("--format", choices=FORMATS,
                     help="output format (default: from -o's suffix, else svg)")
    viz.add_argument("--collapse", choices=("function", "group", "all"),
                     help="fold each called function / fused group into one node")
    viz.add_argument("--depth", type=_depth, help="only nodes this many edges from the result")
    viz.add_argument("-o", "--output", help="output file")

    text = sub.add_parser("text", help="print a function's IR as text",
                          description="Print one function of FILE as TVMScript (relax), "
                                      "Relay graph binding (relay), Relay let form (let) or "
                                      "lowered TensorIR (tir).")
    text.add_argument("file", help="a .py file of tinynn functions (read, never run)")
    text.add_argument("--function", "-f", help="function to print (default: main, else the first)")
    text.add_argument("--style", choices=STYLES, required=True)
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
        fn = _load(args.file, args.function)
    except _UsageError as exc:
        parser.exit(2, f"mlclab: error: {exc}\n")
    except Exception as exc:
        from .dsl.diagnostics import DSLError

        if isinstance(exc, DSLError):
            print(str(exc), file=sys.stderr)
            return 1
        raise
    if args.command == "text":
        return _text(fn, args)
    return _viz(fn, args)


class _UsageError(Exception):
    pass


def _load(path: str, function: Optional[str]):
    import mlclab

    file = Path(path)
    if not file.is_file():
        raise _UsageError(f"no such file: {path}")
    source = file.read_text(encoding="utf-8")
    program = mlclab.compile(source, filename=str(file))
    names = list(program)
    if not names:
        raise _UsageError(f"{path} defines no tinynn function")
    if function is None:
        function = "main" if "main" in names else names[0]
    if function not in names:
        raise _UsageError(f"no function {function!r} in {path}; it has {', '.join(names)}")
    return program[function]


def _text(fn, args) -> int:
    from .ir.text import text

    out = text(fn, args.style)
    if args.output:
        Path(args.output).write_text(out, encoding="utf-8")
    else:
        sys.stdout.write(out)
    return 0


def _viz(fn, args) -> int:
    from .viz.dot import MissingDotWarning
    from .viz.views import graph

    view = graph(fn, args.view, collapse=args.collapse, depth=args.depth)
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
