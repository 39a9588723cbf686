"""The student site's assignment is the notebook stock nbgrader releases, kept in the build cache under the hash of
what it is made from: made again when its source changes, never when nothing did. (The release itself, by stock
nbgrader: the builds of tests/workflows/test_build_site.py and tests/workflows/test_quarto_render.py.)"""

from __future__ import annotations

import nbformat

from course.workflows import release_assignment
from course.workflows.release_assignment import cached_release, release_key


def source_folder(course_root, stem: str, text: str):
    """A course root holding STEM's nbgrader source notebook, one markdown cell saying TEXT."""
    folder = course_root / "source" / stem
    folder.mkdir(parents=True, exist_ok=True)
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(text)])
    nbformat.write(notebook, folder / f"{stem}.ipynb")


def test_a_release_is_made_once_per_source_and_kept_until_the_source_changes(tmp_path, monkeypatch):
    made = []

    def release_copy(course_root, stem):
        made.append(stem)
        source = (course_root / "source" / stem / f"{stem}.ipynb").read_text("utf-8")
        return source.replace("课文", "发布").encode()

    monkeypatch.setattr(release_assignment, "release_copy", release_copy)
    course_root, cache = tmp_path / "autograder", tmp_path / "cache"
    source_folder(course_root, "lesson05", "课文一")
    first = cached_release(cache, course_root, "lesson05")
    assert made == ["lesson05"] and first.cells[0].source == "发布一"
    assert cached_release(cache, course_root, "lesson05") == first and made == ["lesson05"]
    key = release_key(course_root, "lesson05")
    source_folder(course_root, "lesson05", "课文二")
    assert release_key(course_root, "lesson05") != key
    assert cached_release(cache, course_root, "lesson05").cells[0].source == "发布二" and made == ["lesson05"] * 2
    key = release_key(course_root, "lesson05")
    assert [p.name for p in cache.iterdir()] == [f"lesson05-{key}.ipynb"]  # the older release is gone
    (course_root / "source" / "lesson05" / "data.csv").write_text("1\n", "utf-8")  # any file of the folder counts
    assert release_key(course_root, "lesson05") != key
