"""The rank trend every "still moving / flat" judgement uses: numpy mean ranks that match scipy's rankdata."""

import numpy as np
import pytest
from scipy.stats import rankdata

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
