"""Figures are redrawn exactly when an input changed or the image is missing, from the project's own files."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from course.errors import CourseError
from course.figures.declare import FigureSpec
from course.figures.diagrams import diagram_store
from course.workflows.draw_figures import ensure_diagrams, ensure_figures, inputs_digest, lesson_figures

REPO = Path(__file__).resolve().parents[2]
PNG = "assets/figs/train_zero_memory.png"
SVG = "assets/zero3_comm_flow.svg"
LAB = "assets/lab/zero_measured.json"
LESSON5 = "lessons/lesson05/figures.py"  # the redraw tests below use lesson 5's figures; other lessons' are left out


def lesson5_figures(root: Path) -> tuple[FigureSpec, ...]:
    """The figures lesson 5 declares in ROOT (every spec's last input is the figures.py that declares it)."""
    return tuple(f for f in lesson_figures(root) if f.inputs[-1] == LESSON5)


def drawn_figures(root: Path) -> tuple[FigureSpec, ...]:
    """Lesson 5's declared figures, without the lab's measurements (minutes of training, tested in tests/lab)."""
    return tuple(f for f in lesson5_figures(root) if f.output != LAB)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project root holding the lessons and copies of every input of lesson 5's figures."""
    shutil.copytree(REPO / "lessons", tmp_path / "lessons", ignore=shutil.ignore_patterns("__pycache__"))
    for spec in drawn_figures(REPO):
        for relative in spec.inputs:
            (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(REPO / relative, tmp_path / relative)
    return tmp_path


def _counted(specs: tuple[FigureSpec, ...], calls: list[str]) -> tuple[FigureSpec, ...]:
    """The same specs, recording each output they draw."""

    def wrap(spec: FigureSpec) -> FigureSpec:
        def draw(out_path: Path, root: Path) -> Path:
            calls.append(spec.output)
            return spec.draw(out_path, root)

        return dataclasses.replace(spec, draw=draw)

    return tuple(wrap(spec) for spec in specs)


def _ensure(project: Path) -> list[str]:
    """Run ensure_figures on the project's own declarations; return which outputs were drawn."""
    calls: list[str] = []
    drawn = ensure_figures(project, specs=_counted(drawn_figures(project), calls))
    assert sorted(str(p.relative_to(project)) for p in drawn) == sorted(calls)
    return calls


def test_lesson5_declares_its_figures_and_the_lab_with_their_inputs_relative_to_the_project():
    outputs = {spec.output: spec.inputs for spec in lesson5_figures(REPO)}
    assert set(outputs) == {PNG, SVG, LAB}
    assert outputs[PNG] == (
        "solutions/lesson05.py",
        "lessons/lesson05/zero_memory.py",
        "src/course/figures/render.py",
        "lessons/lesson05/figures.py",
    )
    assert outputs[SVG] == ("lessons/lesson05/zero3_comm_flow.py", "lessons/lesson05/figures.py")
    assert "src/course/lab/run_lab.py" in outputs[LAB] and outputs[LAB][-1] == "lessons/lesson05/figures.py"
    assert all((REPO / i).is_file() for inputs in outputs.values() for i in inputs)


def test_a_copy_of_the_project_names_lesson5s_inputs_as_the_project_does(project):
    """A copy built by this checkout's course (the added-lesson and site tests build such copies) reads the lab and
    the chart code from this checkout's package: named by their place in the package, they hash as the project's
    own do, so the copied cache holds and nothing is measured or drawn again."""
    ours = {spec.output: inputs_digest(REPO, spec) for spec in lesson5_figures(REPO)}
    assert any(
        not Path(i).is_relative_to(project)
        for spec in lesson5_figures(project)
        for i in spec.inputs
        if Path(i).is_absolute()
    )  # the copy's lab sources are this checkout's files
    assert {spec.output: inputs_digest(project, spec) for spec in lesson5_figures(project)} == ours


def lesson_with_figures(root: Path, text: str) -> Path:
    """A project with lesson07.qmd and lessons/lesson07/figures.py holding TEXT."""
    (root / "lessons" / "lesson07").mkdir(parents=True)
    (root / "lessons" / "lesson07.qmd").write_text("---\ntitle: t\nlesson: 7\n---\n", "utf-8")
    (root / "lessons" / "lesson07" / "figures.py").write_text(text, "utf-8")
    return root


def test_any_lessons_figures_are_discovered_and_drawn_from_its_figures_file(tmp_path):
    lesson_with_figures(
        tmp_path,
        (
            "from pathlib import Path\nfrom course.figures.declare import FigureSpec\n"
            "def draw(out, root):\n    out.parent.mkdir(parents=True, exist_ok=True)\n    out.write_text('seven')\n"
            "    return out\nFIGURES = (FigureSpec('assets/figs/seven.txt', draw, ()),)\n"
        ),
    )
    assert [f.output for f in lesson_figures(tmp_path)] == ["assets/figs/seven.txt"]
    assert ensure_figures(tmp_path) == [tmp_path / "assets" / "figs" / "seven.txt"]
    assert ensure_figures(tmp_path) == []
    figures = tmp_path / "lessons" / "lesson07" / "figures.py"
    figures.write_text(figures.read_text("utf-8") + "# edited\n", "utf-8")
    assert ensure_figures(tmp_path) == [tmp_path / "assets" / "figs" / "seven.txt"]  # the declaration is an input


def test_a_figures_file_without_figures_is_named(tmp_path):
    lesson_with_figures(tmp_path, "FIGURES = ['not a spec']\n")
    with pytest.raises(
        CourseError,
        match=r"expected FIGURES = \(FigureSpec\(...\), ...\) built with "
        r"course\.figures\.declare",
    ) as error:
        lesson_figures(tmp_path)
    assert str(error.value.where) == "lessons/lesson07/figures.py"


def test_a_project_without_lesson_figures_draws_nothing(tmp_path):
    (tmp_path / "lessons").mkdir()
    assert ensure_figures(tmp_path) == []


def test_first_build_draws_everything_and_a_rebuild_draws_nothing(project):
    assert sorted(_ensure(project)) == sorted([PNG, SVG])
    assert (project / PNG).read_bytes().startswith(b"\x89PNG")
    assert (project / SVG).read_text("utf-8").lstrip().startswith("<?xml")
    stamps = {name: (project / name).stat().st_mtime_ns for name in (PNG, SVG)}
    assert _ensure(project) == []
    assert {name: (project / name).stat().st_mtime_ns for name in (PNG, SVG)} == stamps
    assert set(json.loads((project / ".course-cache" / "figures.json").read_text())) == {PNG, SVG}


def test_editing_the_solution_redraws_only_the_memory_chart_from_the_edited_file(project):
    _ensure(project)
    before = (project / PNG).read_bytes()
    solution = project / "solutions" / "lesson05.py"
    solution.write_text(solution.read_text("utf-8") + "\n# a comment changes the hash, not the numbers\n", "utf-8")
    assert _ensure(project) == [PNG]
    assert (project / PNG).read_bytes() == before
    text = solution.read_text("utf-8")
    assert "opt_fp32 = k * num_params\n" in text
    solution.write_text(text.replace("opt_fp32 = k * num_params\n", "opt_fp32 = 2 * k * num_params\n"), "utf-8")
    assert _ensure(project) == [PNG]
    assert (project / PNG).read_bytes() != before  # drawn from this project's solution, not the installed one


def test_editing_the_lessons_drawing_module_redraws_that_figure_from_the_edited_code(project):
    _ensure(project)
    module = project / "lessons" / "lesson05" / "zero3_comm_flow.py"
    text = module.read_text("utf-8")
    assert '"计算", "#dcfce7"' in text
    module.write_text(text.replace('"计算", "#dcfce7"', '"计算", "#bbf7d0"'), "utf-8")
    assert _ensure(project) == [SVG]
    assert "#bbf7d0" in (project / SVG).read_text("utf-8")  # drawn by the project's lesson folder, not the repository's


def test_a_lessons_drawing_code_beside_its_figures_file_is_an_input(tmp_path):
    lesson_with_figures(
        tmp_path,
        (
            "from pathlib import Path\nfrom course.figures.declare import FigureSpec\n"
            "def draw(out, root):\n    from .chart import draw\n    return draw(out)\n"
            "FIGURES = (FigureSpec('assets/figs/seven.txt', draw, (Path(__file__).parent / 'chart.py',)),)\n"
        ),
    )
    chart = tmp_path / "lessons" / "lesson07" / "chart.py"
    chart.write_text(
        "def draw(out):\n    out.parent.mkdir(parents=True, exist_ok=True)\n"
        "    out.write_text('seven')\n    return out\n",
        "utf-8",
    )
    [spec] = lesson_figures(tmp_path)
    assert spec.inputs == ("lessons/lesson07/chart.py", "lessons/lesson07/figures.py")
    assert ensure_figures(tmp_path) == [tmp_path / "assets" / "figs" / "seven.txt"]
    chart.write_text(chart.read_text("utf-8").replace("'seven'", "'seven, redrawn'"), "utf-8")
    assert ensure_figures(tmp_path) == [tmp_path / "assets" / "figs" / "seven.txt"]
    assert (tmp_path / "assets" / "figs" / "seven.txt").read_text() == "seven, redrawn"


def test_a_deleted_image_is_redrawn(project):
    _ensure(project)
    (project / SVG).unlink()
    assert _ensure(project) == [SVG]


def test_an_unreadable_cache_means_redraw_not_failure(project):
    _ensure(project)
    (project / ".course-cache" / "figures.json").write_text("{not json", "utf-8")
    assert sorted(_ensure(project)) == sorted([PNG, SVG])
    assert _ensure(project) == []


def test_cache_dir_comes_from_course_config(project):
    (project / "pyproject.toml").write_text('[tool.course]\ncache_dir = "build-cache"\n', "utf-8")
    _ensure(project)
    assert (project / "build-cache" / "figures.json").is_file()
    assert not (project / ".course-cache").exists()


def test_a_missing_input_names_the_file(project):
    (project / "solutions" / "lesson05.py").unlink()
    with pytest.raises(CourseError) as error:
        ensure_figures(project, specs=drawn_figures(project))
    assert str(error.value.where) == "solutions/lesson05.py"
    assert PNG in error.value.message


def test_a_solution_without_the_memory_function_is_named(project):
    (project / "solutions" / "lesson05.py").write_text("def other():\n    return 0\n", "utf-8")
    with pytest.raises(CourseError, match="zero_memory_per_gpu") as error:
        ensure_figures(project, specs=drawn_figures(project))
    assert str(error.value.where) == "solutions/lesson05.py"


def lesson_with_diagrams(root: Path, *sources: str) -> Path:
    """A project using this checkout's mermaid, with lesson07.qmd showing SOURCES as mermaid diagrams."""
    shutil.copy(REPO / "package.json", root / "package.json")
    if not (root / "node_modules").exists():
        (root / "node_modules").symlink_to(REPO / "node_modules")
    blocks = "".join(f"\n```{{mermaid}}\n{source}```\n" for source in sources)
    (root / "lessons").mkdir(exist_ok=True)
    (root / "lessons" / "lesson07.qmd").write_text(f"---\ntitle: t\nlesson: 7\n---\n{blocks}", "utf-8")
    return root


@pytest.mark.browser
def test_each_diagram_is_drawn_once_for_feedback_and_a_new_one_alone(tmp_path):
    flow, sequence = "flowchart LR\n  A --> B\n", "sequenceDiagram\n  A->>B: 梯度\n"
    project = lesson_with_diagrams(tmp_path, flow, sequence)
    first = ensure_diagrams(project)
    assert len(first) == 2 and all(p.parent == diagram_store(project) and "<svg" in p.read_text() for p in first)
    assert ensure_diagrams(project) == []
    lesson_with_diagrams(tmp_path, flow, sequence, "flowchart TD\n  C --> D\n")
    added = ensure_diagrams(project)
    assert len(added) == 1 and sorted(diagram_store(project).iterdir()) == sorted([*first, *added])


def test_without_chromium_nothing_is_drawn_and_the_build_says_feedback_will(tmp_path, monkeypatch, capsys):
    import course.tools.chromium

    project = lesson_with_diagrams(tmp_path, "flowchart LR\n  A --> B\n")
    monkeypatch.setattr(course.tools.chromium.shutil, "which", lambda name: None)
    assert ensure_diagrams(project) == [] and not diagram_store(project).exists()
    assert "feedback pages, which will draw them themselves: chromium not found" in capsys.readouterr().err


def test_a_project_without_diagrams_needs_no_browser(tmp_path, monkeypatch, capsys):
    import course.tools.chromium

    project = lesson_with_diagrams(tmp_path)
    monkeypatch.setattr(course.tools.chromium.shutil, "which", lambda name: None)
    assert ensure_diagrams(project) == [] and not diagram_store(project).exists() and capsys.readouterr().err == ""
