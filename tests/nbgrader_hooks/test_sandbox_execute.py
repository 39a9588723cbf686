"""The pieces of the one grading path that need no sandbox: settings, engine choice, reasons."""

from __future__ import annotations

import nbformat
import pytest
from traitlets.config import Config

from course.errors import CourseError
from course.nbgrader_hooks.sandbox_execute import GradingSandbox, refusal, sandbox_settings
from course.sandbox.fidelity import choose_engine
from course.sandbox.limits import Limits
from course.workflows.grade_worker import nbgrader_reason

# What nbgrader's API returned for a student whose gradebook lacked the notebook (trimmed real log).
FAILED_LOG = """[INFO] Creating/updating student with ID 'reference': {}
[WARNING] Skipping unknown notebook: /c/submitted/reference/lesson05/lesson05.ipynb
[ERROR] No notebooks found, did you forget to run 'nbgrader generate_assignment'?
[ERROR] There was an error processing assignment: /c/submitted/reference/lesson05
[ERROR] Traceback (most recent call last):
    nbgrader.converters.base.NbGraderException: No notebooks found, did you forget to run 'nbgrader generate_assignment'?
[ERROR] Please see the the above traceback for details on the specific errors on the above failures.
"""  # noqa: E501


def test_limits_and_switches_are_nbgrader_settings():
    config = Config()
    config.GradingSandbox.memory_bytes = 3 * 2**30
    config.GradingSandbox.cell_timeout_s = 7
    config.GradingSandbox.unsafe = True
    settings = GradingSandbox(config=config)
    assert settings.limits() == Limits(memory_bytes=3 * 2**30, cell_timeout_s=7)
    assert settings.unsafe and settings.engine == "auto"
    assert GradingSandbox().limits() == Limits()  # defaults declared once, in Limits
    assert "RLIMIT_AS" in GradingSandbox.class_traits()["memory_bytes"].help


def test_a_limit_must_be_positive():
    config = Config()
    config.GradingSandbox.cell_timeout_s = 0
    with pytest.raises(Exception, match="cell_timeout_s"):
        GradingSandbox(config=config)


def test_the_settings_are_checked_at_once_naming_each_that_is_not_valid():
    config = Config()
    config.GradingSandbox.cell_timeout_s = 7
    assert sandbox_settings(config).limits().cell_timeout_s == 7
    config.GradingSandbox.engine = "kernal"
    config.GradingSandbox.memory_bytes = -1
    with pytest.raises(CourseError) as wrong:
        sandbox_settings(config)
    message = str(wrong.value)
    assert "c.GradingSandbox.engine = 'kernal'" in message and "['auto', 'shell', 'kernel']" in message
    assert "c.GradingSandbox.memory_bytes = -1" in message and "cell_timeout_s" not in message
    assert "nobody was graded" in message


def test_the_engine_is_the_shell_only_where_it_is_known_to_be_exact():
    plain = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("%time x = 1\n!echo hi")])
    widgets = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("from tqdm.auto import tqdm")])
    loop = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import asyncio\nasyncio.run(main())")])
    assert choose_engine(plain, "auto") == ("shell", "")
    assert choose_engine(widgets, "auto")[0] == "kernel" and "tqdm.auto" in choose_engine(widgets, "auto")[1]
    assert choose_engine(loop, "auto")[0] == "kernel" and "asyncio" in choose_engine(loop, "auto")[1]
    assert choose_engine(widgets, "shell") == ("shell", "")  # an explicit setting is obeyed


def test_a_failed_autograde_is_explained_by_nbgraders_own_reason():
    reason = nbgrader_reason({"success": False, "log": FAILED_LOG, "error": "NbGraderException: Please see the"})
    assert reason == "No notebooks found, did you forget to run 'nbgrader generate_assignment'?"


def test_the_refusal_names_the_setting_that_overrides_it():
    text = refusal("bubblewrap (bwrap) is not installed.")
    assert "c.GradingSandbox.unsafe = True" in text and "--unsafe" in text and "bwrap" in text


def test_execute_timeout_is_the_limit_per_cell_unless_the_sandbox_setting_is_given():
    from course.nbgrader_hooks.sandbox_execute import SandboxExecute

    config = Config()
    config.Execute.timeout = 2
    assert SandboxExecute(config=config).limits(GradingSandbox(config=config)).cell_timeout_s == 2
    config.Execute.timeout = None  # nbgrader: no limit per cell; the sandbox keeps the one per submission
    config.GradingSandbox.submission_timeout_s = 50
    assert SandboxExecute(config=config).limits(GradingSandbox(config=config)).cell_timeout_s == 50
    config.GradingSandbox.cell_timeout_s = 7
    assert SandboxExecute(config=config).limits(GradingSandbox(config=config)).cell_timeout_s == 7
    assert SandboxExecute().limits(GradingSandbox()) == Limits()


def test_a_kernel_jupyter_lacks_or_not_python_fails_the_submission(tmp_path, monkeypatch):
    from jupyter_client.kernelspec import NoSuchKernel

    from course.errors import CourseError
    from course.nbgrader_hooks.sandbox_execute import SandboxExecute

    spec = tmp_path / "kernels" / "ir"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text('{"argv": ["R"], "display_name": "R", "language": "R"}')
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path))
    nb = nbformat.v4.new_notebook()
    execute = SandboxExecute()
    for name in ("python", "python3", None):
        nb.metadata["kernelspec"] = {"name": name} if name else {}
        execute.check_kernel(nb)
    nb.metadata["kernelspec"] = {"name": "blarg"}
    with pytest.raises(NoSuchKernel):
        execute.check_kernel(nb)
    nb.metadata["kernelspec"] = {"name": "ir"}
    with pytest.raises(CourseError, match="Python notebooks only"):
        execute.check_kernel(nb)


def test_written_files_come_back_whole_within_the_scratch_limit_and_never_out_of_the_folder(tmp_path):
    import base64

    from course.nbgrader_hooks.sandbox_execute import keep_written
    from course.sandbox.results import _written_files

    def frame(path, offset, data):
        return {"event": "file", "path": path, "offset": offset, "data": base64.b64encode(data).decode()}

    frames = [
        frame("a.txt", 0, b"abc"),
        frame("a.txt", 3, b"def"),
        frame("sub/b.bin", 0, b"x" * 5),
        frame("../escape", 0, b"no"),
        frame("/abs", 0, b"no"),
        frame("big", 0, b"y" * 10),
        frame("gap.txt", 4, b"late"),
    ]
    assert _written_files(frames, max_bytes=12) == {"a.txt": b"abcdef", "sub/b.bin": b"xxxxx"}
    folder = tmp_path / "autograded"
    folder.mkdir()
    (folder / "out").symlink_to(tmp_path)
    (folder / "taken").mkdir()
    refused = keep_written(
        folder,
        {"a.txt": b"abcdef", "sub/b.bin": b"xxxxx", "out/stolen": b"no", "p1.ipynb": b"{}", "taken": b"no"},
        "p1.ipynb",
    )
    assert refused == ["out/stolen", "taken"]
    assert (folder / "a.txt").read_bytes() == b"abcdef" and (folder / "sub" / "b.bin").read_bytes() == b"xxxxx"
    assert not (tmp_path / "stolen").exists() and not (folder / "p1.ipynb").exists()
