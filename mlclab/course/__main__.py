"""``python -m mlclab.course make LESSON.ipynb OUTDIR`` / ``grade AUTOGRADER.zip SUBMISSION.ipynb [OUTDIR]``."""
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
    args = parser.parse_args(argv)
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
