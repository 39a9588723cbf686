"""Keep only what one variant may show: a variant that does not show solutions (course.lesson.variants) loses the
solution cells, and a block the author shows to one Quarto profile only is kept in that variant alone.

The same rules live in the Lua filter (_extensions/course-variant/) for Quarto users;
tests/site/test_select_variant.py checks that both agree on the lesson.
"""

from __future__ import annotations

from course.errors import CourseError, Location
from course.lesson.model import Block, CodeCell, Div, Lesson
from course.lesson.variants import VARIANTS, Variant, get_variant

PROFILE_CLASSES = ("content-visible", "content-hidden")


def select_variant(lesson: Lesson, variant: str | Variant) -> Lesson:
    """The lesson as readers of VARIANT (a name or a Variant) see it; profile-only divs are unwrapped or dropped."""
    chosen = get_variant(variant)
    if lesson.variant is not None:
        raise CourseError(f"lesson already selected for the {lesson.variant} variant", Location(lesson.path))
    return lesson.with_blocks(_keep(lesson, lesson.blocks, chosen), variant=chosen.name)


def _keep(lesson: Lesson, blocks: tuple[Block, ...], variant: Variant) -> tuple[Block, ...]:
    """Filter one level of blocks, recursing into divs."""
    kept: list[Block] = []
    for block in blocks:
        if isinstance(block, CodeCell) and block.role == "solution" and not variant.shows_solutions:
            continue
        if isinstance(block, Div):
            shown = _profile_shows(lesson, block, variant)
            children = _keep(lesson, block.children, variant)
            if shown is None:
                kept.append(Div(block.line, block.attr, children))
            elif shown:
                kept.extend(children)
            continue
        kept.append(block)
    return tuple(kept)


def _profile_shows(lesson: Lesson, div: Div, variant: Variant) -> bool | None:
    """True/False for a Quarto profile div (content-visible/-hidden when-profile=…); None for other divs."""
    cls = next((c for c in div.attr.classes if c in PROFILE_CLASSES), None)
    if cls is None:
        return None
    profile = div.attr.get("when-profile")
    if profile not in VARIANTS:
        raise CourseError(
            f".{cls} needs when-profile naming a variant ({' or '.join(map(repr, VARIANTS))}), got {profile!r}",
            Location(lesson.path, div.line),
        )
    return variant.is_profile(profile) == (cls == "content-visible")
