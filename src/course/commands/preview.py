"""Serve the site on 127.0.0.1 and rebuild the changed lessons as they are edited; the open page reloads itself."""

from __future__ import annotations

import argparse
from pathlib import Path

from course.commands.ports import port_number
from course.commands.where import ROOT_HELP, course_root


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `course preview`."""
    from course.lesson.variants import VARIANTS

    parser.add_argument("--root", type=Path, default=None, help=ROOT_HELP)
    parser.add_argument(
        "--variant", choices=list(VARIANTS), help="the site to serve (default: the first of [tool.course] variants)"
    )
    parser.add_argument(
        "--port", type=port_number(), default=8000, help="port on 127.0.0.1 (default: 8000; 0 picks a free one)"
    )


def run(args: argparse.Namespace) -> int:
    """Preview until Ctrl-C (which the CLI turns into exit status 130)."""
    args.root = course_root(args.root, "preview")
    from course.workflows.preview_site import preview

    preview(args.root, variant=args.variant, port=args.port)
    return 0
