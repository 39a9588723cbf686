"""docs/development.md's code layout is the one list of the course's packages and modules, and it stays true: every
package and module in src/course/ is named in its package's row, and every name a row shows is a module of that
row's packages or a name one of them defines."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "development.md"
SRC = ROOT / "src"
SECTION = "## Code layout"
NAME = re.compile(r"[A-Za-z_]\w*")  # a bare name in a row: a module of the row's packages or what one defines
COMMAND = "course"  # the command line's name, shown in its row


def modules() -> dict[str, Path]:
    """Every module and package under src/course/, by dotted name (a package is its folder)."""
    found = {}
    for path in sorted((SRC / "course").rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        if parts == ("course", "__init__"):
            continue  # the table is the course package's layout
        if parts[-1] == "__init__":
            found[".".join(parts[:-1])] = path.parent
        else:
            found[".".join(parts)] = path
    return found


def layout_rows(text: str) -> list[tuple[int, tuple[str, ...], list[str]]]:
    """The code layout table's rows: (line number, the packages column's names, the names shown in the third)."""
    lines = text.splitlines()
    start = lines.index(SECTION)
    rows = []
    for number, line in enumerate(lines[start + 1 :], start=start + 2):
        if line.startswith("## "):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else []
        if len(cells) != 3 or cells[0] in ("layer", "---"):
            continue
        rows.append((number, tuple(re.findall(r"`([^`]+)`", cells[1])), re.findall(r"`([^`]+)`", cells[2])))
    assert rows, f"{DOC.relative_to(ROOT)}: no table under {SECTION!r}"
    return rows


def defined_names(path: Path) -> set[str]:
    """The names a module (or a package's __init__) defines or imports at its top level."""
    file = path / "__init__.py" if path.is_dir() else path
    names = set()
    for node in ast.parse(file.read_text("utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def row_problems(number: int, packages: tuple[str, ...], shown: list[str], known: dict[str, Path]) -> list[str]:
    """What one row gets wrong: a package that does not exist, a name that is neither a module of the row's packages
    nor defined by one of them."""
    where = f"{DOC.relative_to(ROOT)}, line {number}"
    problems = [f"{where}: package {p} does not exist in src/" for p in packages if p not in known]
    inside = {name.rpartition(".")[2]: name for name in known if name.rpartition(".")[0] in packages}
    defined = set().union(*(defined_names(known[m]) for m in [*packages, *inside.values()] if m in known))
    for name in shown:
        if name.startswith("course.") and name not in known:
            problems.append(f"{where}: {name} is not a module in src/")
        elif NAME.fullmatch(name) and name not in inside and name not in defined and name != COMMAND:
            problems.append(f"{where}: `{name}` is no module of {', '.join(packages)} nor a name one of them defines")
    return problems


def unnamed(rows: list[tuple[int, tuple[str, ...], list[str]]], known: dict[str, Path]) -> list[str]:
    """The modules and packages no row names: neither in a packages column nor by name in their package's row."""
    named = set()
    for _, packages, shown in rows:
        named |= {*packages, *(f"{p}.{s}" for p in packages for s in shown), *(s for s in shown if "." in s)}
    return sorted(set(known) - named)


def test_the_code_layout_names_every_module_and_only_what_exists():
    """Both ways: each module and package in src/course/ is named in its row (packages column, or by its name in
    its package's row); each package a row lists exists, and each name it shows is a module or a defined name."""
    known = modules()
    rows = layout_rows(DOC.read_text("utf-8"))
    problems = [p for row in rows for p in row_problems(*row, known)]
    problems += [
        f"{DOC.relative_to(ROOT)}: {SECTION!r} does not name {name} ({known[name].relative_to(ROOT)})"
        for name in unnamed(rows, known)
    ]
    assert not problems, "\n".join(problems)


def test_a_module_missing_from_the_layout_or_named_there_but_gone_is_reported(tmp_path):
    """The check itself: a row naming a module that does not exist fails with the doc's line; a function the row's
    module defines and a file name pass; a module no row names is unnamed."""
    known = {"course.pkg": tmp_path, "course.pkg.kept": tmp_path / "kept.py", "course.pkg.new": tmp_path / "new.py"}
    (tmp_path / "__init__.py").write_text("")
    (tmp_path / "kept.py").write_text("def helper():\n    pass\n")
    (tmp_path / "new.py").write_text("")
    text = (
        f"{SECTION}\n\n| layer | packages | what lives there |\n| --- | --- | --- |\n"
        "| a layer | `course.pkg` | `kept` (`helper`), `gone`, `course.pkg.old`, `config.yml` |\n\n## Next\n"
    )
    [(number, packages, shown)] = layout_rows(text)
    assert (number, packages) == (5, ("course.pkg",))
    assert row_problems(number, packages, shown, known) == [
        f"{DOC.relative_to(ROOT)}, line 5: `gone` is no module of course.pkg nor a name one of them defines",
        f"{DOC.relative_to(ROOT)}, line 5: course.pkg.old is not a module in src/",
    ]
    assert unnamed([(number, packages, shown)], known) == ["course.pkg.new"]
