"""Serve the site on 127.0.0.1 and rebuild the changed lessons as they are edited; the open page reloads itself."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `course preview`."""
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="project root (default: current folder)")
    parser.add_argument("--variant", choices=["student", "answer"], default="student",
                        help="the site to serve (default: student)")
    parser.add_argument("--port", type=int, default=8000,
                        help="port on 127.0.0.1 (default: 8000; 0 picks a free one)")


def run(args: argparse.Namespace) -> int:
    """Preview until Ctrl-C (which the CLI turns into exit status 130)."""
    from course.workflows.preview_site import preview

    preview(args.root, variant=args.variant, port=args.port)
    return 0
