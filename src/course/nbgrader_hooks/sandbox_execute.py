"""nbgrader's Execute step, moved into the grading sandbox: the course's nbgrader config puts it in autograde.

nbgrader's own Execute runs the student's notebook in a kernel with the instructor's permissions. SandboxExecute
is that step (a subclass of nbgrader's Execute, so `c.Execute.…` settings and `--no-execute` reach it) with the
kernel replaced by a sandboxed run: it takes the notebook nbgrader has just sanitized, runs it in a fresh
sandbox and puts the outputs of the run on it. As with Execute, the notebook runs in
the autograded folder's view: its other files are there (read-only), the files it writes land in
autograded/<student>/<assignment>/ (within GradingSandbox.scratch_bytes), a kernel Jupyter does not have fails
the submission, and `Execute.timeout` is the limit per cell unless `GradingSandbox.cell_timeout_s` is set. The
rest of nbgrader's autograde steps (SaveAutoGrades, …) then score those outputs.
"""

from __future__ import annotations

import fnmatch
import shutil
import tempfile
from dataclasses import fields, replace
from pathlib import Path

import nbformat
from nbgrader.preprocessors import Execute
from traitlets import Bool, Enum, Float, Integer, TraitError
from traitlets.config import Config, Configurable

from course.errors import CourseError, ToolMissing
from course.fileio import write_atomic
from course.grading.recheck import CALL_SECONDS
from course.sandbox.limits import Limits
from course.sandbox.notebook import ENGINES, execute_notebook_sandboxed
from course.sandbox.results import SandboxRun

# Cells the sandbox did not let finish get an error output, so nbgrader scores a test cell there 0, never "passed".
UNFINISHED = {"stopped": "SandboxStopped", "not-run": "CellNotRun"}
UNSAFE_SETTING = "c.GradingSandbox.unsafe = True"

_LimitSettings = type(
    "_LimitSettings",
    (Configurable,),
    {f.name: Integer(f.default, min=1, help=f.metadata["help"]).tag(config=True) for f in fields(Limits)},
)


class GradingSandbox(_LimitSettings):
    """Where and how students' code runs when autograding: the limits (one setting per Limits field) and more."""

    unsafe = Bool(
        False,
        help="run students' code without the bubblewrap sandbox (only where none can be had, "
        "and only for code you trust)",
    ).tag(config=True)
    engine = Enum(
        ["auto", *ENGINES],
        "auto",
        help="shell: IPython without a kernel (fast); kernel: a Jupyter "
        "kernel as stock nbgrader; auto: the shell where it is known to run a notebook exactly as the "
        "kernel does, else the kernel",
    ).tag(config=True)
    recheck_call_timeout_s = Float(
        CALL_SECONDS,
        min=0.1,
        help="seconds each call of a student's function may "
        "take in the out-of-process re-check; a call that takes longer fails its checks "
        "(raise it for a lesson whose functions compute for a while)",
    ).tag(config=True)

    def limits(self) -> Limits:
        """The settings as the sandbox's Limits."""
        return Limits(**{f.name: getattr(self, f.name) for f in fields(Limits)})


def sandbox_settings(config: Config) -> GradingSandbox:
    """CONFIG's GradingSandbox settings, checked before anyone is graded: a CourseError naming each setting that is not
    valid (traitlets would fail every student separately, and nbgrader remove each one's autograded notebook)."""
    try:
        return GradingSandbox(config=config)
    except TraitError as exc:
        refused = exc
    wrong = []
    for name, value in config.get("GradingSandbox", {}).items():
        try:
            GradingSandbox(config=Config({"GradingSandbox": {name: value}}))
        except TraitError as exc:
            wrong.append(f"c.GradingSandbox.{name} = {value!r}: {str(exc).rstrip('.')}")
    raise CourseError(
        "the nbgrader config's grading sandbox settings are not valid, so nobody was graded: "
        + ("; ".join(wrong) or str(refused).rstrip("."))
        + " (fix it where it is set: the course's nbgrader_config.py, or a hub or user nbgrader config)"
    )


def refusal(detail: str) -> str:
    """What both `nbgrader autograde` and `course grade` say when no sandbox can be had."""
    return (
        f"no grading sandbox on this machine: {detail.rstrip('.')}. Refusing to run students' code "
        f"unsandboxed; to grade without isolation anyway (only code you trust) set `{UNSAFE_SETTING}` in "
        "autograder/nbgrader_config.py, or pass --unsafe to `course grade`"
    )


def require_sandbox(settings: GradingSandbox) -> None:
    """Raise ToolMissing with the refusal unless bubblewrap works here or the unsafe setting is on."""
    if settings.unsafe:
        return
    import sys

    from course.tools.bubblewrap import find_bwrap, probe_bwrap

    try:
        probe_bwrap(find_bwrap(), sys.executable)
    except ToolMissing as exc:
        raise ToolMissing(refusal(exc.message)) from None


def folder_files(folder: Path, ignore: list[str] = ()) -> dict[str, Path]:
    """The files a notebook in FOLDER sees beside it (relative path → path): regular files, notebooks and
    names matching IGNORE (nbgrader's CourseDirectory.ignore) left out."""
    found = {}
    for path in sorted(Path(folder).rglob("*")):
        rel = path.relative_to(folder)
        if (
            path.is_symlink()
            or not path.is_file()
            or path.suffix == ".ipynb"
            or any(fnmatch.fnmatch(part, pattern) for part in rel.parts for pattern in ignore)
        ):
            continue
        found[rel.as_posix()] = path
    return found


def run_in_sandbox(
    nb,
    settings: GradingSandbox,
    limits: Limits | None = None,
    *,
    skip_tag: str = "skip-execution",
    files: dict[str, Path] | None = None,
) -> SandboxRun:
    """Execute a notebook object in a fresh sandbox with SETTINGS (LIMITS: its limits) beside copies of FILES."""
    from course.sandbox.fidelity import choose_engine

    engine, why = choose_engine(nb, settings.engine)
    with tempfile.TemporaryDirectory(prefix="course-grade-") as tmp:
        path = Path(tmp) / "submission.ipynb"
        nbformat.write(nb, path)
        for rel, source in (files or {}).items():
            (Path(tmp) / "work" / rel).parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            shutil.copyfile(source, Path(tmp) / "work" / rel)
        run = execute_notebook_sandboxed(
            path,
            workdir=Path(tmp) / "work",
            limits=limits or settings.limits(),
            unsafe=settings.unsafe,
            engine=engine,
            skip_tag=skip_tag,
        )
    return replace(run, engine=engine, engine_reason=why)


def configured(config, cls: type, name: str) -> bool:
    """Whether CONFIG sets trait NAME for CLS or one of its base classes (as traitlets would apply it)."""
    return any(name in config.get(base.__name__, {}) for base in cls.mro())


class SandboxExecute(Execute):
    """nbgrader's Execute with the kernel replaced by the grading sandbox; fills the sanitized notebook's outputs.

    Of Execute's settings, `timeout` (the limit per cell, unless GradingSandbox.cell_timeout_s is set; None or
    a negative value: only the limit per submission), `kernel_name` (else the notebook's kernelspec, which must
    exist and be Python), `skip_cells_with_tag` and `enabled` (`--no-execute`) apply; the others are about a
    kernel the sandbox does not start (docs/grading.md, "What the sandbox does differently from nbgrader's Execute").
    """

    def limits(self, settings: GradingSandbox) -> Limits:
        """The sandbox's limits, with nbgrader's Execute.timeout as the limit per cell where it decides it."""
        if configured(self.config, GradingSandbox, "cell_timeout_s"):
            return settings.limits()
        per_cell = self.timeout if self.timeout is not None and self.timeout > 0 else settings.submission_timeout_s
        return replace(settings.limits(), cell_timeout_s=per_cell)

    def check_kernel(self, nb) -> None:
        """Fail as nbgrader's Execute does for a kernel Jupyter does not have; refuse one that is not Python."""
        from jupyter_client.kernelspec import NATIVE_KERNEL_NAME, KernelSpecManager

        name = self.kernel_name or nb.metadata.get("kernelspec", {}).get("name") or NATIVE_KERNEL_NAME
        spec = KernelSpecManager(config=self.config).get_kernel_spec(NATIVE_KERNEL_NAME if name == "python" else name)
        if (spec.language or "").lower() != "python":
            raise CourseError(
                f"the notebook's kernel {name!r} runs {spec.language or 'an unknown language'}; "
                "the grading sandbox runs Python notebooks only"
            )

    def sandboxed_run(self, nb, files: dict[str, Path], settings: GradingSandbox | None = None) -> SandboxRun:
        """Check the kernel, then run NB in a fresh sandbox beside FILES with these settings."""
        settings = settings or GradingSandbox(config=self.config)
        self.check_kernel(nb)
        return run_in_sandbox(nb, settings, self.limits(settings), skip_tag=self.skip_cells_with_tag, files=files)

    def preprocess(self, nb, resources):
        """Attach outputs cell by cell and keep the files written; a sandbox failure (not the student's) stops
        this submission."""
        settings = GradingSandbox(config=self.config)
        info = resources.get("nbgrader", {})
        student = info.get("student", "?")
        folder = Path(resources.get("metadata", {}).get("path") or ".")
        files = folder_files(folder)
        require_sandbox(settings)
        run = self.sandboxed_run(nb, files, settings)
        resources.setdefault("nbgrader", {})["sandbox"] = run
        for rel in keep_written(folder, run.files, f"{info.get('notebook', '')}.ipynb"):
            self.log.warning(
                "%s: the file %s the notebook wrote was not kept: it would replace a folder or lead out of %s",
                student,
                rel,
                folder,
            )
        if run.status == "error" or run.executed is None:
            raise CourseError(f"the grading sandbox failed before the student's code ran: {run.reason}")
        if len(run.executed.cells) != len(nb.cells):
            raise CourseError(f"sandboxed run returned {len(run.executed.cells)} cells, expected {len(nb.cells)}")
        for cell, done in zip(nb.cells, run.executed.cells):
            if cell.cell_type == "code":
                cell.outputs = done.get("outputs", [])
                cell.execution_count = done.get("execution_count")
        for incident in run.incidents:
            if incident.kind in UNFINISHED:  # a cell the sandbox stopped or never reached fails, as it should
                nb.cells[incident.cell_index].outputs.append(
                    nbformat.v4.new_output(
                        "error", ename=UNFINISHED[incident.kind], evalue=incident.message, traceback=[incident.message]
                    )
                )
        return nb, resources


def keep_written(folder: Path, files: dict[str, bytes], notebook: str) -> list[str]:
    """Put the files a run wrote into FOLDER, as a kernel running there would have (never over NOTEBOOK, which
    nbgrader writes itself, nor through a link out of FOLDER); return the ones that could not be put there."""
    root = folder.resolve()
    refused = []
    for rel, data in files.items():
        target = root / rel
        if rel == notebook:
            continue
        try:
            if not target.parent.resolve().is_relative_to(root) or target.is_symlink() or target.is_dir():
                raise IsADirectoryError(rel)
            write_atomic(target, data)
        except OSError:
            refused.append(rel)
    return refused
