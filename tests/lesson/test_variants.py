"""The variants as data (course.lesson.variants): no module compares a variant's name (each asks the Variant what it
shows and offers), each Quarto profile tells the page filter what the model declares, [tool.course] variants names
only the model's variants (anything else is an error at its line of pyproject.toml), and a build makes exactly the
variants it names."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import yaml

from course.errors import CourseError
from course.lesson.variants import STUDENT, VARIANTS, get_variant
from course.site.plan import make_plan
from tests.project_copy import copy_project

pytestmark = pytest.mark.long(10)  # the one build (test_a_build_makes_only_the_variants_pyproject_names)

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("src", "scripts", "_extensions")
# Where "student" is a person (nbgrader's Student, a hub user), not a variant: a comparison with the word is theirs;
# a comparison of a variant is still found there.
PEOPLE = ("src/course/grading/", "src/course/nbgrader_hooks/", "src/course/hub/")
COMMENTS = {".lua": (r"--\[\[.*?\]\]", r"--[^\n]*"), ".js": (r"/\*.*?\*/", r"//[^\n]*")}


def _names_a_variant(node: ast.expr) -> bool:
    """`variant`, `lesson.variant`, `chosen_variant`, or a variant's name (`variant.name`)."""
    if isinstance(node, ast.Attribute) and node.attr == "name":
        node = node.value
    name = node.id if isinstance(node, ast.Name) else getattr(node, "attr", None)
    return isinstance(name, str) and (name == "variant" or name.endswith("_variant"))


def _is_variant_word(node: ast.expr) -> bool:
    """A string that names a variant ("student"), alone or in a tuple, list or set."""
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(map(_is_variant_word, node.elts))
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in VARIANTS


def python_comparisons(source: str, *, words: bool = True) -> list[str]:
    """'line N: CODE' for each comparison of a variant (but with None), each `match` on one, and (WORDS) each
    comparison with a variant's name."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Match) and _names_a_variant(node.subject):
            found.append((node.lineno, f"match {ast.unparse(node.subject)}"))
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        if any(isinstance(o, ast.Constant) and o.value is None for o in operands):
            continue
        if any(_names_a_variant(o) or (words and _is_variant_word(o)) for o in operands):
            found.append((node.lineno, ast.unparse(node)))
    return [f"line {line}: {code}" for line, code in sorted(found)]


def text_comparisons(source: str, suffix: str) -> list[str]:
    """'line N: LINE' for each comparison of `variant` or with a variant's name in a Lua or JavaScript SOURCE
    (comments left out)."""
    for comment in COMMENTS[suffix]:
        source = re.sub(comment, lambda m: "\n" * m[0].count("\n"), source, flags=re.DOTALL)
    names = "|".join(map(re.escape, VARIANTS))
    compare = r"(?:[~!=]==?)"
    pattern = re.compile(
        rf"""\bvariant\s*{compare}|{compare}\s*variant\b|{compare}\s*["'](?:{names})["']"""
        rf"""|["'](?:{names})["']\s*{compare}"""
    )
    return [f"line {n}: {line.strip()}" for n, line in enumerate(source.splitlines(), 1) if pattern.search(line)]


def scanned_files() -> list[Path]:
    """The engine's Python, Lua and JavaScript in src/, scripts/ and _extensions/."""
    return [
        p
        for folder in SCANNED
        for p in sorted((ROOT / folder).rglob("*"))
        if p.suffix in (".py", *COMMENTS) and p.is_file() and "__pycache__" not in p.parts
    ]


def test_no_module_compares_a_variants_name():
    """Each module asks the Variant (shows_solutions, offers_assignment, …) instead of testing which one it is."""
    offenders = {}
    for path in scanned_files():
        relative, text = path.relative_to(ROOT).as_posix(), path.read_text("utf-8")
        if path.suffix == ".py":
            found = python_comparisons(text, words=not relative.startswith(PEOPLE))
        else:
            found = text_comparisons(text, path.suffix)
        if found:
            offenders[relative] = found
    assert offenders == {}
    assert any(p.suffix == ".lua" for p in scanned_files()) and any(p.suffix == ".js" for p in scanned_files())


def test_the_finders_see_a_planted_comparison_and_pass_questions_to_the_model():
    """The checkers themselves: each way of testing a variant's name is found; asking the Variant is not."""
    planted = """
if variant == "student": pass
if lesson.variant != "answer": pass
if chosen_variant.name == profile: pass
if kind in ("student", "x"): pass
match variant:
    case _: pass
if variant.shows_solutions and not view.variant is None and name in VARIANTS and role == "exercise": pass
"""
    assert python_comparisons(planted) == [
        "line 2: variant == 'student'",
        "line 3: lesson.variant != 'answer'",
        "line 4: chosen_variant.name == profile",
        "line 5: kind in ('student', 'x')",
        "line 6: match variant",
    ]
    assert python_comparisons('if kind == "student": pass\n', words=False) == []
    lua = (
        '-- variant ~= "answer" in a comment\nif variant ~= "answer" then end\nif p == "student" then end\n'
        'if not shows_solutions then end\n--[[ a == "student"\n]]\nlocal x = (a == variant)\n'
    )
    assert text_comparisons(lua, ".lua") == [
        'line 2: if variant ~= "answer" then end',
        'line 3: if p == "student" then end',
        "line 7: local x = (a == variant)",
    ]
    assert text_comparisons("// v === 'answer'\nif (v !== 'answer') {}\n", ".js") == ["line 2: if (v !== 'answer') {}"]


@pytest.mark.parametrize("variant", VARIANTS.values(), ids=str)
def test_each_quarto_profile_tells_the_filter_what_the_model_declares(variant):
    """Under Quarto the filter reads _quarto-NAME.yml's course-shows-solutions, as pandoc gets it from render_page."""
    profile = yaml.safe_load((ROOT / f"_quarto-{variant.name}.yml").read_text("utf-8"))
    assert {key: profile.get(key) for key in variant.metadata()} == variant.metadata()
    assert profile["project"]["output-dir"].endswith(f"/{variant.name}")


def test_the_quarto_project_has_a_profile_for_each_variant_and_no_other():
    group = yaml.safe_load((ROOT / "_quarto.yml").read_text("utf-8"))["profile"]["group"]
    assert [sorted(names) for names in group] == [sorted(VARIANTS)]


def test_a_name_is_looked_up_and_a_variant_passes_through():
    assert get_variant("student") is STUDENT and get_variant(STUDENT) is STUDENT
    with pytest.raises(CourseError, match="unknown variant 'teacher'; expected one of student, answer"):
        get_variant("teacher")


PYPROJECT = '[project]\nname = "a-course"\n\n[tool.course]\ncourse_title = "t"\nvariants = {value}\n'


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ('["student", "teacher"]', "unknown variant 'teacher'; expected names among student, answer"),
        ('["student", 5]', "unknown variant 5; expected names among student, answer"),
        ('["answer", "answer"]', "expected at least one variant, each named once, got ['answer', 'answer']"),
        ("[]", "expected at least one variant, each named once, got []"),
    ],
)
def test_variants_in_pyproject_are_the_models_each_named_once_or_an_error_at_that_line(tmp_path, value, message):
    (tmp_path / "pyproject.toml").write_text(PYPROJECT.format(value=value), "utf-8")
    with pytest.raises(CourseError) as err:
        make_plan(tmp_path)
    assert str(err.value) == f"pyproject.toml, line 6: [tool.course] variants: {message}"


def test_the_plan_holds_the_configured_variants_in_their_order(tmp_path):
    (tmp_path / "pyproject.toml").write_text(PYPROJECT.format(value='["answer", "student"]'), "utf-8")
    (tmp_path / "lessons").mkdir()
    (tmp_path / "lessons" / "lesson01.qmd").write_text("---\ntitle: t\nlesson: 1\n---\n", "utf-8")
    plan = make_plan(tmp_path)
    assert plan.variants == (VARIANTS["answer"], STUDENT)
    assert plan.site_dir(STUDENT) == plan.site_dir("student") == tmp_path / "_site" / "student"


@pytest.mark.slow
def test_a_build_makes_only_the_variants_pyproject_names(tmp_path):
    """With [tool.course] variants = ["student"], `course build` writes the student site and no answer site."""
    from course.cli import main

    root = copy_project(tmp_path / "project")
    pyproject = root / "pyproject.toml"
    text = pyproject.read_text("utf-8")
    pyproject.write_text(text.replace("[tool.course]\n", '[tool.course]\nvariants = ["student"]\n', 1), "utf-8")
    assert make_plan(root).variants == (STUDENT,)
    assert main(["build", "--root", str(root), "--renderer", "pandoc"]) == 0
    assert (root / "_site" / "student" / "index.html").is_file()
    assert sorted(p.name for p in (root / "_site").iterdir() if p.is_dir()) == ["student"]
