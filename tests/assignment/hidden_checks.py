"""What a student must never see of lesson 5's hidden checks (feedback, release, `course check`): their calls,
expected values and sizes, as they could be written."""

from __future__ import annotations

import re

from course.grading.checks import literal
from tests.assignment.make_submissions import SPEC


def hidden_tokens() -> set[str]:
    """Every hidden call, expected value and size as it could be written."""
    tokens = {"BEGIN HIDDEN TESTS"}
    hidden = [c for item in SPEC.items for c in SPEC.checks(item) if c.hidden]
    for check in hidden:
        tokens |= {c.code() for c in check.calls} | ({literal(check.want)} if check.want is not None else set())
    sizes = {call.args[0] for check in hidden for call in check.calls}
    return tokens | {str(p) for p in sizes} | {literal(p) for p in sizes}


def leaked(text: str) -> list[str]:
    """Hidden tokens that appear in TEXT as whole numbers or calls."""
    return [t for t in hidden_tokens() if re.search(rf"(?<![\w.]){re.escape(t)}(?![\w.])", text)]
