"""Build the student and answer sites (pages, notebooks) from the lesson sources."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from course.commands.where import ROOT_HELP, course_root
from course.workflows.build_site import build_course


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `course build`."""
    from course.lesson.variants import VARIANTS

    parser.add_argument("--root", type=Path, default=None, help=ROOT_HELP)
    parser.add_argument(
        "--variant",
        action="append",
        choices=list(VARIANTS),
        help="build only this variant (repeatable; default: every one [tool.course] variants lists)",
    )
    parser.add_argument(
        "--renderer",
        choices=["quarto", "pandoc", "auto"],
        help="what renders the pages (default: [tool.course] renderer, auto: Quarto when a Quarto "
        ">= 1.7 is found, else pandoc)",
    )


def run(args: argparse.Namespace) -> int:
    """Build and print what was written."""
    args.root = course_root(args.root, "build")
    start = time.perf_counter()
    result = build_course(args.root, variants=args.variant, renderer=args.renderer)
    if result.up_to_date:
        print(f"course build: up to date ({time.perf_counter() - start:.2f} s)")
        return 0
    for page in result.pages:
        print(f"  wrote {page.relative_to(result.plan.root)}")
    count = len({stem for stems in result.rebuilt.values() for stem in stems})
    which = "; ".join(
        f"{variant}: {', '.join(stems) or 'site-wide steps only'}" for variant, stems in result.rebuilt.items()
    )
    print(
        f"course build: {count} of {len(result.lessons)} lesson(s) rebuilt ({which}) in "
        f"{time.perf_counter() - start:.2f} s"
    )
    return 0
