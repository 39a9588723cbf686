"""The course's nbgrader settings, applied by autograder/nbgrader_config.py to nbgrader's config object.

Everything lives under the course root (autograder/): gradebook (nbgrader's default db_url), exchange,
exported grades — defaults that a system, hub or user nbgrader config and the command line override, whichever
section they set an option in (set_defaults). `nbgrader export` writes late penalties on the lesson's whole total
(course.nbgrader_hooks.export), as the feedback shows them. Stock nbgrader
steps are kept and these course steps are added: per-region stubs when releasing, a release that refuses a cell
change before deleting anything and is kept by version (release_run); for autograding, one run
per course at a time under the batch lock, damaged submissions scored 0 with the reason instead of failing
(both: the exporter course.nbgrader_hooks.autograde_run), restoring lost graded cells, running the students'
code in the grading sandbox instead of nbgrader's Execute and re-checking the code items out of process after
SaveAutoGrades, which also flags repaired submissions and writes each outcome to the grade report (with the
assignment version it was graded against), keeping finished manual grades of unchanged answers finished — so stock
`nbgrader autograde` (and formgrader's autograde) leaves exactly the gradebook, flags and report
`course grade` does; hiding hidden tests in feedback and marking unscored answers 待评分 there, and releasing it
student by student (feedback_release); beside answers in
formgrader, the rubric's 要点, the veto hints and the code diagnoses, with math and diagrams drawn offline.
The sandbox's limits and its unsafe switch are settings of GradingSandbox, e.g.
`c.GradingSandbox.memory_bytes = 4 * 2**30` or `c.GradingSandbox.unsafe = True` in nbgrader_config.py.
"""

from __future__ import annotations

from pathlib import Path

COURSE_ID = "llm-scale-course"


def configure(c, root: Path) -> None:
    """Point nbgrader at ROOT and register the course's preprocessors, as defaults only.

    nbgrader loads the course root's nbgrader_config.py last, and `get_config()` there is a fresh config that
    cannot see what the system, hub (JUPYTER_CONFIG_PATH) or user config files set, nor the command line; so each
    course value is applied only where none of those sets that option (set_defaults), and theirs win.
    """
    from traitlets.config import Config

    from course.grading.gradebook import inherited_config_files

    course = Config()
    course_settings(course, root)
    inherited = Config()
    for _, loaded in inherited_config_files(skip=Path(root).resolve() / "nbgrader_config.py"):
        inherited.merge(loaded)
    inherited.merge(command_line())
    set_defaults(c, course, inherited)


def configure_demo(c, root: Path) -> None:
    """The demo course: the course's settings as defaults, but its own identity whatever any other config sets.

    A hub's db_url, course root, course id and exchange name the real class; the demo course sets its own so
    that nothing it does (release, grade, scores, vetoes, exports) can reach the real class's gradebook or files.
    Only what the command line names wins over them (e.g. `nbgrader export --to FILE`).
    """
    from traitlets.config import Config

    root = Path(root).resolve()
    configure(c, root)
    demo = Config()
    demo.CourseDirectory.root = str(root)
    demo.CourseDirectory.course_id = f"{COURSE_ID}-demo"
    demo.CourseDirectory.db_url = f"sqlite:///{root / 'gradebook.db'}"
    demo.Exchange.root = str(root / "exchange")
    demo.CsvExportPlugin.to = str(root / "reports" / "grades.csv")
    set_defaults(c, demo, command_line())


def command_line():
    """The config the command line of the Jupyter app now loading this file sets (nbgrader's `--to`, `--course`,
    `--Section.option=…`), which traitlets merges after every config file; empty outside such an app."""
    from traitlets.config import Application, Config

    return getattr(Application.instance(), "cli_config", Config()) if Application.initialized() else Config()


def set_defaults(c, course, inherited) -> None:
    """Copy each COURSE value into C unless INHERITED sets that option for the same class: in the same section, or
    in a section traitlets merges before it — a base class's (`--to` sets ExportPlugin.to, read before a
    CsvExportPlugin.to), or for a nested section the class's own top-level one. Those would lose to a course value
    in the more specific section, so the course sets none there; a more specific section than the course's wins
    over it anyway."""
    bases = section_bases()
    _set_defaults(c, course, inherited, [], bases)


def _set_defaults(c, course, inherited, enclosing: list, bases: dict[str, set[str]]) -> None:
    """set_defaults for one section of COURSE, ENCLOSING being the inherited sections that configure its class."""
    from traitlets.config import Config

    for key, value in course.items():
        if isinstance(value, Config):
            places = [
                source[name]
                for source in (inherited, *enclosing)
                for name in bases.get(key, {key})
                if source._has_section(name)
            ]
            _set_defaults(c[key], value, inherited, places, bases)
        elif not any(key in place for place in enclosing):
            c[key] = value


def section_bases() -> dict[str, set[str]]:
    """Class name → the config sections traitlets reads for that class (its own and its Configurable bases'),
    for every configurable class imported so far."""
    from traitlets.config import Configurable

    found: dict[str, set[str]] = {}
    todo, seen = [Configurable], set()
    while todo:
        cls = todo.pop()
        if cls not in seen:
            seen.add(cls)
            found.setdefault(cls.__name__, set()).update(cls.section_names())
            todo.extend(cls.__subclasses__())
    return found


def course_settings(c, root: Path) -> None:
    """The course's own nbgrader settings: its course root and id, exchange, exports and preprocessors."""
    from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
    from nbgrader.converters import Autograde, GenerateAssignment
    from nbgrader.preprocessors import ClearSolutions, Execute, GetGrades, SaveAutoGrades

    from course.config import load_config, project_of
    from course.errors import NoProject
    from course.nbgrader_hooks.autograde_run import CourseAutogradeExporter
    from course.nbgrader_hooks.export import CourseExportPlugin
    from course.nbgrader_hooks.feedback import HideHiddenTests, LessonLatePenalty, PendingGrades
    from course.nbgrader_hooks.feedback_marks import ExtraCreditAndVetoes
    from course.nbgrader_hooks.feedback_release import CourseReleaseFeedback
    from course.nbgrader_hooks.formgrader import use_course_templates
    from course.nbgrader_hooks.late_penalty import CourseLatePenalty
    from course.nbgrader_hooks.manual_grades import SaveAutoGradesKeepingGraded
    from course.nbgrader_hooks.release_run import CourseReleaseExporter
    from course.nbgrader_hooks.restore import RestoreGradedCells
    from course.nbgrader_hooks.sandbox_execute import SandboxExecute
    from course.nbgrader_hooks.sandbox_recheck import RecheckOutOfProcess
    from course.nbgrader_hooks.stubs import ClearSolutionsWithStubs

    root = Path(root).resolve()
    c.CourseDirectory.root = str(root)
    c.CourseDirectory.course_id = COURSE_ID
    c.Exchange.root = str(root / "exchange")
    c.CsvExportPlugin.to = str(root / "reports" / "grades.csv")
    c.ExportApp.plugin_class = CourseExportPlugin  # late penalties on the lesson's whole total
    c.ClearSolutions.text_stub = ""  # written answers start empty under their question
    stock = GenerateAssignment.class_traits()["preprocessors"].default()
    c.GenerateAssignment.preprocessors = [ClearSolutionsWithStubs if p is ClearSolutions else p for p in stock]
    c.GenerateAssignment.exporter_class = CourseReleaseExporter  # refuse before deleting; keep each version
    c.Autograde.exporter_class = CourseAutogradeExporter
    c.AssignLatePenalties.plugin_class = CourseLatePenalty  # the declared late policy (c.CourseLatePenalty.*)
    sanitize = Autograde.class_traits()["sanitize_preprocessors"].default()
    c.Autograde.sanitize_preprocessors = [RestoreGradedCells, *sanitize]
    steps = Autograde.class_traits()["autograde_preprocessors"].default()
    replaced = {Execute: SandboxExecute, SaveAutoGrades: SaveAutoGradesKeepingGraded}
    steps = [replaced.get(p, p) for p in steps]
    steps.insert(steps.index(SaveAutoGradesKeepingGraded) + 1, RecheckOutOfProcess)
    c.Autograde.autograde_preprocessors = steps
    c.GenerateFeedback.preprocessors = [
        GetGrades,
        HideHiddenTests,
        PendingGrades,
        ExtraCreditAndVetoes,
        LessonLatePenalty,
        CSSHTMLHeaderPreprocessor,
    ]
    c.ExchangeFactory.release_feedback = CourseReleaseFeedback  # per student, everyone accounted for
    # formgrader shows below each answer the rubric's 要点 and the veto hints, below each code item's test the
    # re-check's diagnoses and `course similarity`'s evidence (graders only), with the course's offline MathJax and
    # mermaid; feedback says 待评分
    c.HTMLExporter.preprocessors = [
        *(f"course.nbgrader_hooks.formgrader.{step}" for step in ("GraderHints", "RubricKeyPoints", "OfflineScripts")),
        "course.nbgrader_hooks.similarity_evidence.SimilarityEvidence",
    ]
    c.SimilarityEvidence.reports_dir = str(root / "reports")  # written by `course similarity`
    c.RubricKeyPoints.rubrics_dir = c.GraderHints.rubrics_dir = str(root / "rubrics")
    c.GraderHints.reports_dir = str(root / "reports")
    try:
        project = project_of(root)
    except NoProject:  # a course root standing alone: no lessons (no hints' vocabulary), no web assets
        project = None
    if project is not None:
        c.GraderHints.lessons_dir = str(project / load_config(project).lessons_dir)  # the hints' vocabulary
        c.OfflineScripts.project_root = str(project)
    use_course_templates(c)
