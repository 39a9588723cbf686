"""Each stock nbgrader command the course tool runs is a process of its own, as `python -m nbgrader` would be: its
working folder, exactly the environment it is given, a state nothing earlier left behind, its exit handlers, its
exit status and its output; a forked process gets a server of its own."""

from __future__ import annotations

import os

from course.workflows.nbgrader_process import run_forked

# nbgrader runs the config file in its working folder: what the command sees, printed
CONFIG = """\
import atexit, json, os, sys
json.seen = getattr(json, "seen", 0) + 1  # a module attribute no fresh process has
print("seen", json.seen, os.environ.get("MARK"), "SECRET" in os.environ, os.getcwd(), sys.argv[1:3], os.getpid())
if json.seen == 1:  # nbgrader reads the file once per app it starts
    atexit.register(lambda: open("exited", "a").write("x"))
"""


def test_each_command_is_a_fresh_process_with_its_folder_environment_and_exit(tmp_path, monkeypatch):
    monkeypatch.setenv("SECRET", "not given to the command")
    folders = [tmp_path / "a", tmp_path / "b"]
    for folder in folders:
        folder.mkdir()
        (folder / "nbgrader_config.py").write_text(CONFIG, "utf-8")
    env = {"PATH": os.environ["PATH"], "MARK": "first"}
    first = run_forked(folders[0], ["db", "student", "list"], env)
    second = run_forked(folders[1], ["db", "student", "list"], {**env, "MARK": "second"})
    for run, folder, mark in ((first, folders[0], "first"), (second, folders[1], "second")):
        assert run.returncode == 0, run.stderr
        said = run.stdout.splitlines()[0].split()
        assert said[:5] == ["seen", "1", mark, "False", str(folder)] and said[5:7] == ["['db',", "'student']"]
        assert (folder / "exited").read_text() == "x"  # its exit handlers ran, once
    assert first.stdout.split()[7] != second.stdout.split()[7] != str(os.getpid())


def test_a_failing_command_gives_its_status_and_message(tmp_path):
    run = run_forked(tmp_path, ["db", "student", "remove", "nobody"], {"PATH": os.environ["PATH"]})
    assert run.returncode == 1 and "No such student: 'nobody'" in run.stderr


def test_a_forked_caller_gets_a_server_of_its_own(tmp_path):
    (tmp_path / "nbgrader_config.py").write_text(CONFIG, "utf-8")
    env = {"PATH": os.environ["PATH"]}
    assert run_forked(tmp_path, ["db", "student", "list"], env).returncode == 0  # this process's server runs
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child must not talk to its parent's server: the answers would cross
        os.close(read)
        code = run_forked(tmp_path, ["db", "student", "list"], {**env, "MARK": "child"}).returncode
        os.write(write, f"{code}".encode())
        os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    assert os.read(read, 16) == b"0"
    again = run_forked(tmp_path, ["db", "student", "list"], env)
    assert again.returncode == 0 and again.stdout.split()[1:3] == ["1", "None"]
