"""``python -m mlclab.course make LESSON.ipynb OUTDIR`` / ``grade AUTOGRADER.zip SUBMISSION.ipynb [OUTDIR]``
/ ``site OUTDIR [LESSON.ipynb ...]`` / ``warm-cache LESSON.ipynb ... --to DIR``."""
import argparse
import json
import sys
from pathlib import Path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mlclab.course",
                                     description="Turn a lesson into an otter-grader assignment; grade a submission locally.")
    sub = parser.add_subparsers(dest="command", required=True)
    make = sub.add_parser("make", help="LESSON.ipynb OUTDIR: student notebook and autograder zip")
    make.add_argument("lesson", type=Path)
    make.add_argument("outdir", type=Path)
    grade = sub.add_parser("grade", help="AUTOGRADER.zip SUBMISSION.ipynb [OUTDIR]: scores, no Docker")
    grade.add_argument("autograder", type=Path)
    grade.add_argument("submission", type=Path)
    grade.add_argument("outdir", type=Path, nargs="?", default=Path("."))
    site = sub.add_parser("site", help="OUTDIR [LESSON.ipynb ...]: the lessons executed, as a static site")
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
        pages = build(args.outdir, [p.resolve() for p in args.lessons] or None)
        print(f"{len(pages)} pages in {args.outdir}; serve with: python -m http.server -d {args.outdir}")
        return 0
    try:
        from . import assignment
    except ImportError as exc:   # otter-grader is the `course` extra
        print(f"python -m mlclab.course needs otter-grader: pip install 'mlclab[course]' ({exc})", file=sys.stderr)
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
        print(json.dumps(assignment.grade(args.autograder, args.submission, args.outdir), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
