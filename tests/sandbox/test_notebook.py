"""The grading sandbox against hostile submissions: each attack ends within its limits, the host stays untouched.

The hostile notebooks (tests/sandbox/fixtures/hostile/, made by make_hostile.py) all run once per engine (the
kernel-less IPython shell and the Jupyter kernel), in parallel, from a scratch directory inside a temporary
course root that holds a secret gradebook, source notebook, rubric and solution. Every notebook has an innocent
cell before its attack and one after it. A fidelity notebook checks that both engines give the same outputs.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import importlib.util
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest
from nbformat import v4

from course.errors import CourseError, ToolMissing
from course.sandbox.answer import run_python_sandboxed
from course.sandbox.frames import TIMEOUT_ENAME, OutputBudget, output_size, truncation_note
from course.sandbox.limits import Limits
from course.sandbox.notebook import CELL_GRACE_S, ENGINES, execute_notebook_sandboxed
from course.sandbox.results import SandboxRun
from course.tools import bubblewrap
from course.tools.bubblewrap import SandboxUnavailable, find_bwrap, probe_bwrap

pytestmark = pytest.mark.long(50)
HOSTILE = Path(__file__).parent / "fixtures" / "hostile"


def _load_case_maker():
    """The fixture generator, for its case list and the names its notebooks use."""
    spec = importlib.util.spec_from_file_location("make_hostile", HOSTILE / "make_hostile.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_maker = _load_case_maker()
CASES, ESCAPE_NAME, PROBE_PORT = _maker.CASES, _maker.ESCAPE_NAME, _maker.PROBE_PORT
MiB = 2**20
LIMITS = Limits(cell_timeout_s=3, submission_timeout_s=20, memory_bytes=512 * MiB)
# Filling 512 MiB took over 3 s while the other test worker was busy too; that case is about the memory cap, so its
# cell gets more time than 3 s. (The huge print needs no more: the kernel stops sending it past the output budget.)
CASE_LIMITS = {"memory-bomb": dataclasses.replace(LIMITS, cell_timeout_s=15)}
# Cases run by one engine only, with the reason the other one skips them.
SHELL_ONLY = {
    "ignore-interrupt": "a kernel that ignores SIGINT makes nbclient time out cell after cell, 7 s each, until the end",
}
SECRET = "gradebook-secret-7f3a9c"
BEFORE, ATTACK, AFTER = 1, 2, -1  # cell positions: [title, before, attack..., after]
PATCHED_MODULES = ("nbclient", "jupyter_client.session", "IPython.core.interactiveshell", "ipykernel.kernelbase")


@pytest.fixture(scope="module")
def bwrap() -> Path:
    """The bwrap binary, after checking it can build a sandbox here (skip the test otherwise)."""
    try:
        path = find_bwrap()
        probe_bwrap(path, sys.executable)
    except ToolMissing as exc:
        pytest.skip(str(exc))
    return path


@pytest.fixture(scope="module")
def course_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A course root whose gradebook, source notebook, rubric and solution all contain SECRET."""
    root = tmp_path_factory.mktemp("course")
    for rel in (
        "gradebook.db",
        "source/lesson05/lesson05.ipynb",
        "autograder/rubrics/lesson05.yml",
        "solutions/lesson05.py",
    ):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"{SECRET}\n")
    return root


def _module_digests() -> dict[str, str]:
    """sha256 of the source files the patch-modules case tries to overwrite."""
    files = [importlib.import_module(name).__file__ for name in PATCHED_MODULES]
    return {f: hashlib.sha256(Path(f).read_bytes()).hexdigest() for f in files}


def _listener() -> socket.socket | None:
    """A host socket on 127.0.0.1:PROBE_PORT that the network case must not reach (None if the port is taken)."""
    sock = socket.socket()
    try:
        sock.bind(("127.0.0.1", PROBE_PORT))
    except OSError:
        sock.close()
        return None
    sock.listen()
    sock.setblocking(False)
    return sock


@pytest.fixture(scope="module", params=ENGINES)
def hostile(request: pytest.FixtureRequest, bwrap: Path, course_root: Path) -> dict:
    """Run every hostile notebook once per engine (in parallel) and record what the host looked like around it."""
    engine = request.param
    cases = [case for case in CASES if engine == "shell" or case not in SHELL_ONLY]
    digests = _module_digests()
    listener = _listener()
    sentinel = subprocess.Popen(["sleep", "300"])

    def run(case: str) -> tuple[SandboxRun, float]:
        begin = time.monotonic()
        limits = CASE_LIMITS.get(case, LIMITS)
        workdir = course_root / ".grading" / engine / case
        result = execute_notebook_sandboxed(HOSTILE / f"{case}.ipynb", workdir=workdir, limits=limits, engine=engine)
        return result, time.monotonic() - begin

    with ThreadPoolExecutor(max_workers=4) as pool:
        runs = dict(zip(cases, pool.map(run, cases)))
    host = {
        "digests_before": digests,
        "digests_after": _module_digests(),
        "sentinel_alive": sentinel.poll() is None,
        "accepted": None,
    }
    sentinel.kill()
    sentinel.wait()
    if listener is not None:
        try:
            listener.accept()
            host["accepted"] = True
        except BlockingIOError:
            host["accepted"] = False
        listener.close()
    return {"engine": engine, "runs": runs, "host": host}


def _code(run: SandboxRun) -> list[nbformat.NotebookNode]:
    """The executed notebook's code cells, in order."""
    return [c for c in run.executed.cells if c.cell_type == "code"]


def _text(cell: nbformat.NotebookNode) -> str:
    """Everything a cell showed as one string: stream text, "ename: evalue" of errors, other data as JSON."""
    parts = []
    for out in cell.outputs:
        if out.output_type == "stream":
            parts.append(out.text)
        elif out.output_type == "error":
            parts.append(f"{out.ename}: {out.evalue}\n")
        else:
            parts.append(json.dumps(out.get("data", {})))
    return "".join(parts)


def _stdout(cell: nbformat.NotebookNode) -> str:
    """What a cell printed to its standard output."""
    return "".join(out.text for out in cell.outputs if out.output_type == "stream" and out.name == "stdout")


def _lines(cell: nbformat.NotebookNode, word: str) -> list[str]:
    """The printed lines of CELL that start with WORD."""
    return [line for line in _text(cell).splitlines() if line.startswith(word)]


def _get(hostile: dict, case: str) -> SandboxRun:
    """The run of one case, checked to have kept within the wall clock and to carry a notebook."""
    if case not in hostile["runs"]:
        pytest.skip(SHELL_ONLY[case])
    run, seconds = hostile["runs"][case]
    assert seconds < LIMITS.submission_timeout_s + 5, f"{case} took {seconds:.1f} s"
    assert run.executed is not None, (case, run.status, run.reason)
    return run


def _fork_bomb_took_the_run_down(run: SandboxRun) -> bool:
    """Whether a fork bomb's run ended in one of the two ways that stop the whole submission, with its evidence.

    As root with a memory cgroup, 64 forked Pythons together pass 512 MiB; or the forks that outlive the cell
    (the task cap only stops new ones) starve the shell on a busy machine, so the cell's interrupt is not
    handled within the grace period and the runner kills the sandbox from outside.
    """
    if run.status == "oom":
        return "for the whole submission" in run.reason and "cgroup" in run.memory_limit
    stopped = [(i.cell_index, i.kind) for i in run.incidents] == [(ATTACK, "stopped"), (ATTACK + 1, "not-run")]
    return run.status == "timeout" and "could not be interrupted" in run.reason and stopped


# ------------------------------------------------------------- every case


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.sandbox
@pytest.mark.slow
def test_case_keeps_the_rest_of_the_notebook(hostile: dict, case: str) -> None:
    """The innocent cell before the attack always ran; the one after ran unless the attack took the run down."""
    run = _get(hostile, case)
    cells = _code(run)
    assert "innocent before: 42" in _text(cells[0])
    if case in ("os-exit", "ignore-interrupt"):
        assert cells[AFTER].outputs == [] and cells[AFTER].execution_count is None
    elif case == "fork-bomb" and run.status != "ok":
        assert _fork_bomb_took_the_run_down(run), (run.status, run.reason)
    else:
        assert run.status == "ok", (run.status, run.reason)
        if case == "fork-bomb":  # forks that outlive the attack write to the kernel's stderr, which the kernel shows
            # in the cell running then: the innocent cell may show their errors too (on a loaded machine, libzmq's
            # "Resource temporarily unavailable (src/thread.cpp:241)"); what it printed is its own
            assert _stdout(cells[AFTER]) == "innocent after: 45\n", cells[AFTER].outputs
        else:
            assert _text(cells[AFTER]).strip() == "innocent after: 45"


@pytest.mark.sandbox
@pytest.mark.slow
def test_no_secret_of_the_course_reaches_any_notebook(hostile: dict) -> None:
    """Whatever a case tried, no executed notebook contains the course root's secret."""
    for case, (run, _) in hostile["runs"].items():
        assert SECRET not in nbformat.writes(run.executed), case


# ------------------------------------------------------------- one test per attack


@pytest.mark.sandbox
@pytest.mark.slow
def test_infinite_loop_cell_is_interrupted_at_the_cell_limit(hostile: dict) -> None:
    run = _get(hostile, "infinite-loop-cell")
    assert [(i.cell_index, i.kind) for i in run.incidents] == [(2, "cell-timeout")]
    # Both engines: the interrupt's KeyboardInterrupt, then nbgrader's timeout error.
    assert [o.get("ename") for o in _code(run)[ATTACK - 1].outputs] == ["KeyboardInterrupt", "CellTimeoutError"]


@pytest.mark.sandbox
@pytest.mark.slow
def test_cell_that_ignores_its_interrupt_is_killed_from_outside(hostile: dict) -> None:
    run = _get(hostile, "ignore-interrupt")
    _, seconds = hostile["runs"]["ignore-interrupt"]
    assert run.status == "timeout"
    assert "cell ignore-interrupt-1" in run.reason and "could not be interrupted" in run.reason
    assert [(i.cell_index, i.kind) for i in run.incidents] == [(2, "stopped"), (3, "not-run")]
    assert LIMITS.cell_timeout_s + CELL_GRACE_S <= seconds


@pytest.mark.sandbox
@pytest.mark.slow
def test_infinite_loop_in_a_called_function_stops_the_calling_cell(hostile: dict) -> None:
    run = _get(hostile, "infinite-loop-in-function")
    assert [(i.cell_index, i.kind) for i in run.incidents] == [(3, "cell-timeout")]
    assert _code(run)[1].outputs == []  # defining the function is harmless


@pytest.mark.sandbox
@pytest.mark.slow
def test_fork_bomb_hits_the_task_cap_or_the_memory_cap_of_the_whole_submission(hostile: dict) -> None:
    run = _get(hostile, "fork-bomb")
    if run.status != "ok":
        assert _fork_bomb_took_the_run_down(run), (run.status, run.reason)
        return
    enames = {o.get("ename") for o in _code(run)[ATTACK - 1].outputs if o.output_type == "error"}
    assert enames & {"BlockingIOError", "CellTimeoutError"}, enames


@pytest.mark.sandbox
@pytest.mark.slow
def test_memory_bomb_gets_a_memory_error(hostile: dict) -> None:
    run = _get(hostile, "memory-bomb")
    assert [(i.cell_index, i.kind) for i in run.incidents] == [(2, "memory")]
    assert "512 MiB" in run.incidents[0].message


@pytest.mark.sandbox
@pytest.mark.slow
def test_os_exit_ends_the_run_with_the_reason(hostile: dict) -> None:
    run = _get(hostile, "os-exit")
    assert run.status == "crashed"
    assert "cell os-exit-1" in run.reason and "exit status 3" in run.reason
    assert [(i.cell_index, i.kind) for i in run.incidents] == [(2, "stopped"), (3, "not-run")]


@pytest.mark.sandbox
@pytest.mark.slow
def test_sys_exit_is_an_error_in_its_cell_only(hostile: dict) -> None:
    run = _get(hostile, "sys-exit")
    assert [o.ename for o in _code(run)[ATTACK - 1].outputs if o.output_type == "error"] == ["SystemExit"]


@pytest.mark.sandbox
@pytest.mark.slow
def test_killing_the_parent_reaches_nothing(hostile: dict) -> None:
    run = _get(hostile, "kill-parent")
    assert "the kernel is still here" in _text(_code(run)[ATTACK - 1])
    assert hostile["host"]["sentinel_alive"], "kill(-1) inside the sandbox killed a process on the host"


@pytest.mark.sandbox
@pytest.mark.slow
def test_writes_outside_the_sandbox_fail(hostile: dict, course_root: Path, project_root: Path) -> None:
    run = _get(hostile, "write-outside")
    attack = _code(run)[ATTACK - 1]
    # /tmp inside is the sandbox's own tmpfs: a project checked out under /tmp shows up there as empty
    # mount-point folders, writable but gone with the sandbox (the host checks below prove nothing escaped)
    assert [ln for ln in _lines(attack, "WROTE") if not ln.split()[1].startswith("/tmp/")] == []
    assert len(_lines(attack, "blocked")) >= 8
    assert "home is /tmp" in _text(attack)  # $HOME is the sandbox's own tmpfs
    workdir = course_root / ".grading" / hostile["engine"] / "write-outside"
    for place in (project_root, Path("/work/main"), course_root, workdir.parent, Path.home(), Path("/")):
        assert not (place / ESCAPE_NAME).exists(), place
    assert sorted(p.name for p in workdir.iterdir()) == ["write-outside.ipynb"]


@pytest.mark.sandbox
@pytest.mark.slow
def test_course_files_cannot_be_read(hostile: dict) -> None:
    run = _get(hostile, "read-source")
    attack = _code(run)[ATTACK - 1]
    assert "blocked import course ModuleNotFoundError" in _text(attack)
    assert len(_lines(attack, "blocked")) >= 16
    assert [line.split()[1] for line in _lines(attack, "READ")] == ["/submission/read-source.ipynb"]


@pytest.mark.sandbox
@pytest.mark.slow
def test_patching_modules_stays_inside_the_kernel(hostile: dict) -> None:
    run = _get(hostile, "patch-modules")
    attack = _code(run)[ATTACK - 1]
    assert _lines(attack, "WROTE") == ["WROTE /submission/sitecustomize.py"], _text(attack)  # its own tmpfs only
    assert len(_lines(attack, "blocked")) == 6
    assert hostile["host"]["digests_after"] == hostile["host"]["digests_before"]


@pytest.mark.sandbox
@pytest.mark.slow
def test_huge_print_is_cut_to_the_output_budget(hostile: dict) -> None:
    run = _get(hostile, "huge-print")
    assert [(i.cell_index, i.kind) for i in run.incidents] == [(2, "output-truncated")]
    attack = _code(run)[ATTACK - 1]
    kept = sum(len(json.dumps(o)) for o in attack.outputs[:-1])
    assert 0.9 * LIMITS.max_output_bytes < kept <= LIMITS.max_output_bytes
    assert "output truncated" in attack.outputs[-1].text


@pytest.mark.sandbox
@pytest.mark.slow
def test_network_is_unreachable(hostile: dict) -> None:
    run = _get(hostile, "network")
    text = _text(_code(run)[ATTACK - 1])
    assert f"blocked tcp 127.0.0.1:{PROBE_PORT}" in text and "blocked udp 192.0.2.1" in text
    assert "interfaces: ['lo']" in text
    assert hostile["host"]["accepted"] in (False, None), "the sandbox connected to a host port"


@pytest.mark.sandbox
@pytest.mark.slow
def test_results_cannot_be_forged_from_inside(hostile: dict) -> None:
    run = _get(hostile, "forge-results")
    attack = _code(run)[ATTACK - 1]
    assert _lines(attack, "WROTE") == []
    assert {"blocked /proc/1/fd/1 PermissionError", "blocked /proc/1/mem PermissionError"} <= set(
        _lines(attack, "blocked")
    )
    # Stray lines in its own pipes stay its own output: stdout and stderr always, the shell's report pipe too.
    own = {int(line.split()[-1]) for line in _lines(attack, "stray lines into own pipe")}
    assert {1, 2} <= own
    if hostile["engine"] == "shell":
        assert len(own) == 3, own
    assert ("reported the end of cell 3 in turn" in _text(attack)) == (hostile["engine"] == "shell")
    assert run.status == "ok" and not any("FORGED" in _text(cell) for cell in _code(run) if cell is not attack)
    assert _text(_code(run)[AFTER]) == "innocent after: 45\n" and _code(run)[AFTER].execution_count == 3


@pytest.mark.sandbox
@pytest.mark.slow
def test_huge_display_is_replaced_by_the_truncation_note(hostile: dict) -> None:
    run = _get(hostile, "huge-display")
    assert [(i.cell_index, i.kind) for i in run.incidents] == [(2, "output-truncated")]
    assert _code(run)[ATTACK - 1].outputs == [truncation_note(LIMITS.max_output_bytes)]


# ------------------------------------------------------------- the shell engine against the kernel

FIDELITY_CELLS = [
    'import sys\nprint("to stdout")\nprint("to stderr", file=sys.stderr)',
    "6 * 7",
    "6 * 7;",
    "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.plot([1, 2, 3])\nplt.show()",
    'from IPython.display import HTML, display\ndisplay(HTML("<b>bold</b>"))\nfig',
    "def divide(a, b):\n    return a / b\n\ndivide(1, 0)",
    'import sys\nsys.exit("leaving")',
    'input("your name? ")',
    "def broken(:\n    pass",
    "%time y = 6 * 7",
    "!echo from a shell",
    # ipykernel forwards what is written to fd 1 from a thread of its own: a cell that ends at once can leave it to the
    # next cell on a loaded machine, so this one waits a moment, as a cell that does more after its write would
    'import os, time\n_ = os.write(1, b"written to fd 1\\n")\ntime.sleep(0.5)',
    'from IPython.display import clear_output\nprint("cleared")\nclear_output(wait=True)\n'
    'handle = display("first", display_id=True)\nhandle.update("second")',
]
EXIT_WARNING = "UserWarning: To exit: use 'exit', 'quit', or Ctrl-D."
# What each cell shows, as _shapes() sees it (tracebacks and image bytes aside).
FIDELITY_SHAPES = [
    [("stream", "stdout", "to stdout\n"), ("stream", "stderr", "to stderr\n")],
    [("execute_result", ["text/plain"], "42")],
    [],
    [("display_data", ["image/png", "text/plain"], "<Figure size 640x480 with 1 Axes>")],
    [
        ("display_data", ["text/html", "text/plain"], "<IPython.core.display.HTML object>"),
        ("execute_result", ["image/png", "text/plain"], "<Figure size 640x480 with 1 Axes>"),
    ],
    [("error", "ZeroDivisionError", "division by zero")],
    [("error", "SystemExit", "leaving"), ("stream", "stderr", EXIT_WARNING)],
    [("error", "StdinNotImplementedError", "raw_input was called, but this frontend does not support input requests.")],
    [("error", "SyntaxError", "invalid syntax ({file}, line 1)")],
    [("stream", "stdout", "CPU times: user <t>, sys: <t>, total: <t>\nWall time: <t>\n")],
    [("stream", "stdout", "from a shell\r\n")],
    [("stream", "stdout", "written to fd 1\n")],
    [("display_data", ["text/plain"], "'second'")],
]


def _shapes(cell: nbformat.NotebookNode) -> list[tuple]:
    """Each output of CELL without what varies from run to run (timings, file paths, cell file names)."""
    shapes = []
    for out in cell.outputs:
        if out.output_type == "stream":
            text = re.sub(r"\d[\d.e+]* (ns|\u03bcs|ms|s)\b", "<t>", out.text)
            shapes.append(("stream", out.name, EXIT_WARNING if EXIT_WARNING in text else text))
        elif out.output_type == "error":
            evalue = re.sub(r"\(\d+\.py,", "({file},", out.evalue)  # the cell's file name: a hash of its source
            shapes.append(("error", out.ename, evalue))
        else:
            shapes.append((out.output_type, sorted(out.data), out.data.get("text/plain")))
    return shapes


@pytest.mark.sandbox
@pytest.mark.slow
def test_shell_outputs_match_the_kernel(bwrap: Path, tmp_path: Path) -> None:
    path = tmp_path / "fidelity.ipynb"
    cells = [v4.new_code_cell(src, id=f"fidelity-{i}") for i, src in enumerate(FIDELITY_CELLS)]
    nbformat.write(v4.new_notebook(cells=cells), str(path))
    limits = Limits(cell_timeout_s=30, submission_timeout_s=90, memory_bytes=1024 * MiB)

    def run(engine: str) -> SandboxRun:
        return execute_notebook_sandboxed(path, workdir=tmp_path / engine, limits=limits, engine=engine)

    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = dict(zip(ENGINES, pool.map(run, ENGINES)))
    for engine, result in runs.items():
        assert result.status == "ok", (engine, result.reason)
        assert set(result.timings) == {"startup", "kernel_start", "execute", "total"}, engine
        assert [_shapes(cell) for cell in _code(result)] == FIDELITY_SHAPES, engine
    shell, kernel = (_code(runs[engine]) for engine in ("shell", "kernel"))
    counts = list(range(1, len(FIDELITY_CELLS) + 1))
    assert [c.execution_count for c in shell] == [c.execution_count for c in kernel] == counts
    # Same traceback text too, where no frame lies in the engine's own code (the input() refusal does).
    for index in (5, 6, 8):
        assert shell[index].outputs[0].traceback == kernel[index].outputs[0].traceback, FIDELITY_CELLS[index]


@pytest.mark.sandbox
@pytest.mark.slow
def test_exit_ends_the_shell_after_its_cell_as_it_ends_a_kernel(bwrap: Path, tmp_path: Path) -> None:
    sources = ['print("before")', "exit()", 'print("after")', 'print("later")']
    path = tmp_path / "exit.ipynb"
    cells = [v4.new_code_cell(src, id=f"exit-{i}") for i, src in enumerate(sources)]
    nbformat.write(v4.new_notebook(cells=cells), str(path))
    run = execute_notebook_sandboxed(path, workdir=tmp_path / "w", limits=LIMITS)  # the default engine: the shell
    assert run.status == "crashed" and "cell exit-2" in run.reason and "exit status 0" in run.reason
    assert [(i.cell_index, i.kind) for i in run.incidents] == [(2, "stopped"), (3, "not-run")]
    assert [[o.get("ename") for o in c.outputs] for c in _code(run)] == [[None], [], ["DeadKernelError"], []]


# ------------------------------------------------------------- the runner as a whole


def _sandbox_pid_ns_processes(within: Path, wait_s: float = 2.0) -> list[str]:
    """Runner or kernel processes alive after up to WAIT_S (a killed sandbox takes time) in a sandbox made for work
    files under WITHIN."""
    deadline = time.monotonic() + wait_s
    while (found := _sandbox_processes_now(within)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return found


def _sandbox_processes_now(within: Path | None) -> list[str]:
    """Command lines of runner or kernel processes alive in some other pid namespace than ours right now, in a
    sandbox made for work files under WITHIN (None: anyone's). Only those: make test runs test files side by side,
    and another checkout's grader on the same machine runs sandboxes of its own."""
    own = os.readlink("/proc/self/ns/pid")
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and os.readlink(entry / "ns/pid") != own:
                cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                if ("ipykernel_launcher" in cmd or "course sandbox" in cmd) and (
                    within is None or _sandboxed_for(int(entry.name), within)
                ):
                    found.append(cmd[:120])
        except OSError:
            continue
    return found


def _sandboxed_for(pid: int, within: Path) -> bool:
    """Whether PID runs in a sandbox made for work files under WITHIN: the bubblewrap process it descends from binds
    them in by their host paths (a sandbox cannot outlive its bubblewrap: --die-with-parent, pid 1 of its namespace)."""
    marker = f" {within.resolve()}/"
    while pid > 1:
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            parent = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError):
            return False
        if Path(cmd.split(" ", 1)[0]).name == "bwrap":
            return marker in cmd
        pid = parent
    return False


FOREIGN_GRADER = """
import os, sys
from pathlib import Path
from course.sandbox.limits import Limits
from course.sandbox.notebook import execute_notebook_sandboxed
if os.fork():
    os._exit(0)  # the grader goes on in a process tree of its own, as another checkout's would
Path(sys.argv[2]).parent.joinpath("grader.pid").write_text(str(os.getpid()))
execute_notebook_sandboxed(Path(sys.argv[1]), workdir=Path(sys.argv[2]), engine="kernel",
                           limits=Limits(cell_timeout_s=120, submission_timeout_s=120, memory_bytes=512 * 2**20))
"""


@pytest.fixture
def foreign_grader(tmp_path_factory) -> Path:
    """Another grader on the machine, not of this test's process tree, with a sandbox running (a cell that waits, so
    that it takes no core from the test beside it); the folder its sandbox's work files are in. Stopped afterwards."""
    work = tmp_path_factory.mktemp("foreign") / "w"
    waiting = work.parent / "waiting.ipynb"
    nbformat.write(v4.new_notebook(cells=[v4.new_code_cell("import time\ntime.sleep(600)")]), waiting)
    subprocess.run(
        [sys.executable, "-c", FOREIGN_GRADER, str(waiting), str(work)],
        check=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while not _sandbox_processes_now(work.parent):
        assert time.monotonic() < deadline, "the foreign grader's sandbox did not start"
        time.sleep(0.2)
    yield work.parent
    os.kill(int((work.parent / "grader.pid").read_text()), signal.SIGKILL)  # its sandbox dies with it


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.sandbox
@pytest.mark.slow
def test_submission_wall_clock_kills_the_whole_sandbox(
    bwrap: Path, tmp_path: Path, engine: str, foreign_grader: Path
) -> None:
    """Another grader's sandbox runs all along (make test failed here while another checkout graded): only this
    test's own sandbox must be gone. The cell that never ends sleeps in its loop: the submission's wall clock is what
    ends it, and a loop burning a core for those 5 s would test nothing more (the hostile cases burn theirs)."""
    limits = Limits(cell_timeout_s=60, submission_timeout_s=5, memory_bytes=512 * MiB)
    nbformat.write(
        _maker.make("sleeping-loop", ["import time\nwhile True:\n    time.sleep(0.2)"]),
        tmp_path / "sleeping-loop.ipynb",
    )
    begin = time.monotonic()
    run = execute_notebook_sandboxed(
        tmp_path / "sleeping-loop.ipynb", workdir=tmp_path / "w", limits=limits, engine=engine
    )
    assert time.monotonic() - begin < limits.submission_timeout_s + 3
    assert run.status == "timeout" and "5 s" in run.reason
    assert "innocent before: 42" in _text(_code(run)[0])
    assert [(i.cell_index, i.kind) for i in run.incidents] == [(2, "stopped"), (3, "not-run")]
    assert _sandbox_pid_ns_processes(tmp_path) == []
    assert _sandbox_processes_now(foreign_grader)  # the other grader's sandbox, still running, is not counted


@pytest.mark.sandbox
@pytest.mark.slow
def test_no_sandbox_process_outlives_the_batch(hostile: dict, course_root: Path) -> None:
    assert _sandbox_pid_ns_processes(course_root / ".grading") == []


@pytest.mark.sandbox
@pytest.mark.slow
def test_unreadable_submissions_are_invalid_not_errors(bwrap: Path, tmp_path: Path, course_root: Path) -> None:
    junk = tmp_path / "junk.ipynb"
    junk.write_text("{not json")
    link = tmp_path / "link.ipynb"
    link.symlink_to(course_root / "gradebook.db")
    for path in (junk, link):
        run = execute_notebook_sandboxed(path, workdir=tmp_path / f"w-{path.stem}", limits=LIMITS)
        assert run.status == "invalid" and run.executed is None and path.name in run.reason
        assert SECRET not in run.reason


# ------------------------------------------------------------- run_python_sandboxed


@pytest.mark.sandbox
@pytest.mark.slow
def test_python_returns_output_and_keeps_prints_apart(bwrap: Path, tmp_path: Path) -> None:
    code = "print('working on it')\nOUTPUT = {'double': INPUT['x'] * 2}"
    result = run_python_sandboxed(code, workdir=tmp_path, limits=LIMITS, input_json={"x": 21})
    assert result == (0, {"double": 42}, "working on it")


@pytest.mark.sandbox
@pytest.mark.slow
def test_python_infinite_loop_stops_at_the_time_limit(bwrap: Path, tmp_path: Path) -> None:
    begin = time.monotonic()
    code = "def answer(n):\n    while True:\n        n += 1\nOUTPUT = answer(1)"
    result = run_python_sandboxed(code, workdir=tmp_path, limits=LIMITS, input_json=None)
    assert time.monotonic() - begin < LIMITS.cell_timeout_s + 2
    assert result.returncode is None and result.stdout_json is None and "stopped after 3 s" in result.stderr


@pytest.mark.sandbox
@pytest.mark.slow
def test_python_task_cap_stops_forking(bwrap: Path, tmp_path: Path) -> None:
    code = (
        "import os, time\nforks = 0\n"
        "try:\n    for _ in range(500):\n        if os.fork() == 0:\n"
        "            time.sleep(5)\n            os._exit(0)\n"
        "        forks += 1\nexcept OSError as e:\n    OUTPUT = [forks, type(e).__name__]\n"
    )
    limits = Limits(cell_timeout_s=10, max_processes=20)
    forks, error = run_python_sandboxed(code, workdir=tmp_path, limits=limits, input_json=None).stdout_json
    assert error == "BlockingIOError" and 5 < forks < limits.max_processes


@pytest.mark.sandbox
@pytest.mark.slow
def test_python_memory_file_and_disk_limits(bwrap: Path, tmp_path: Path) -> None:
    limits = Limits(memory_bytes=256 * MiB, max_file_bytes=1 * MiB, scratch_bytes=4 * MiB)
    code = (
        "import errno\nOUTPUT = {}\n"
        "try:\n    bytearray(300 * 2**20)\nexcept MemoryError:\n    OUTPUT['memory'] = 'MemoryError'\n"
        "try:\n    open('big', 'wb').write(b'x' * 2 * 2**20)\nexcept OSError as e:\n"
        "    OUTPUT['file'] = errno.errorcode[e.errno]\n"
        "try:\n    for i in range(8):\n        open(f'part{i}', 'wb').write(b'x' * (2**20 - 4096))\n"
        "except OSError as e:\n    OUTPUT['disk'] = errno.errorcode[e.errno]\n"
    )
    result = run_python_sandboxed(code, workdir=tmp_path, limits=limits, input_json=None)
    assert result.stdout_json == {"memory": "MemoryError", "file": "EFBIG", "disk": "ENOSPC"}


# ------------------------------------------------------------- without bubblewrap


def test_refuses_without_bwrap_unless_unsafe(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(bubblewrap.shutil, "which", lambda name: None)
    with pytest.raises(ToolMissing, match="apt-get install bubblewrap") as caught:
        execute_notebook_sandboxed(HOSTILE / "sys-exit.ipynb", workdir=tmp_path / "w", limits=LIMITS)
    assert "--unsafe" in str(caught.value)
    with pytest.raises(ToolMissing, match="apt-get install bubblewrap"):
        run_python_sandboxed("OUTPUT = 1", workdir=tmp_path / "p", limits=LIMITS, input_json=None)
    assert not (tmp_path / "w").exists()


def test_refuses_when_bwrap_cannot_build_a_sandbox(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(bubblewrap.shutil, "which", lambda name: "/bin/false")
    with pytest.raises(SandboxUnavailable, match="user namespaces"):
        execute_notebook_sandboxed(HOSTILE / "sys-exit.ipynb", workdir=tmp_path / "w", limits=LIMITS)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.slow
def test_unsafe_runs_without_bwrap(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, engine: str) -> None:
    monkeypatch.setattr(bubblewrap.shutil, "which", lambda name: None)
    run = execute_notebook_sandboxed(
        HOSTILE / "sys-exit.ipynb", workdir=tmp_path / "w", limits=LIMITS, unsafe=True, engine=engine
    )
    assert run.status == "ok" and _text(_code(run)[AFTER]).strip() == "innocent after: 45"
    assert (
        run_python_sandboxed(
            "OUTPUT = INPUT + 1", workdir=tmp_path / "p", limits=LIMITS, input_json=1, unsafe=True
        ).stdout_json
        == 2
    )


def test_unknown_engine_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CourseError, match="unknown grading engine 'ipython': expected one of shell, kernel"):
        execute_notebook_sandboxed(HOSTILE / "sys-exit.ipynb", workdir=tmp_path / "w", limits=LIMITS, engine="ipython")
    assert not (tmp_path / "w").exists()


def test_limits_must_be_positive() -> None:
    with pytest.raises(CourseError, match="memory_bytes must be a positive integer"):
        Limits(memory_bytes=0)


def test_output_budget_cuts_once_and_keeps_the_runner_notes() -> None:
    budget = OutputBudget(1000)
    timeout = {"output_type": "error", "ename": TIMEOUT_ENAME, "evalue": "ran longer than 3 s", "traceback": []}
    shown = [
        {"output_type": "stream", "name": "stdout", "text": "x" * 5000},
        {"output_type": "display_data", "data": {"text/plain": "later"}, "metadata": {}},
        timeout,
    ]
    kept = [o for out in shown for o in budget.admit(out)]
    assert kept[0]["text"] == "x" * len(kept[0]["text"]) and 900 < output_size(kept[0]) <= 1000
    assert kept[1:] == [truncation_note(1000), timeout]
    again = OutputBudget(1000)  # the grading process re-applies the budget to what the runner kept
    assert [o for out in kept for o in again.admit(out)] == kept


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.sandbox
@pytest.mark.slow
def test_files_written_come_back_and_tagged_cells_are_skipped(bwrap: Path, tmp_path: Path, engine: str) -> None:
    """What Execute's kernel leaves in the autograded folder comes back; inputs stay read-only; skip-execution holds."""
    nb = v4.new_notebook(
        cells=[
            v4.new_code_cell("print(open('given.txt').read())"),
            v4.new_code_cell(
                "import os\nos.makedirs('out', exist_ok=True)\nopen('out/r.txt', 'w').write('result')\n"
                "open('/tmp/scratch', 'w').write('dropped')\nopen('big', 'wb').write(b'x' * 3_000_000)"
            ),
            v4.new_code_cell("raise SystemExit('skipped')", metadata={"tags": ["skip-execution"]}),
            v4.new_code_cell("try:\n    open('given.txt', 'w')\nexcept OSError as e:\n    print('read-only')"),
        ]
    )
    path = tmp_path / "nb.ipynb"
    nbformat.write(nb, path)
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "given.txt").write_text("given")
    limits = dataclasses.replace(LIMITS, scratch_bytes=2 * MiB)  # 'big' fills the tmpfs: it never comes back
    run = execute_notebook_sandboxed(path, workdir=tmp_path / "w", limits=limits, engine=engine)
    cells = _code(run)
    assert run.status == "ok" and _text(cells[0]).strip() == "given" and _text(cells[3]).strip() == "read-only"
    assert cells[2].outputs == [] and cells[2].execution_count is None
    assert run.files["out/r.txt"] == b"result" and "given.txt" not in run.files and "nb.ipynb" not in run.files
    assert sum(map(len, run.files.values())) <= limits.scratch_bytes
