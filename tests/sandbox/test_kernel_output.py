"""The kernel's own output cap: a cell sends at most a little past the budget, counted afresh per cell and clear."""

from __future__ import annotations

import nbformat
import pytest
from nbclient import NotebookClient

from course.sandbox.kernel_output import startup_line

pytestmark = pytest.mark.slow

BUDGET = 1000
CELLS = {
    "names": 'print(sorted(n for n in ("install", "shell", "startup_line", "json", "Path") if n in globals()))',
    "flood": 'for _ in range(50):\n    print("x" * 999, flush=True)',
    "next": 'print("y" * 500)',
    "both-streams": 'import sys\nsys.stderr.write("e" * 800)\nsys.stderr.flush()\nprint("o" * 800)',
    "cleared": 'from IPython.display import clear_output\nprint("a" * 900)\nclear_output()\nprint("b" * 900)',
    "displays": "from IPython.display import display\n"
    'for _ in range(5):\n    display({"text/plain": "d" * 600}, raw=True)',
    # IPython 9 keeps everything a cell printed in its history: the cap must come before that copy too.
    "history": "hist = get_ipython().history_manager.outputs\n"
    'print(sum(len(s) for o in hist[2] for s in o.bundle.get("stream", [])))',
}


@pytest.fixture(scope="module")
def cells() -> dict[str, nbformat.NotebookNode]:
    """CELLS run in one kernel started with the cap at BUDGET bytes."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in CELLS.values()])
    cap = f"--IPKernelApp.exec_lines={startup_line(BUDGET)}"
    NotebookClient(nb, kernel_name="python3", timeout=60, extra_arguments=[cap]).execute()
    return dict(zip(CELLS, nb.cells))


def _streams(cell: nbformat.NotebookNode) -> str:
    """All the text the cell's stream outputs hold, in order."""
    return "".join(o.text for o in cell.outputs if o.output_type == "stream")


def test_the_cap_leaves_no_names_in_the_students_namespace(cells: dict) -> None:
    assert _streams(cells["names"]) == "[]\n"


def test_a_flood_is_cut_one_character_past_the_budget(cells: dict) -> None:
    assert _streams(cells["flood"]) == (("x" * 999 + "\n") * 50)[: BUDGET + 1]


def test_each_cell_starts_a_new_budget(cells: dict) -> None:
    assert _streams(cells["next"]) == "y" * 500 + "\n"


def test_stdout_and_stderr_share_one_budget(cells: dict) -> None:
    assert _streams(cells["both-streams"]) == ("e" * 800 + "o" * 800 + "\n")[: BUDGET + 1]


def test_clearing_the_output_starts_a_new_budget(cells: dict) -> None:
    assert _streams(cells["cleared"]) == "b" * 900 + "\n"


def test_displays_stop_once_the_budget_is_passed(cells: dict) -> None:
    shown = [o for o in cells["displays"].outputs if o.output_type == "display_data"]
    assert [o.data["text/plain"] for o in shown] == ["d" * 600] * 2


def test_what_ipython_keeps_of_a_flood_is_capped_too(cells: dict) -> None:
    assert _streams(cells["history"]) == f"{BUDGET + 1}\n"
