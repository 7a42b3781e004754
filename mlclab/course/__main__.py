"""``python -m mlclab.course make LESSON.ipynb OUTDIR`` /
``grade AUTOGRADER.zip SUBMISSION.ipynb|FOLDER [OUTDIR]`` / ``site OUTDIR [LESSON.ipynb ...]`` /
``warm-cache LESSON.ipynb ... --to DIR``."""
import argparse
import json
import sys
from pathlib import Path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mlclab.course",
        description="Turn a lesson into an otter-grader assignment; grade a submission locally.")
    sub = parser.add_subparsers(dest="command", required=True)
    make = sub.add_parser("make", help="LESSON.ipynb OUTDIR: student notebook and autograder zip")
    make.add_argument("lesson", type=Path)
    make.add_argument("outdir", type=Path)
    grade = sub.add_parser("grade", help="AUTOGRADER.zip SUBMISSION.ipynb|FOLDER [OUTDIR]: each "
                                         "submission run in a sandbox, checked in a clean process")
    grade.add_argument("autograder", type=Path)
    grade.add_argument("submission", type=Path, help="one notebook, or a folder of them")
    grade.add_argument("outdir", type=Path, nargs="?", default=Path("graded"))
    grade.add_argument("--workers", type=int, default=None,
                       help="submissions graded at once (default: the CPUs this process may use)")
    grade.add_argument("--cell-timeout", type=float, default=300.0, help="seconds per cell")
    grade.add_argument("--timeout", type=float, default=900.0, help="seconds per submission")
    grade.add_argument("--cpu-s", type=int, default=None,
                       help="CPU seconds per process of a submission (default: 1.5 x --timeout); "
                            "a loop that ignores interrupts dies here even on a loaded machine")
    grade.add_argument("--memory-mb", type=int, default=4096, help="address space per submission")
    grade.add_argument("--shared-cache", type=Path, default=None, metavar="DIR",
                       help="a class's compile cache (warm-cache --to DIR) the graded runs read, "
                            "mounted read-only, so no submission compiles what it holds")
    site = sub.add_parser("site",
                          help="OUTDIR [LESSON.ipynb ...]: the lessons executed, as a static site")
    site.add_argument("outdir", type=Path)
    site.add_argument("lessons", type=Path, nargs="*")
    warm = sub.add_parser("warm-cache", help="LESSON.ipynb ... --to DIR: run the lessons once, "
                          "filling DIR, a class's shared compile cache (MLCLAB_SHARED_CACHE_DIR)")
    warm.add_argument("lessons", type=Path, nargs="+")
    warm.add_argument("--to", type=Path, required=True, dest="folder")
    warm.add_argument("--timeout", type=int, default=900, help="seconds per cell")
    args = parser.parse_args(argv)
    if args.command in ("site", "warm-cache"):
        missing = [p for p in args.lessons if not p.exists()]
        if missing:
            print(f"python -m mlclab.course {args.command}: no such file: {missing[0]}",
                  file=sys.stderr)
            return 2
    if args.command == "warm-cache":
        from .warm import entries_in, warm as run_lessons
        results = run_lessons(args.lessons, args.folder, args.timeout)
        for result in results:
            print(result)
        print(f"{entries_in(args.folder)} compiled programs in {args.folder}; give students "
              f"MLCLAB_SHARED_CACHE_DIR={args.folder.resolve()} (mounted read-only)")
        return 1 if any(r.errors for r in results) else 0
    if args.command == "site":
        from .site import build
        pages = build(args.outdir, [p.resolve() for p in args.lessons] or None,
                      progress=lambda text: print(text, file=sys.stderr, flush=True))
        print(f"{len(pages)} pages in {args.outdir}; "
              f"serve with: python -m http.server -d {args.outdir}")
        return 0
    try:
        from . import assignment
    except ImportError as exc:   # otter-grader is the `course` extra
        print(f"python -m mlclab.course needs otter-grader: pip install 'mlclab[course]' ({exc})",
              file=sys.stderr)
        return 2
    for path in [p for p in (getattr(args, "lesson", None), getattr(args, "autograder", None),
                             getattr(args, "submission", None)) if p is not None]:
        if not path.exists():
            print(f"python -m mlclab.course {args.command}: no such file: {path}", file=sys.stderr)
            return 2
    if args.command == "make":
        dist = assignment.make(args.lesson, args.outdir)
        print(f"student notebook: {dist / 'student'}\nautograder: {dist / 'autograder'}")
    else:
        return _grade(args)
    return 0


def _grade(args) -> int:
    from .grading import grade
    from .sandbox import Limits
    if args.submission.is_dir():
        subs = sorted(p for p in args.submission.glob("*.ipynb") if p.is_file())
        if not subs:
            print(f"python -m mlclab.course grade: no .ipynb in {args.submission}", file=sys.stderr)
            return 2
    else:
        subs = [args.submission]
    limits = Limits(cell_s=args.cell_timeout, total_s=args.timeout, memory_mb=args.memory_mb,
                    cpu_s=args.cpu_s or int(max(args.timeout, args.cell_timeout) * 1.5))
    try:
        rows = grade(args.autograder, subs, args.outdir, workers=args.workers, limits=limits,
                     shared_cache=args.shared_cache)
    except (ValueError, OSError, __import__("zipfile").BadZipFile) as exc:
        print(f"python -m mlclab.course grade: {exc}", file=sys.stderr)
        return 2
    if len(rows) == 1:
        row = rows[0]
        print(json.dumps({"scores": row.scores, "total": row.total, "feedback": row.feedback,
                          "possible": sum(row.possible.values())}, indent=2))
    else:
        for row in rows:
            print(f"{row.name}: {row.total:g}/{sum(row.possible.values()):g}")
    print(f"grades: {args.outdir / 'grades.csv'}; per submission: {args.outdir / 'results'} "
          f"(Gradescope's format), {args.outdir / 'logs'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
