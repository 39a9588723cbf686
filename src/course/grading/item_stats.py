"""Item analysis of one lesson's class: classical test theory over a students × items score matrix.

Pure functions (numpy, scipy), no gradebook: course.grading.item_data reads the scores, course.grading.item_analysis
names the items and decides the flags. The formulas are written out in docs/instructors.md (item analysis); where
a figure is undefined (an item nobody or everybody got has no variance, so no correlation), it is None and the
reports say why, never NaN.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

UPPER_LOWER_SHARE = 0.27  # Kelley's upper and lower groups: the top and bottom 27 % by total
LOW_DISCRIMINATION = 0.2  # below this an item separates strong from weak students too little to trust
RELIABLE_N = 10  # fewer students than this: figures shown, marked unreliable


@dataclass(frozen=True)
class ItemFigures:
    """One item's figures over the students who have a score for it."""

    n: int
    max_points: float
    mean: float | None
    facility: float | None  # mean / max points
    sd: float | None  # sample standard deviation (n − 1)
    discrimination: float | None  # Pearson r of the item with the rest of the test (None: a side has no variance)
    upper_lower: float | None  # (mean of the top 27 % − mean of the bottom 27 %) / max points
    alpha_if_deleted: float | None = None  # Cronbach's alpha of the test without this item (test items only)
    no_variance: str = ""  # which side had no variance, when discrimination is None for that reason


@dataclass(frozen=True)
class TestFigures:
    """The whole test: the totals' figures and its reliability."""

    n: int
    items: int
    max_points: float
    mean: float | None
    sd: float | None
    alpha: float | None  # Cronbach's alpha (None: fewer than 2 items, or the totals have no variance)
    sem: float | None  # standard error of measurement: SD × √(1 − alpha)
    pass_line: float
    pass_rate: float | None  # share of totals at or above the pass line


def sample_sd(values: np.ndarray) -> float | None:
    """The sample standard deviation (ddof 1), None below two values."""
    return float(np.std(values, ddof=1)) if len(values) >= 2 else None


def cronbach_alpha(scores: np.ndarray) -> float | None:
    """k / (k − 1) × (1 − Σ var(item) / var(total)) over a complete students × items matrix, sample variances."""
    scores = np.asarray(scores, dtype=float)
    if scores.ndim != 2 or scores.shape[1] < 2 or scores.shape[0] < 2:
        return None
    k = scores.shape[1]
    total_var = float(np.var(scores.sum(axis=1), ddof=1))
    if total_var == 0:
        return None
    return k / (k - 1) * (1 - float(np.var(scores, axis=0, ddof=1).sum()) / total_var)


def correlation(item: np.ndarray, other: np.ndarray) -> tuple[float | None, str]:
    """Pearson r (the point-biserial r when ITEM is right/wrong), or None and which side has no variance."""
    item, other = np.asarray(item, dtype=float), np.asarray(other, dtype=float)
    if len(item) < 2:
        return None, "fewer than two students"
    if np.ptp(item) == 0:
        return None, "every student scored the same on this item"
    if np.ptp(other) == 0:
        return None, "every student scored the same on the rest of the test"
    return float(stats.pearsonr(item, other).statistic), ""


def group_weights(totals: np.ndarray, share: float = UPPER_LOWER_SHARE) -> tuple[np.ndarray, np.ndarray, float]:
    """Each student's weight in the upper and the lower group, and the group size g = round(share × n).

    Students tied with the last place of a group share its remaining places equally (each tied student counts
    that fraction), so the index never depends on the order ties happen to be listed in.
    """
    totals = np.asarray(totals, dtype=float)
    g = int(round(share * len(totals)))

    def weights(ordered_desc: bool) -> np.ndarray:
        key = -totals if ordered_desc else totals
        if g == 0:
            return np.zeros(len(totals))
        cut = np.sort(key)[g - 1]
        inside, tied = key < cut, key == cut
        w = inside.astype(float)
        w[tied] = (g - inside.sum()) / tied.sum()
        return w

    return weights(True), weights(False), float(g)


def upper_lower(
    item: np.ndarray, totals: np.ndarray, max_points: float, share: float = UPPER_LOWER_SHARE
) -> float | None:
    """(mean item score of the top group − that of the bottom group) / max points; None without two groups."""
    upper, lower, g = group_weights(totals, share)
    if g == 0 or max_points <= 0:
        return None
    item = np.asarray(item, dtype=float)
    index = float((upper @ item - lower @ item) / g / max_points)
    return index if abs(index) > 1e-12 else 0.0  # shared places leave rounding dust where the groups score alike


def describe_item(
    item: Sequence[float], max_points: float, rest: Sequence[float], totals: Sequence[float]
) -> ItemFigures:
    """An item's figures: REST is what it is correlated with (the total without it), TOTALS rank the groups."""
    item, rest, totals = (np.asarray(v, dtype=float) for v in (item, rest, totals))
    n = len(item)
    mean = float(item.mean()) if n else None
    r, why = correlation(item, rest)
    return ItemFigures(
        n,
        max_points,
        mean,
        None if mean is None or max_points <= 0 else mean / max_points,
        sample_sd(item),
        r,
        upper_lower(item, totals, max_points) if n else None,
        None,
        why,
    )


def describe_test(
    scores: np.ndarray, max_points: Sequence[float], pass_line: float, totals: Sequence[float] | None = None
) -> tuple[TestFigures, list[ItemFigures]]:
    """The test's figures and each scored item's (with alpha if deleted) over a complete matrix.

    TOTALS default to the row sums; the pass rate uses them.
    """
    scores = np.asarray(scores, dtype=float).reshape(len(scores), len(max_points))
    n, k = scores.shape
    sums = scores.sum(axis=1)
    totals = sums if totals is None else np.asarray(totals, dtype=float)
    items = []
    for j in range(k):
        figures = describe_item(scores[:, j], max_points[j], sums - scores[:, j], sums)
        without = cronbach_alpha(np.delete(scores, j, axis=1)) if k > 2 else None
        items.append(ItemFigures(**{**figures.__dict__, "alpha_if_deleted": without}))
    alpha = cronbach_alpha(scores)
    sd = sample_sd(sums)
    sem = None if alpha is None or sd is None else sd * math.sqrt(max(0.0, 1 - alpha))
    return TestFigures(
        n,
        k,
        float(sum(max_points)),
        float(sums.mean()) if n else None,
        sd,
        alpha,
        sem,
        pass_line,
        float((totals >= pass_line - 1e-9).mean()) if n else None,
    ), items


def fails_only_with(failures: dict[str, np.ndarray]) -> dict[str, str]:
    """Check → another check it fails only together with (its failures a subset of the other's): redundant.

    FAILURES: check → boolean array over the same students (True: failed). A check that never fails is nobody's
    shadow; of two checks with the same failures, each names the other.
    """
    found = {}
    for name, fails in failures.items():
        if not fails.any():
            continue
        for other, other_fails in failures.items():
            if other != name and not (fails & ~other_fails).any():
                found[name] = other
                break
    return found
