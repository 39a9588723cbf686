"""第 5 课's generated figures: 图 5-3 from the reference solution, the ZeRO-3 communication diagram, and the
lab's measurements shown in the 实测 section. Read by `course build` (course.workflows.draw_figures).

The drawing code lives beside this file (zero_memory.py, zero3_comm_flow.py), imported relatively inside the
draw functions, so declaring the figures stays cheap and the modules are loaded only when a figure is redrawn.
"""

from pathlib import Path

from course.errors import CourseError, Location
from course.figures.declare import FigureSpec, load_solution, package_file
from course.lab.lesson_asset import lab_measurements

HERE = Path(__file__).parent
SOLUTION = "solutions/lesson05.py"


def draw_memory(out_path: Path, project_root: Path) -> Path:
    """图 5-3 from this project's lesson 5 solution."""
    from .zero_memory import draw_zero_memory

    solution = load_solution(project_root, SOLUTION)
    if not callable(getattr(solution, "zero_memory_per_gpu", None)):
        raise CourseError(
            "defines no zero_memory_per_gpu(num_params, dp, stage, k=...), which 图 5-3 is computed from",
            Location(SOLUTION),
        )
    return draw_zero_memory(out_path, solution.zero_memory_per_gpu)


def draw_comm_flow(out_path: Path, project_root: Path) -> Path:
    """The ZeRO-3 per-layer communication diagram (depends on no project data)."""
    from .zero3_comm_flow import draw_zero3_comm_flow

    return draw_zero3_comm_flow(out_path)


FIGURES = (
    FigureSpec(
        "assets/figs/train_zero_memory.png",
        draw_memory,
        (SOLUTION, HERE / "zero_memory.py", package_file("course.figures.render")),
    ),
    FigureSpec("assets/zero3_comm_flow.svg", draw_comm_flow, (HERE / "zero3_comm_flow.py",)),
    lab_measurements("assets/lab/zero_measured.json"),
)
