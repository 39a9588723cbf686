"""A lesson's data folder is imported as its own private package: siblings import relatively, edits are read
again, two lessons' same-named modules never meet, and a broken file is named."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from course.errors import CourseError
from course.lesson.data_modules import load_data_module


def data_folder(root: Path, stem: str, files: dict[str, str]) -> Path:
    """lessons/STEM/ under ROOT holding FILES (name -> text)."""
    folder = root / "lessons" / stem
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text, "utf-8")
    return folder


def test_a_module_imports_its_sibling_relatively_and_lazily(tmp_path):
    folder = data_folder(
        tmp_path,
        "lesson07",
        {
            "figures.py": "def draw():\n    from .chart import TITLE\n    return TITLE\n",
            "chart.py": "TITLE = 'seven'\n",
        },
    )
    figures = load_data_module(folder, "figures", "lessons/lesson07/figures.py")
    assert figures.draw() == "seven"
    assert Path(figures.__file__) == (folder / "figures.py").resolve()


def test_two_lessons_with_the_same_module_names_do_not_meet(tmp_path):
    text = "def draw():\n    from .chart import TITLE\n    return TITLE\n"
    seven = data_folder(tmp_path, "lesson07", {"figures.py": text, "chart.py": "TITLE = 'seven'\n"})
    eight = data_folder(tmp_path, "lesson08", {"figures.py": text, "chart.py": "TITLE = 'eight'\n"})
    first = load_data_module(seven, "figures", "lessons/lesson07/figures.py")
    second = load_data_module(eight, "figures", "lessons/lesson08/figures.py")
    assert (first.draw(), second.draw()) == ("seven", "eight")
    assert "chart" not in sys.modules and "figures" not in sys.modules  # nothing lands on the top-level names


def test_loading_again_reads_edited_siblings(tmp_path):
    folder = data_folder(
        tmp_path,
        "lesson07",
        {
            "figures.py": "def draw():\n    from .chart import TITLE\n    return TITLE\n",
            "chart.py": "TITLE = 'before'\n",
        },
    )
    assert load_data_module(folder, "figures", "f").draw() == "before"
    (folder / "chart.py").write_text("TITLE = 'after, edited'\n", "utf-8")  # another size: bytecode is stale
    assert load_data_module(folder, "figures", "f").draw() == "after, edited"


def test_a_missing_module_is_named_where_it_was_expected(tmp_path):
    folder = data_folder(tmp_path, "lesson07", {})
    with pytest.raises(CourseError, match=r"expected a Python module figures\.py") as error:
        load_data_module(folder, "figures", "lessons/lesson07/figures.py")
    assert str(error.value.where) == "lessons/lesson07/figures.py"


def test_a_missing_import_inside_the_module_stays_that_import_error(tmp_path):
    folder = data_folder(tmp_path, "lesson07", {"figures.py": "import no_such_module_for_lesson07\n"})
    with pytest.raises(ModuleNotFoundError, match="no_such_module_for_lesson07"):
        load_data_module(folder, "figures", "lessons/lesson07/figures.py")


def test_a_syntax_error_names_the_file_and_line(tmp_path):
    folder = data_folder(tmp_path, "lesson07", {"figures.py": "FIGURES = ()\nFIGURES = (\n"})
    with pytest.raises(CourseError, match="expected valid Python") as error:
        load_data_module(folder, "figures", "lessons/lesson07/figures.py")
    assert str(error.value.where) == "lessons/lesson07/figures.py, line 2"


def test_a_syntax_error_in_a_sibling_names_the_sibling(tmp_path):
    folder = data_folder(
        tmp_path, "lesson07", {"figures.py": "from .chart import TITLE\n", "chart.py": "TITLE = 'x'\nif True\n"}
    )
    with pytest.raises(CourseError, match="expected valid Python") as error:
        load_data_module(folder, "figures", "lessons/lesson07/figures.py")
    assert str(error.value.where) == "lessons/lesson07/chart.py, line 2"
