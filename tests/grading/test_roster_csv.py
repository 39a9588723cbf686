"""`course roster import`: a class list with Chinese names into nbgrader's Student table; bad rows named."""

from __future__ import annotations

import pytest

from course.errors import CourseError
from course.grading.roster_csv import import_roster, read_roster_csv


def write(tmp_path, text: str, encoding: str = "utf-8"):
    path = tmp_path / "roster.csv"
    path.write_text(text, encoding)
    return path


def test_a_roster_with_chinese_names_fills_nbgraders_student_table(tmp_path, gradebook_db):
    from course.grading.gradebook import gradebook
    from course.grading.lms_export import Person

    url = gradebook_db.url or f"sqlite:///{tmp_path / 'gradebook.db'}"
    roster = write(
        tmp_path,
        "id,name,email,lms_user_id\n2026001,张三,zhangsan@example.edu,501\n2026002,欧阳娜娜,,502\n",
        "utf-8-sig",
    )  # Excel's BOM
    people = read_roster_csv(roster)
    assert [p.display_name for p in people] == ["张三", "欧阳娜娜"]  # a whole name, never split into guesses
    with gradebook(url) as gb:
        gb.add_student("2026002")  # already in the gradebook: only the fields change
    done = import_roster(url, people)
    assert done.added == ("2026001",) and done.updated == ("2026002",)
    with gradebook(url) as gb:
        stored = {s.id: Person(s.id, s.first_name, s.last_name, s.email, s.lms_user_id) for s in gb.students}
    assert stored["2026001"] == Person("2026001", None, "张三", "zhangsan@example.edu", "501")
    assert stored["2026002"].display_name == "欧阳娜娜" and stored["2026002"].lms_user_id == "502"


def test_first_and_last_names_as_nbgrader_imports_them(tmp_path):
    [person] = read_roster_csv(write(tmp_path, "id,first_name,last_name,email\n2026003,雷,李,li@example.edu\n"))
    assert person.display_name == "李雷" and person.sortable_name == "李, 雷"


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("name,email\n张三,a@b.cn\n", ", line 1", "expected a header row with id"),
        ("id,name,phone\n1,张三,123\n", ", line 1", "unknown: phone"),
        ("id,name\n2026001,张三\n,李四\n", ", line 3", "column id: expected the student's id"),
        ("id,name\n2026001,张三\n2026001,李四\n", ", line 3", "column id: 2026001 is already on line 2"),
        ("id,name\n2026 001,张三\n", ", line 2", "column id: expected letters, digits"),
        ("id,name,email\n2026001,张三,zhangsan\n", ", line 2", "column email: expected an address"),
        ("id,name\n2026001,张三,多余\n", ", line 2", "expected 2 fields (id, name), got 3"),
        ("id,name,first_name\n1,张三,三\n", ", line 1", "either name (the whole name) or first_name/last_name"),
        ("id,name\n", ", line 2", "no students"),
    ],
)
def test_a_bad_row_is_named_with_its_line_and_nothing_is_read(tmp_path, text, where, message):
    roster = write(tmp_path, text)
    with pytest.raises(CourseError) as exc:
        read_roster_csv(roster)
    assert f"roster.csv{where}" in str(exc.value) and message in str(exc.value)


def test_a_roster_not_in_utf8_says_so(tmp_path):
    with pytest.raises(CourseError, match="not UTF-8"):
        read_roster_csv(write(tmp_path, "id,name\n2026001,张三\n", "gbk"))
