"""The `course` command: a thin edge over the library; errors become exit codes only here."""

from __future__ import annotations

import argparse
import importlib
import sys

from course.errors import CourseError

# Each subcommand lives in course/commands/<name>.py with add_arguments(parser) and run(args) -> int.
COMMANDS = ("build", "publish", "check", "grade", "report", "lab", "demo", "new")


def _parser() -> argparse.ArgumentParser:
    """Build the argument parser, one sub-parser per command module."""
    parser = argparse.ArgumentParser(prog="course", description="Build, publish and grade the course.")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"course.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"course.commands.{name}":
                raise
            continue
        sp = sub.add_parser(name, help=module.__doc__.strip().splitlines()[0] if module.__doc__ else None)
        module.add_arguments(sp)
        sp.set_defaults(_run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; a CourseError prints its located message and exits 2."""
    args = _parser().parse_args(argv)
    try:
        return int(args._run(args) or 0)
    except CourseError as exc:
        print(f"course {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
