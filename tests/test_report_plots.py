"""Plots: the key curves of a run with each finding's evidence drawn where it is."""

import io
import math
import warnings
from pathlib import Path

import matplotlib
import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Polygon, Rectangle
from matplotlib.text import Text

import curvedoc
from curvedoc.diagnose import diagnose_run
from curvedoc.model import RunBuilder
from curvedoc.report.plots import MAX_PLOT_POINTS, figure_for_run
from curvedoc.rules import Finding

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "corpus"


def texts(figure: Figure) -> str:
    return "\n".join(text.get_text() for text in figure.findobj(Text))


def drawn(figure: Figure) -> None:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=40)
    assert buffer.tell() > 1000


def synthetic(tags: dict[str, np.ndarray], n_classes: int | None = None):
    builder = RunBuilder("/tmp/run", "csv")
    for tag, values in tags.items():
        builder.add(tag, np.arange(len(values)), np.asarray(values, dtype=float))
    if n_classes:
        builder.meta.n_classes, builder.meta.n_classes_source = n_classes, "test"
    run = builder.build()
    diagnose_run(run)
    return run


def test_first_nan_step_is_marked_on_a_real_run():
    (run,) = curvedoc.diagnose(CORPUS / "nan_inf" / "fp16_overflow")
    nan = next(finding for finding in run.findings if finding.symptom == "nan_inf")
    figure = curvedoc.plot(run)
    assert isinstance(figure, Figure)
    assert f"first NaN/Inf: step {nan.step}" in texts(figure)
    assert f"NaN from step {nan.step}" in texts(figure)
    loss_axes = figure.axes[0]
    assert any(list(line.get_xdata()) == [nan.step, nan.step] for line in loss_axes.get_lines())
    drawn(figure)


def test_best_validation_step_says_stop_here():
    (run,) = curvedoc.diagnose(CORPUS / "overfitting" / "diabetes_mse_epochs")
    overfit = next(finding for finding in run.findings if finding.symptom == "overfitting")
    figure = figure_for_run(run, [overfit], focused=True)
    assert f"best validation, step {overfit.step}: stop here" in texts(figure)
    drawn(figure)


def test_chance_line_and_plateau_band():
    steps = 300
    flat = math.log(10) + 0.01 * np.sin(np.arange(steps))
    run = synthetic({"train/loss": flat, "val/loss": flat[::1] + 0.001}, n_classes=10)
    assert run.findings, "a loss flat at chance is a finding"
    figure = figure_for_run(run)
    loss_axes = figure.axes[0]
    horizontal = [line for line in loss_axes.get_lines() if len(set(line.get_ydata())) == 1 and len(line.get_ydata()) == 2]
    assert any(math.isclose(line.get_ydata()[0], math.log(10)) for line in horizontal)
    assert "chance −log(1/10)" in texts(figure)
    banded = [finding for finding in run.findings if finding.step_range]
    assert banded and any(isinstance(patch, (Polygon, Rectangle)) and patch.get_alpha() == 0.08
                          for patch in loss_axes.patches)
    drawn(figure)


def test_wide_ranging_loss_is_log_scaled_and_long_curves_downsampled():
    count = 100_000
    loss = np.geomspace(1000, 0.01, count)
    loss[70_000] = 5000.0  # a spike the downsampling must keep
    run = synthetic({"train/loss": loss, "lr": np.full(count, 0.1)})
    figure = figure_for_run(run)
    loss_axes = figure.axes[0]
    assert loss_axes.get_yscale() == "log"
    line = loss_axes.get_lines()[0]
    assert len(line.get_xdata()) <= MAX_PLOT_POINTS + 10 and 5000.0 in line.get_ydata()
    assert len(figure.axes) == 2  # loss + learning rate


def test_log_text_is_drawn_literally_and_never_breaks_drawing():
    tags = {"$\\frac{a}{$": np.linspace(2, 1, 20), "_hidden/loss": np.linspace(2, 1, 20),
            "<script>alert(1)</script>": np.linspace(1, 2, 20), "a\nb|c": np.linspace(1, 2, 20),
            "\x1b[31mred loss": np.linspace(2, 1, 20)}
    run = synthetic(tags)
    findings = [Finding("CD999", "spike", "warning", "made up", list(tags), step=5, step_range=(3, 8))]
    figure = figure_for_run(run, findings)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a control character would be a "missing glyph" warning
        drawn(figure)  # mathtext would raise on the unbalanced "$" if it were interpreted
    legend_texts = "\n".join(text.get_text() for axes in figure.axes if axes.get_legend()
                             for text in axes.get_legend().get_texts())
    assert "hidden/loss" in legend_texts and "<script>alert(1)</script>" in legend_texts
    assert "?[31mred loss" in legend_texts


def test_a_run_without_key_curves_gets_a_note_not_an_error():
    run = synthetic({"examples_per_second": np.ones(5)})
    run.findings = []
    figure = figure_for_run(run)
    drawn(figure)
    assert "no loss, accuracy, learning-rate or gradient curve logged" in texts(figure)


def test_plotting_leaves_the_users_backend_alone():
    before = matplotlib.get_backend()
    figure_for_run(synthetic({"loss": np.linspace(2, 1, 10)}))
    assert matplotlib.get_backend() == before


def test_the_chance_line_of_an_accuracy_logged_in_percent_is_in_percent():
    from curvedoc.features import RunCurves
    from curvedoc.report.chart import chart_panels, reference_line

    run = synthetic({"train/loss": np.linspace(2.3, 0.5, 50), "val/acc": np.linspace(12.0, 91.0, 50)}, n_classes=10)
    curves = RunCurves(run)
    (accuracy,) = [panel for panel in chart_panels(curves, []) if panel.title == "accuracy"]
    assert reference_line(curves, accuracy) == (10.0, "")
