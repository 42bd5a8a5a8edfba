"""The engine: registry docs, user settings, the class-count note, findings in the CLI's output."""

import json
from pathlib import Path

import numpy as np
import pytest

from curvedoc.cli import main
from curvedoc.config import load_config
from curvedoc.diagnose import RuleSettings, diagnose_run
from curvedoc.errors import CurvedocError
from curvedoc.model import RunBuilder
from curvedoc.rules import ARCHIVE_SYMPTOMS, REGISTRY, RUN, SYMPTOMS, all_rules

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
DIVERGED = FIXTURES / "tensorboard" / "pytorch" / "lr_too_high"


def test_every_rule_documents_itself():
    for rule in all_rules():
        assert rule.code.startswith("CD") and rule.symptom in (SYMPTOMS if rule.scope == RUN else ARCHIVE_SYMPTOMS)
        assert rule.description and rule.causes and rule.check, rule.code
        assert all(threshold.meaning for threshold in rule.thresholds.values()), rule.code


def test_rules_command_lists_and_explains(capsys):
    assert main(["rules"]) == 0
    listing = capsys.readouterr().out
    assert all(rule.code in listing for rule in all_rules())
    assert main(["rules", "CD101"]) == 0
    explained = capsys.readouterr().out
    assert "Likely causes" in explained and "Cheapest check" in explained
    assert main(["rules", "CD999"]) == 2


def test_findings_in_the_json_contract(capsys):
    main([str(DIVERGED), "--format", "json"])
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    finding = next(f for f in run["findings"] if f["symptom"] == "nan_inf")
    assert set(finding) == {"code", "symptom", "severity", "title", "tags", "step", "step_range", "evidence",
                            "causes", "cheapest_check"}
    assert any("−log(1/10) = 2.303" in step for step in run["first_response"])


def test_rules_can_be_switched_off_by_code_or_symptom(tmp_path, capsys, monkeypatch):
    (tmp_path / "curvedoc.toml").write_text('disable = ["nan_inf"]\n')
    monkeypatch.chdir(tmp_path)
    main([str(DIVERGED), "--format", "json"])
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    assert not any(f["symptom"] == "nan_inf" for f in run["findings"])


def test_threshold_overrides_reach_the_rule():
    builder = RunBuilder("/synthetic", "test")
    # a loss near 0 that dips below it by more than it ever was above: negative by default, rounding when loose
    builder.add("train/loss", np.arange(20), np.r_[np.linspace(0.004, 0, 19), -0.01])
    run = builder.build()
    assert any(f.code == "CD102" for f in diagnose_run(run))
    loose = RuleSettings(thresholds={"CD102": {"tolerance": 0.1}})
    assert not any(f.code == "CD102" for f in diagnose_run(run, loose))


@pytest.mark.parametrize("text,message", [
    ('disable = ["CD9999"]\n', "no rule, code prefix or symptom named 'CD9999'"),
    ("[thresholds.CD102]\nnope = 1\n", "no threshold 'nope'"),
    ('[thresholds.CD102]\ntolerance = "x"\n', "must be a number"),
])
def test_bad_rule_settings_are_one_line_errors_naming_the_file(tmp_path, text, message):
    path = tmp_path / "curvedoc.toml"
    path.write_text(text)
    with pytest.raises(CurvedocError, match=message) as error:
        load_config(path)
    assert str(path) in str(error.value)


def test_a_failing_rule_becomes_a_warning_not_a_crash(monkeypatch):
    rule = REGISTRY["CD102"]

    def broken(run, limits):
        raise ZeroDivisionError("boom")

    monkeypatch.setitem(REGISTRY, "CD102", rule.__class__(**{**rule.__dict__, "detect": broken}))
    builder = RunBuilder("/synthetic", "test")
    builder.add("train/loss", np.arange(3), [1.0, 0.5, 0.2])
    run = builder.build()
    diagnose_run(run)
    assert any("CD102" in warning and "boom" in warning for warning in run.warnings)


def test_an_agents_run_gets_an_agents_first_response():
    """Overfitting one batch and comparing the step-0 loss with −log(1/n) say nothing of an agent: it is asked
    whether it beats a random policy, what rewards it sees, and what its policy's entropy and KL did."""
    from curvedoc.diagnose import first_response

    builder = RunBuilder("/synthetic", "test")
    builder.add("rollout/ep_rew_mean", np.arange(50), np.r_[np.linspace(0, 100, 30), np.full(20, 5.0)])
    run = builder.build()
    moves = first_response(run)
    assert any("random one" in move for move in moves) and not any("log(1/" in move for move in moves)


def test_a_detectors_run_gets_a_detectors_first_response():
    """A detector's box, objectness and class terms start nowhere near −log(1/n): it is asked to show its boxes on
    its images, its class list against its labels, and that it can fit ten images."""
    from curvedoc.diagnose import first_response

    builder = RunBuilder("/synthetic", "test")
    for tag in ("train/box_loss", "train/cls_loss", "val/box_loss"):
        builder.add(tag, np.arange(30), np.linspace(1.5, 0.8, 30))
    moves = first_response(builder.build())
    assert any("ground-truth boxes" in move for move in moves) and not any("log(1/" in move for move in moves)


def test_a_class_count_read_off_the_curves_is_named_as_such_in_the_first_response():
    """A run that records no class count but starts at ln 10 and never moves: the chance level the findings and the
    first response compute says it rests on a count read off the curves."""
    from curvedoc.diagnose import first_response

    rng = np.random.default_rng(0)
    builder = RunBuilder("/synthetic", "test")
    builder.add("train_loss", np.arange(60), 2.3026 + 0.002 * rng.standard_normal(60))
    builder.add("val_loss", np.arange(0, 60, 6), 2.3026 + 0.001 * rng.standard_normal(10))
    run = builder.build()
    findings = diagnose_run(run)
    assert findings and run.meta.n_classes is None and run.meta.assumed_n_classes == 10
    assert any("10 classes read off the curves" in step for step in first_response(run))
