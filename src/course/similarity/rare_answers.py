"""Shared rare wrong answers: the same (normalised) wrong fill of a blank, or the same failing-check pattern.

A correct answer is shared by everyone and says nothing; a wrong one that many make is a common mistake.
A wrong answer only two or three students share is evidence, the rarer the stronger: the score is
log(n/k) / log(n/2) for k of n students (1.0 for a pair), and groups over MAX_SHARE students are left out.
A failing-check pattern (which code items failed) is weaker evidence and is weighted down.
"""

from __future__ import annotations

import math
from collections import defaultdict
from itertools import combinations

from course.similarity.collect import ClassWork
from course.similarity.evidence import Evidence
from course.similarity.normalise import fill_key

PATTERN_WEIGHT = 0.4  # a shared failing pattern alone never ranks as high as a shared wrong fill


def rarity(k: int, n: int) -> float:
    """How rare an answer k of n students gave is: 1.0 for two students, towards 0 as k approaches n."""
    return 1.0 if n <= 2 else max(0.0, min(1.0, math.log(n / k) / math.log(n / 2)))


def rare_answers(work: ClassWork, max_share: int) -> list[Evidence]:
    """Evidence from every blank's rare wrong fills and every rare failing-check pattern."""
    n = len(work.works)
    out: list[Evidence] = []
    width = max((len(w.fills) for w in work.works if w.fills), default=0)
    solution = work.reference_fills or ()
    for i in range(width):
        reference = fill_key(solution[i]) if i < len(solution) else None
        groups = defaultdict(list)
        for w in work.works:
            if w.fills and i < len(w.fills) and w.fills[i] and set(w.fills[i]) != {"_"}:
                groups[fill_key(w.fills[i])].append(w)
        for key, members in groups.items():
            if key != reference and 2 <= len(members) <= max_share:
                score = rarity(len(members), n)
                out += [
                    Evidence(
                        a.student,
                        b.student,
                        "rare-answer",
                        f"blank {i + 1}",
                        score,
                        f"same wrong answer in blank {i + 1}, given by {len(members)} of {n} students",
                        a.fills[i],
                        b.fills[i],
                        ((0, len(a.fills[i])),),
                        ((0, len(b.fills[i])),),
                    )
                    for a, b in combinations(members, 2)
                ]
    patterns = defaultdict(list)
    for w in work.works:
        if w.failing:
            patterns[w.failing].append(w)
    for pattern, members in patterns.items():
        if 2 <= len(members) <= max_share:
            text = ", ".join(pattern)
            out += [
                Evidence(
                    a.student,
                    b.student,
                    "failing-checks",
                    "code checks",
                    PATTERN_WEIGHT * rarity(len(members), n),
                    f"same failing checks ({text}), shared by {len(members)} of {n} students",
                    text,
                    text,
                    ((0, len(text)),),
                    ((0, len(text)),),
                )
                for a, b in combinations(members, 2)
            ]
    return out
