"""The `course` command edge: only the chosen command is loaded, every command is listed, errors become exit codes."""

from __future__ import annotations

import json
import subprocess
import sys

from course.cli import COMMANDS, main

HEAVY = ("nbformat", "nbgrader", "jsonschema", "torch", "matplotlib", "jinja2")


def modules_after(argv: list[str]) -> set[str]:
    """Top-level modules imported by a fresh process running `course ARGV`."""
    code = (
        "import sys, contextlib, io\nfrom course.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    try: main({argv!r})\n    except SystemExit: pass\n"
        "import json; print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(json.loads(run.stdout.splitlines()[-1]))


def test_help_lists_every_command_with_its_summary(capsys):
    """`course --help` names each command and the first line of its module's docstring."""
    try:
        main(["--help"])
    except SystemExit as exc:
        assert exc.code == 0
    out = capsys.readouterr().out
    for name in COMMANDS:
        assert name in out
    assert "Build the student and answer sites" in out


def test_help_imports_no_heavy_library():
    """Listing the commands loads none of them, so it costs a bare Python start, not seconds."""
    assert not modules_after(["--help"]) & set(HEAVY)


def test_a_command_loads_only_its_own_module():
    """`course build --help` imports the build command, not grading's nbgrader."""
    loaded = modules_after(["build", "--help"])
    assert "nbgrader" not in loaded


def test_course_error_becomes_exit_code_2(tmp_path, capsys):
    """A located CourseError is printed with the command's name and exits 2 (here: no lessons in an empty folder)."""
    assert main(["build", "--root", str(tmp_path)]) == 2
    assert "course build:" in capsys.readouterr().err


def test_an_interrupted_command_says_how_far_it_got_and_a_plain_ctrl_c_says_nothing(monkeypatch, capsys):
    """Ctrl-C exits 130 without a traceback; a command that can resume (Interrupted) says how, in its message."""
    import course.commands.grade as grade
    from course.errors import Interrupted

    def stopped(args):
        raise Interrupted("interrupted after 3 of 8; `course grade lesson05` resumes")

    def ctrl_c(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(grade, "grade", stopped)
    assert main(["grade", "lesson05"]) == 130
    assert capsys.readouterr().err == "course grade: interrupted after 3 of 8; `course grade lesson05` resumes\n"
    monkeypatch.setattr(grade, "grade", ctrl_c)  # before the batch started: the command says nobody was graded
    assert main(["grade", "lesson05"]) == 130
    assert capsys.readouterr().err == (
        "course grade: interrupted before anyone was graded; `course grade lesson05` starts it again\n"
    )
    monkeypatch.setattr(grade, "run", ctrl_c)
    assert main(["grade", "lesson05"]) == 130
    assert capsys.readouterr().err == ""
