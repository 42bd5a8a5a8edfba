"""The rank trend every "still moving / flat" judgement uses: numpy mean ranks that match scipy's rankdata."""

from statistics import NormalDist

import numpy as np
import pytest
from scipy.stats import kendalltau, rankdata

from curvedoc.features import mean_ranks, rank_trend_z


@pytest.mark.parametrize("values", [
    np.array([3.0]), np.array([2.0, 2.0]), np.array([1.0, 3.0, 2.0]),
    np.random.default_rng(0).standard_normal(1000),
    np.random.default_rng(1).integers(0, 4, 500).astype(float),  # many ties: each shares its mean rank
    np.array([np.inf, 1.0, -np.inf, 1.0]),
])
def test_mean_ranks_are_scipys(values):
    assert np.array_equal(mean_ranks(values), rankdata(values))


def test_a_constant_curve_has_no_trend_and_a_falling_one_a_strong_one():
    assert rank_trend_z(np.full(50, 0.69)) == 0.0
    assert rank_trend_z(np.linspace(2.3, 0.1, 50)) < -6


def test_a_few_points_that_only_rise_are_a_trend_beyond_three_sigma():
    # ρ·√(N−1) tops out at √6 = 2.45 on 7 points; chance orders 7 distinct values this way once in 7! = 5,040
    rising = np.array([0.925, 0.929, 0.964, 0.981, 1.017, 1.064, 1.093])
    assert rank_trend_z(rising) == pytest.approx(NormalDist().inv_cdf(1 - 1 / 5040))
    assert rank_trend_z(rising[::-1]) == pytest.approx(-rank_trend_z(rising))


def test_the_exact_trend_matches_kendalls_test():
    values = np.array([0.925, 0.929, 0.964, 1.027, 1.017, 1.064, 1.093, 1.02, 1.11])
    exact = kendalltau(np.arange(len(values)), values, method="exact", alternative="greater").pvalue
    assert rank_trend_z(values) == pytest.approx(NormalDist().inv_cdf(1 - exact))


def test_tied_values_keep_the_spearman_approximation():
    tied = np.array([1.0, 1.0, 2.0, 3.0, 3.0, 4.0])
    ranks = rankdata(tied)
    assert rank_trend_z(tied) == pytest.approx(np.corrcoef(ranks, np.arange(6))[0, 1] * np.sqrt(5))
