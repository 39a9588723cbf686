"""`course stats lessonNN`: item analysis of one lesson's graded class, and the flags that say what to look at.

From the class as course.grading.item_data reads it: per item (each code item, each of its checks, each question,
each veto item) and for the whole test the figures of course.grading.item_stats, the flags with the rule that
raised each, and the misconceptions and veto hints across the class sorted into "reteach first", each pointing
back to the section of the lesson on the answer site. Written as reports/lessonNN-items.csv and -items.json
(course.grading.item_render); the lesson's HTML report and the semester report show the same section.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from course.config import load_config
from course.grading.item_data import ClassScores, read_class
from course.grading.item_stats import (
    LOW_DISCRIMINATION,
    RELIABLE_N,
    ItemFigures,
    TestFigures,
    describe_item,
    describe_test,
    fails_only_with,
)
from course.grading.load_checks import HEADING

NO_VARIANCE = {
    "every student scored the same on this item": "人人得分相同，这一项没有差异",
    "every student scored the same on the rest of the test": "其余部分人人得分相同，没有差异",
    "fewer than two students": "不足两名学生",
}


@dataclass(frozen=True)
class Flag:
    """Something to look at in an item, and the rule that raised it."""

    code: str
    rule: str

    def __str__(self) -> str:
        return f"{self.code}: {self.rule}"


@dataclass(frozen=True)
class ItemRow:
    """One row of the item table."""

    item: str  # a code item's or question's id, a check's line of Python, a veto's id
    kind: str  # code, check, question or veto
    title: str
    figures: ItemFigures
    flags: tuple[Flag, ...]
    parent: str = ""  # a check's code item
    hidden: bool = False  # a hidden check


@dataclass(frozen=True)
class Misconception:
    """One misconception or veto hint across the class."""

    kind: str  # misconception or veto-hint
    id: str
    name: str
    students: int
    share: float  # of the analysed class
    items: tuple[str, ...]  # the items it cost
    points_lost: float  # the points those students lost on those items, summed
    section: str  # the lesson section it points back to (heading text)
    link: str  # that section on the answer site, relative to the reports folder
    example: str  # one anonymised example
    veto: str | None


@dataclass(frozen=True)
class Analysis:
    """Everything the item reports show for one lesson."""

    lesson: str
    test: TestFigures
    rows: tuple[ItemRow, ...]
    misconceptions: tuple[Misconception, ...]  # reteach first: most students, then most points lost
    left_out: dict[str, int]
    versions: tuple[tuple[str, int, tuple[ItemRow, ...]], ...]  # per release graded (version, n, its rows), if > 1

    @property
    def unreliable(self) -> bool:
        """Too few students for the figures to mean much (shown all the same)."""
        return self.test.n < RELIABLE_N


@dataclass(frozen=True)
class ItemFiles:
    """What `course stats` wrote."""

    csv: Path
    json: Path
    analysis: Analysis


def analyse_lesson(
    course_root: Path, lesson: str, *, autograder: Path | None = None, out_dir: Path | None = None
) -> Analysis:
    """Read the lesson's class and analyse it (OUT_DIR: where the reports go, for the section links)."""
    root = Path(course_root)
    config = load_config(root)
    autograder = Path(autograder or root / config.autograder_dir)
    data = read_class(root, lesson, autograder=autograder)
    sections = lesson_sections(root / config.lessons_dir / f"{lesson}.qmd")
    answer_page = root / config.site_dir / "answer" / f"{lesson}.html"
    return analyse(data, sections, os.path.relpath(answer_page, Path(out_dir or autograder / "reports")))


def analyse(data: ClassScores, sections: dict[str, tuple[str, str]], answer_page: str) -> Analysis:
    """The figures, flags and misconceptions of one class (SECTIONS: label or question id → heading, anchor).

    Releases are ordered by their first submission, so movement reads from the older release to the newer."""
    test, rows = _rows(data)
    first = {}
    for version, stamp in zip(data.versions, data.handed_in):
        first[version] = min(first.get(version, stamp), stamp)
    releases = [v for v in sorted(first, key=lambda v: (first[v], v)) if v]  # "": graded before versions
    by_version = ()
    if len(releases) > 1:
        masks = {v: np.array([x == v for x in data.versions]) for v in releases}
        by_version = tuple((v, int(mask.sum()), _rows(_subset(data, mask))[1]) for v, mask in masks.items())
    return Analysis(data.lesson, test, rows, _misconceptions(data, sections, answer_page), data.left_out, by_version)


def _subset(data: ClassScores, mask: np.ndarray) -> ClassScores:
    """The class restricted to the rows MASK selects."""
    kept = [i for i, m in enumerate(mask) if m]
    return replace(
        data,
        students=tuple(data.students[i] for i in kept),
        scores=data.scores[mask],
        totals=data.totals[mask],
        check_outcomes=data.check_outcomes[mask],
        vetoed={k: v[mask] for k, v in data.vetoed.items()},
        mistakes=tuple((kept.index(r), m) for r, m in data.mistakes if r in kept),
        versions=tuple(data.versions[i] for i in kept),
        handed_in=tuple(data.handed_in[i] for i in kept),
    )


def _rows(data: ClassScores) -> tuple[TestFigures, tuple[ItemRow, ...]]:
    """The test's figures and one row per code item (its checks after it), question and veto item."""
    maxima = [points for _, _, points in data.items]
    test, figures = describe_test(data.scores, maxima, data.rubric.pass_line, data.totals)
    sums = data.scores.sum(axis=1)
    titles = {c.id: c.title for c in data.rubric.code_items} | {q.id: q.title for q in data.rubric.questions}
    redundant = {}  # within one code item: a check that fails only together with a sibling adds nothing
    for item, _, _ in data.items:
        redundant.update(
            fails_only_with(
                {c.text: data.check_outcomes[:, j] == 0 for j, c in enumerate(data.checks) if c.item == item}
            )
        )
    rows = []
    for j, (item, kind, _) in enumerate(data.items):
        rows.append(ItemRow(item, kind, titles[item], figures[j], _flags(figures[j], test.n)))
        for c_index, check in enumerate(data.checks):
            held = data.check_outcomes[:, c_index]
            known = ~np.isnan(held)
            if check.item != item or not known.any():  # no re-check outcome of this check (graded before they
                continue  # were kept): no row rather than an empty one
            fig = describe_item(held[known], 1.0, (sums - data.scores[:, j])[known], sums[known])
            extra = (
                (Flag("redundant", f"只和另一项检查一起失败（多余）：{redundant[check.text]}"),)
                if check.text in redundant
                else ()
            )
            rows.append(ItemRow(check.text, "check", check.text, fig, _flags(fig, test.n) + extra, item, check.hidden))
    for veto in data.rubric.vetoes:
        kept = (~data.vetoed[veto.id]).astype(float)
        fig = describe_item(kept, 1.0, sums, sums)
        flags = tuple(f for f in _flags(fig, test.n) if f.code != "everybody")  # nobody vetoed: nothing to look at
        rows.append(ItemRow(veto.id, "veto", veto.text, fig, flags))
    return test, tuple(rows)


def _flags(f: ItemFigures, class_n: int) -> tuple[Flag, ...]:
    """The flags of one item's figures, each with its rule."""
    flags = []
    if f.facility is not None and f.facility <= 0:
        flags.append(Flag("nobody", "没有人得分（得分率 0）"))
    elif f.facility is not None and f.facility >= 1:
        flags.append(Flag("everybody", "人人满分（得分率 1）"))
    if f.discrimination is None:
        flags.append(Flag("no-discrimination", f"无法计算区分度：{NO_VARIANCE.get(f.no_variance, f.no_variance)}"))
    elif f.discrimination < 0:
        flags.append(Flag("negative", f"区分度 {f.discrimination:.2f} < 0：其余部分得分高的学生在这题上反而得分低"))
    elif f.discrimination < LOW_DISCRIMINATION:
        flags.append(Flag("low-discrimination", f"区分度 {f.discrimination:.2f} < {LOW_DISCRIMINATION}：区分不出强弱"))
    if min(f.n, class_n) < RELIABLE_N:
        flags.append(Flag("unreliable", f"n = {min(f.n, class_n)} < {RELIABLE_N}：人数太少，数字不可靠"))
    return tuple(flags)


def _misconceptions(
    data: ClassScores, sections: dict[str, tuple[str, str]], answer_page: str
) -> tuple[Misconception, ...]:
    """Each misconception and veto hint across the class, reteach first (most students, then most points lost)."""
    column = {item: j for j, (item, _, _) in enumerate(data.items)}
    maxima = {item: points for item, _, points in data.items}
    grouped: dict[tuple[str, str], list] = {}
    for row, mistake in data.mistakes:
        grouped.setdefault((mistake.kind, mistake.id), []).append((row, mistake))
    found = []
    for (kind, mistake_id), entries in grouped.items():
        rows = sorted({row for row, _ in entries})
        items = tuple(dict.fromkeys(i for _, m in entries for i in m.items))
        lost = sum(maxima[i] - data.scores[r, column[i]] for r in rows for i in items if i in column)
        first = entries[0][1]
        key = (
            f"heading:{first.section}"
            if first.section
            else (items[0] if kind == "veto-hint" else f"label:{data.exercises.get(items[0], '')}")
            if items
            else ""
        )
        heading, anchor = sections.get(key, ("", ""))
        found.append(
            Misconception(
                kind,
                mistake_id,
                first.name,
                len(rows),
                len(rows) / max(len(data.students), 1),
                items,
                float(lost),
                heading,
                f"{answer_page}#{anchor}" if anchor else "",
                first.example,
                first.veto,
            )
        )
    return tuple(sorted(found, key=lambda m: (-m.students, -m.points_lost, m.id)))


LABEL = re.compile(r"^#\|[ \t]*label:[ \t]*([\w-]+)")
QUESTION = re.compile(r"(Q\d+)(?![A-Za-z0-9_])")


def anchor_id(heading: str) -> str:
    """The id the site's pages give a heading (pandoc's GitHub-style identifiers): lower case, punctuation
    dropped, spaces as hyphens."""
    text = heading.strip().lower()
    return "".join(c for c in text if c.isalnum() or c in " -_").strip().replace(" ", "-")


def lesson_sections(lesson_file: Path) -> dict[str, tuple[str, str]]:
    """Each heading (heading:<its text>), question (Q1) and code cell (label:<its label>) → the heading of the
    section it is in and that heading's anchor on the site's page (an explicit {#id} wins); {} without the lesson.

    Read line by line (headings outside fenced blocks, labels inside them), so a lesson whose includes are not
    beside the course's reports still points its sections out."""
    if not Path(lesson_file).is_file():
        return {}
    found: dict[str, tuple[str, str]] = {}
    current, fence = ("", ""), None
    lines = Path(lesson_file).read_text("utf-8").splitlines()
    if lines and lines[0].strip() == "---":  # the YAML front matter: its comments are no headings
        lines = lines[next((i for i, line in enumerate(lines[1:], 1) if line.strip() == "---"), 0) + 1 :]
    for line in lines:
        marker = re.match(r"^(`{3,}|~{3,})", line)
        if marker and (fence is None or marker[1][0] == fence[0] and len(marker[1]) >= len(fence)):
            fence = marker[1] if fence is None else None
            continue
        if fence is not None:
            label = LABEL.match(line)
            if label:
                found.setdefault(f"label:{label[1]}", current)
            continue
        heading = HEADING.match(line)
        if heading:
            explicit = re.search(r"#([\w-]+)", heading[2] or "")
            current = (heading[1], explicit[1] if explicit else anchor_id(heading[1]))
            found.setdefault(f"heading:{heading[1]}", current)
            question = QUESTION.match(heading[1])
            if question:
                found.setdefault(question[1], current)
    return found
