"""第 5 课's generated figures: 图 5-3 from the reference solution, the ZeRO-3 communication diagram, and the
lab's measurements shown in the 实测 section. Read by `course build` (course.workflows.draw_figures)."""

from pathlib import Path

from course.errors import CourseError, Location
from course.workflows.draw_figures import FigureSpec, lab_sources, load_solution, measure_lab, package_file

SOLUTION = "solutions/lesson05.py"


def draw_memory(out_path: Path, project_root: Path) -> Path:
    """图 5-3 from this project's lesson 5 solution."""
    from course.figures.zero_memory import draw_zero_memory

    solution = load_solution(project_root, SOLUTION)
    if not callable(getattr(solution, "zero_memory_per_gpu", None)):
        raise CourseError("defines no zero_memory_per_gpu(num_params, dp, stage, k=...), which 图 5-3 is computed "
                          "from", Location(SOLUTION))
    return draw_zero_memory(out_path, memory_fn=solution.zero_memory_per_gpu)


def draw_comm_flow(out_path: Path, project_root: Path) -> Path:
    """The ZeRO-3 per-layer communication diagram (depends on no project data)."""
    from course.figures.zero3_comm_flow import draw_zero3_comm_flow

    return draw_zero3_comm_flow(out_path)


FIGURES = (
    FigureSpec("assets/figs/train_zero_memory.png", draw_memory,
               (SOLUTION, package_file("course.figures.zero_memory"))),
    FigureSpec("assets/zero3_comm_flow.svg", draw_comm_flow, (package_file("course.figures.zero3_comm_flow"),)),
    FigureSpec("assets/lab/zero_measured.json", measure_lab, lab_sources()),
)
