"""course.grading.item_stats: a textbook's worked example, ties, zero variance and small classes."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from course.grading.item_stats import (
    correlation,
    cronbach_alpha,
    describe_item,
    describe_test,
    fails_only_with,
    group_weights,
    upper_lower,
)

# Denis, D. J. (2016). Applied Univariate, Bivariate, and Multivariate Statistics. Wiley. Chapter 1, the
# reliability example: five items, ten people, analysed with SPSS RELIABILITY /MODEL=ALPHA /SUMMARY=TOTAL.
DENIS = np.array(
    [
        [10, 12, 15, 11, 12],
        [12, 18, 12, 12, 1],
        [8, 16, 14, 14, 4],
        [6, 8, 16, 8, 6],
        [4, 7, 8, 7, 5],
        [6, 6, 3, 7, 3],
        [3, 4, 6, 5, 8],
        [7, 3, 7, 9, 9],
        [8, 9, 4, 10, 10],
        [9, 5, 6, 11, 12],
    ],
    float,
)
# What the book prints: Cronbach's alpha 0.633; item statistics (mean, SD); the inter-item correlation matrix; and
# Item_1's row of Item-Total Statistics: scale mean if deleted 34.3000, scale variance if deleted 108.900,
# corrected item-total correlation 0.712.
DENIS_ALPHA = 0.633
DENIS_MEANS = [7.3, 8.8, 9.1, 9.4, 7.0]
DENIS_SDS = [2.71006, 5.05085, 4.74810, 2.71621, 3.80058]
DENIS_R = np.array(
    [
        [1.000, 0.679, 0.351, 0.827, 0.022],
        [0.679, 1.000, 0.612, 0.743, -0.463],
        [0.351, 0.612, 1.000, 0.462, -0.129],
        [0.827, 0.743, 0.462, 1.000, -0.011],
        [0.022, -0.463, -0.129, -0.011, 1.000],
    ]
)


def test_the_textbook_example_gives_its_published_alpha_and_discriminations():
    test, items = describe_test(DENIS, [20] * 5, pass_line=30)
    assert round(test.alpha, 3) == DENIS_ALPHA
    assert [round(i.mean, 4) for i in items] == DENIS_MEANS
    assert [round(i.sd, 5) for i in items] == DENIS_SDS
    assert round(items[0].discrimination, 3) == 0.712  # Item_1's corrected item-total correlation, as printed
    rest = DENIS.sum(axis=1) - DENIS[:, 0]
    assert (round(rest.mean(), 4), round(rest.var(ddof=1), 3)) == (34.3, 108.9)
    # the other items' corrected item-total correlations, from the printed correlations and SDs alone: the item's
    # covariance with the rest over the rest's SD (three printed decimals carry through to about ±0.003)
    cov = DENIS_R * np.outer(DENIS_SDS, DENIS_SDS)
    for j, item in enumerate(items):
        others = [i for i in range(5) if i != j]
        published = cov[j, others].sum() / (np.sqrt(cov[j, j]) * np.sqrt(cov[np.ix_(others, others)].sum()))
        assert item.discrimination == pytest.approx(published, abs=0.003)
    assert items[4].discrimination < 0  # Item_5 runs against the rest: the book's point about deleting it
    assert items[4].alpha_if_deleted > test.alpha


def test_figures_equal_scipy_and_plain_numpy():
    rng = np.random.default_rng(5)
    scores = rng.integers(0, 3, size=(37, 6)).astype(float)
    test, items = describe_test(scores, [2] * 6, pass_line=6)
    totals = scores.sum(axis=1)
    k = scores.shape[1]
    alpha = k / (k - 1) * (1 - scores.var(axis=0, ddof=1).sum() / totals.var(ddof=1))
    assert test.alpha == pytest.approx(alpha, abs=1e-12)
    assert test.sem == pytest.approx(totals.std(ddof=1) * np.sqrt(1 - alpha), abs=1e-12)
    assert test.pass_rate == pytest.approx((totals >= 6).mean(), abs=1e-12)
    for j, item in enumerate(items):
        assert item.discrimination == pytest.approx(np.corrcoef(scores[:, j], totals - scores[:, j])[0, 1], abs=1e-12)
        kept = np.delete(scores, j, axis=1)
        assert item.alpha_if_deleted == pytest.approx(cronbach_alpha(kept), abs=1e-12)


def test_a_right_or_wrong_item_is_the_point_biserial_correlation():
    item = np.array([1, 0, 1, 1, 0, 1, 0, 0, 1, 1], float)
    rest = np.array([9, 3, 7, 8, 4, 6, 5, 2, 9, 7], float)
    assert correlation(item, rest)[0] == pytest.approx(stats.pointbiserialr(item, rest).statistic, abs=1e-12)


def test_no_variance_gives_no_discrimination_and_says_why():
    everyone = describe_item([1, 1, 1, 1], 1, [3, 4, 5, 6], [4, 5, 6, 7])
    assert everyone.discrimination is None and "this item" in everyone.no_variance
    assert everyone.facility == 1 and everyone.sd == 0
    flat_rest = describe_item([1, 0, 1, 0], 1, [3, 3, 3, 3], [4, 3, 4, 3])
    assert flat_rest.discrimination is None and "rest of the test" in flat_rest.no_variance
    assert cronbach_alpha(np.ones((5, 3))) is None  # totals without variance: no alpha, never NaN
    assert describe_item([1], 1, [2], [3]).sd is None


def test_ties_at_the_group_boundary_share_the_places():
    totals = np.array([10, 9, 9, 9, 5, 4, 3, 3, 3, 1], float)  # g = round(2.7) = 3
    upper, lower, g = group_weights(totals)
    assert g == 3
    assert upper.tolist() == [1, 2 / 3, 2 / 3, 2 / 3, 0, 0, 0, 0, 0, 0]
    assert lower.tolist() == [0, 0, 0, 0, 0, 0, 2 / 3, 2 / 3, 2 / 3, 1]
    item = np.array([1, 1, 0, 1, 0, 0, 1, 0, 0, 0], float)
    # the same whichever order the tied students come in
    assert upper_lower(item, totals, 1) == pytest.approx(
        upper_lower(item[[0, 3, 2, 1, 4, 5, 8, 7, 6, 9]], totals[[0, 3, 2, 1, 4, 5, 8, 7, 6, 9]], 1)
    )
    assert upper_lower(item, totals, 1) == pytest.approx((1 + 2 / 3 * 2) / 3 - (2 / 3) / 3)


def test_a_check_that_fails_only_with_another_is_named():
    a = np.array([True, False, True, False])
    b = np.array([True, True, True, False])
    never = np.array([False] * 4)
    assert fails_only_with({"a": a, "b": b, "never": never}) == {"a": "b"}
