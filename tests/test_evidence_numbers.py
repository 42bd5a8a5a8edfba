"""How findings write their numbers: as a reader of the log would write them, and never as a figure that hides the
number it stands for (-0.0% for a curve that did move, 2.754e+04 for a reward of 27,540)."""

from __future__ import annotations

import math

import numpy as np
from rule_cases import synthetic

from curvedoc.diagnose import diagnose_run
from curvedoc.features import counted, fmt, fmt_change


def test_numbers_keep_four_significant_digits_and_group_those_a_log_prints_whole():
    assert fmt(0.0001234) == "0.0001234" and fmt(2.3026) == "2.303" and fmt(9999.4) == "9999"
    assert fmt(27540) == "27,540" and fmt(-45678) == "-45,680" and fmt(9999.5) == "10,000"
    assert fmt(197_900.3) == "197,900" and fmt(123_456_789) == "123,500,000"
    assert fmt(2e9) == "2e+09" and fmt(math.nan) == "nan" and fmt(-math.inf) == "-inf" and fmt(0.0) == "0"
    # ratios are written to three digits, grouped the same way: a rise of 31,300 noise σ, not 3.13e+04
    assert fmt(31_300.4, 3) == "31,300" and fmt(3.14159, 3) == "3.14" and fmt(0.000123, 3) == "0.000123"


def test_a_small_change_keeps_its_digits():
    assert fmt_change(-0.00005) == "-0.005%" and fmt_change(0.0123) == "+1.2%" and fmt_change(0.0) == "+0.0%"
    assert fmt_change(-0.001) == "-0.1%"


def test_counts_agree_with_their_noun():
    assert counted(1, "point") == "1 point" and counted(3, "step") == "3 steps" and counted(0, "step") == "0 steps"


def test_a_flat_loss_says_how_little_it_moved():
    """A public Lightning run's loss went 0.7438 → 0.7437 over 80 epochs: "-0.0%" read as no change at all, and the
    finding is exactly that it changed so little."""
    loss = 0.7438 - 0.0001 * np.linspace(0, 1, 80)
    (finding,) = [f for f in diagnose_run(synthetic({"train_loss": loss})) if f.code == "CD301"]
    assert "-0.013%" in " ".join(finding.evidence) and "-0.0%" not in " ".join(finding.evidence)


def test_a_spike_back_the_next_step_says_one_step():
    rng = np.random.default_rng(2)
    loss = 2.0 * np.exp(-np.arange(30) / 6) + 0.3 + 0.01 * rng.standard_normal(30)
    loss[20] = 3.0
    (finding,) = [f for f in diagnose_run(synthetic({"train_loss": loss})) if f.code == "CD402"]
    assert "(1 step after the peak)" in " ".join(finding.evidence)
