"""Start the course's JupyterHub on 127.0.0.1 for a trial: students, instructors and graders each in their role."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from course.commands.ports import port_number
from course.commands.where import ROOT_HELP, course_root


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `course hub`."""
    parser.add_argument("--root", type=Path, default=None, help=ROOT_HELP)
    parser.add_argument("--course-root", type=Path, help="nbgrader course root (default: ROOT/autograder)")
    parser.add_argument("--roster", type=Path, help="accounts per role (default: ROOT/hub/roster.yml)")
    parser.add_argument(
        "--state",
        type=Path,
        help="the hub's database, cookie secret and each role's Jupyter config (default: ROOT/.course-hub)",
    )
    parser.add_argument(
        "--port",
        type=port_number(lowest=1, ports=4),
        default=8000,
        help="public port on 127.0.0.1; the next three are used too (default: 8000)",
    )
    parser.add_argument(
        "--open-folders",
        action="store_true",
        help="first let other accounts pass through (chmod o+x) the folders on the way to the "
        "project's Python and course root that they cannot enter, e.g. /root",
    )


def run(args: argparse.Namespace) -> int:
    """Start the hub; the shared password of a trial comes from COURSE_HUB_SHARED_PASSWORD (else each account's own)."""
    args.root = course_root(args.root, "hub")
    from course.workflows.serve_hub import serve_hub

    root = args.root
    serve_hub(
        root,
        course_root=args.course_root or root / "autograder",
        roster=args.roster or root / "hub" / "roster.yml",
        state_dir=args.state or root / ".course-hub",
        port=args.port,
        password=os.environ.get("COURSE_HUB_SHARED_PASSWORD"),
        open_closed=args.open_folders,
    )
    return 0
