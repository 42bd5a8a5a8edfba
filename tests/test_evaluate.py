"""python -m curvedoc.evaluate: precision and recall per symptom and part, false alarms on healthy runs, verdicts of
runs too thin to judge, and how often the class count was right; the public logs only where they are on disk."""

import json

import pytest

from curvedoc.evaluate import (
    FINETUNE, FINETUNE_HELD_OUT, HELD_OUT, PUBLIC, TUNING, LabelledSet, Outcome, Scores, chosen_sets, evaluate, main, read_labels, render,
)
from rule_cases import CORPUS, FIXTURES

REPOSITORY = FIXTURES.parent
PUBLIC_DATA = REPOSITORY.parent / "shared"
PUBLIC_LABELS = FIXTURES / "public" / "labels.json"
needs_public_logs = pytest.mark.skipif(not (PUBLIC_DATA / "wild").is_dir(),
                                       reason="the public logs (../shared/wild beside the checkout) are not here")


@pytest.fixture(scope="module")
def corpus_scores() -> Scores:
    return evaluate(LabelledSet("corpus", TUNING, CORPUS / "labels.json", CORPUS))


def test_the_corpus_is_the_tuning_part_and_meets_its_bar(corpus_scores):
    assert corpus_scores.parts() == [TUNING]
    precision, recall = corpus_scores.macro()
    assert precision >= 0.95 and recall >= 0.9
    alarms, healthy = corpus_scores.false_alarm_rate()
    assert healthy == 51 and alarms <= 1


def test_class_counts_read_off_the_curves_are_rarely_wrong_on_the_corpus(corpus_scores):
    counts = corpus_scores.class_counts()
    assert counts.get("curves alone (uncertain): wrong", 0) <= 1 and "curves alone (certain): wrong" not in counts
    assert counts["evidence 'start': right"] >= 20 and "evidence 'start': wrong" not in counts


def test_the_json_report_has_every_part(corpus_scores, capsys):
    assert main([str(CORPUS), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert set(document) == {TUNING}
    assert document[TUNING]["healthy_runs"] == 51 and "class_counts" in document[TUNING]
    assert 0.9 <= document[TUNING]["micro_recall"] <= 1 and "micro_precision" in document[TUNING]


def test_verbose_lists_the_misses_of_development_parts_only():
    scores = Scores([Outcome("dev/run", {"spike"}, set(), False, part=HELD_OUT),
                     Outcome("final/run", {"spike"}, set(), False, part="held-out-final")])
    listed = render(scores, verbose=True)
    assert "[held-out] dev/run: missed ['spike']" in listed and "final/run" not in listed
    assert "runs of held-out-final are not listed" in listed


def test_micro_scores_count_every_label_of_every_run_together():
    scores = Scores([Outcome("a", {"spike"}, {"spike"}, False), Outcome("b", {"spike", "nan_inf"}, {"spike"}, False),
                     Outcome("c", set(), {"overfitting"}, True)])
    assert scores.micro() == (2 / 3, 2 / 3)  # 2 found, 1 false, 1 missed; macro would weigh nan_inf's 0 as a third
    assert "| micro (all labels together) | 0.67 | 0.67 |" in render(scores, verbose=False)


def test_a_labels_file_needs_the_folder_its_keys_are_relative_to(tmp_path, capsys):
    labels = tmp_path / "labels.json"
    labels.write_text(json.dumps({"runs": {}}))
    assert main([str(labels)]) == 2
    assert "needs --data" in capsys.readouterr().err
    assert main([str(tmp_path / "nothing")]) == 2


def test_labels_files_name_their_parts_by_first_folder():
    labels, parts = read_labels(PUBLIC_LABELS)
    assert parts == {"wild": "public", "wild-extra": "public-held-out", "wild-new": "public-new",
                     "wild-fresh": "public-fresh", "wild-s18": "public-s18",
                     "wild-dev2": "public-dev2", "wild-dev3": "public-dev3", "wild-s19": "public-s19",
                     "wild-dev4": "public-dev4", "wild-s20": "public-s20",
                     "wild-dev5": "public-dev5", "wild-dev6": "public-dev6",
                     "wild-dev7": "public-dev7", "wild-dev8": "public-dev8", "wild-dev9": "public-dev9",
                     "wild-dev10": "public-dev10", "wild-dev11": "public-dev11",
                     "wild-s21": "public-s21", "wild-s22": "public-s22",
                     "wild-s23": "public-s23", "wild-dev12": "public-dev12",
                     "wild-dev13": "public-dev13", "wild-s24": "public-s24",
                     "wild-dev14": "public-dev14", "wild-s25": "public-s25", "wild-s26": "public-s26",
                     "wild-dev15": "public-dev15", "wild-s27": "public-s27", "wild-dev16": "public-dev16",
                     "wild-s28": "public-s28", "wild-dev17": "public-dev17", "wild-dev18": "public-dev18",
                     "wild-s29": "public-s29", "wild-dev19": "public-dev19", "wild-s30": "public-s30",
                     "wild-dev20": "public-dev20", "wild-s31": "public-s31", "wild-dev21": "public-dev21",
                     "wild-s32": "public-s32", "wild-s33": "public-s33", "wild-dev22": "public-dev22",
                     "wild-s34": "public-s34", "wild-dev23": "public-dev23", "wild-s35": "public-s35",
                     "wild-s36": "public-s36", "wild-dev24": "public-dev24", "wild-s37": "public-s37",
                     "wild-dev25": "public-dev25", "wild-s38": "public-s38", "wild-dev26": "public-dev26",
                     "wild-s39": "public-s39", "wild-dev27": "public-dev27", "wild-s40": "public-s40",
                     "wild-dev28": "public-dev28", "wild-s41": "public-s41", "wild-dev29": "public-dev29",
                     "wild-s42": "public-s42", "wild-s43": "public-s43", "wild-dev30": "public-dev30",
                     "wild-s44": "public-s44", "wild-s45": "public-s45", "wild-dev32": "public-dev32",
                     "wild-dev31": "public-dev31", "wild-s46": "public-s46", "wild-s47": "public-s47",
                     "wild-s48": "public-s48", "wild-dev33": "public-dev33", "wild-s49": "public-s49",
                     "wild-s50": "public-s50", "wild-dev34": "public-dev34", "wild-dev35": "public-dev35",
                     "wild-s51": "public-s51", "wild-s52": "public-s52", "wild-dev36": "public-dev36",
                     "wild-s53": "public-s53", "wild-s54": "public-s54", "wild-dev37": "public-dev37",
                     "wild-s55": "public-s55", "wild-dev38": "public-dev38", "wild-dev39": "public-dev39",
                     "wild-s56": "public-s56", "wild-dev40": "public-dev40", "wild-s57": "public-s57",
                     "wild-s58": "public-s58", "wild-dev41": "public-dev41", "wild-s59": "public-s59",
                     "wild-dev42": "public-dev42", "wild-s60": "public-s60", "wild-dev43": "public-dev43",
                     "wild-s61": "public-s61", "wild-s62": "public-s62", "wild-dev45": "public-dev45",
                     "wild-dev44": "public-dev44", "wild-dev46": "public-dev46", "wild-s64": "public-s64",
                     "wild-s63": "public-s63", "wild-s65": "public-s65", "wild-dev47": "public-dev47",
                     "wild-s66": "public-s66", "wild-dev48": "public-dev48", "wild-s67": "public-s67",
                     "wild-s68": "public-s68", "wild-dev49": "public-dev49", "wild-s69": "public-s69",
                     "wild-dev50": "public-dev50", "wild-s70": "public-s70", "wild-dev51": "public-dev51",
                     "wild-s71": "public-s71", "wild-dev52": "public-dev52", "wild-s72": "public-s72",
                     "wild-dev53": "public-dev53", "wild-dev54": "public-dev54", "wild-s73": "public-s73",
                     "wild-s74": "public-s74", "wild-dev55": "public-dev55", "wild-dev56": "public-dev56",
                     "wild-s75": "public-s75", "wild-s76": "public-s76", "wild-dev57": "public-dev57",
                     "wild-s77": "public-s77", "wild-dev58": "public-dev58", "wild-s78": "public-s78",
                     "wild-s79": "public-s79", "wild-dev59": "public-dev59", "wild-dev60": "public-dev60",
                     "wild-s80": "public-s80", "wild-dev61": "public-dev61", "wild-s81": "public-s81",
                     "wild-dev62": "public-dev62", "wild-s82": "public-s82", "wild-dev63": "public-dev63",
                     "wild-s83": "public-s83", "wild-dev64": "public-dev64", "wild-s84": "public-s84",
                     "wild-dev65": "public-dev65", "wild-s85": "public-s85", "wild-dev66": "public-dev66",
                     "wild-s86": "public-s86", "wild-dev67": "public-dev67", "wild-s87": "public-s87",
                     "wild-dev68": "public-dev68", "wild-s88": "public-s88",
                     "wild-dev69": "public-dev69", "wild-dev70": "public-dev70", "wild-s89": "public-s89",
                     "wild-dev71": "public-dev71", "wild-s90": "public-s90", "wild-s91": "public-s91",
                     "wild-dev72": "public-dev72", "wild-dev73": "public-dev73", "wild-s92": "public-s92",
                     "wild-dev74": "public-dev74", "wild-s93": "public-s93",
                     "wild-dev75": "public-dev75", "wild-s94": "public-s94", "wild-dev76": "public-dev76",
                     "wild-s95": "public-s95", "wild-dev77": "public-dev77", "wild-s96": "public-s96",
                     "wild-s97": "public-s97", "wild-dev78": "public-dev78", "wild-dev79": "public-dev79",
                     "wild-s98": "public-s98", "wild-dev80": "public-dev80", "wild-s99": "public-s99",
                     "wild-dev81": "public-dev81", "wild-s100": "public-s100", "wild-dev82": "public-dev82",
                     "wild-s101": "public-s101", "wild-dev83": "public-dev83", "wild-s102": "public-s102",
                     "wild-dev84": "public-dev84", "wild-s103": "public-s103", "wild-s104": "public-s104",
                     "wild-dev85": "public-dev85"}
    assert labels and all(not key.startswith("_") for key in labels)
    assert all(set(label) >= {"symptoms", "healthy", "why", "source"} for label in labels.values())


def test_the_default_sets_are_the_parts_the_checkout_has():
    sets = chosen_sets(None, None)
    assert [item.part for item in sets][:1] == [TUNING]
    assert {item.part for item in sets} <= {TUNING, HELD_OUT, FINETUNE, FINETUNE_HELD_OUT, PUBLIC}


@needs_public_logs
def test_public_logs_read_during_development_raise_no_false_alarm():
    scores = evaluate(LabelledSet("public", PUBLIC, PUBLIC_LABELS, PUBLIC_DATA)).of_part("public")
    alarms, healthy = scores.false_alarm_rate()
    assert healthy >= 30 and alarms <= 0.05 * healthy
    precision, _ = scores.macro()
    assert precision >= 0.9
    # only captured stdout in forms the text reader leaves out (Stable-Baselines' | key | value | tables, a bare
    # column of numbers under one name) cannot be read
    assert all(o.path.endswith((".log", ".txt")) for o in scores.outcomes if o.problem)
