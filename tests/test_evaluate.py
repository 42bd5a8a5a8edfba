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
PUBLIC_LABELS = FIXTURES / "public" / "labels"
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


def test_the_public_parts_are_pooled_development_apart_from_final():
    scores = Scores([Outcome("a", {"spike"}, {"spike"}, False, part="public-dev2"),
                     Outcome("b", set(), {"spike"}, True, part="public-dev3"),
                     Outcome("c", {"overfitting"}, set(), False, part="public-s21"),
                     Outcome("d", set(), set(), True, part=TUNING)])
    pooled = scores.pooled()
    assert [len(group.outcomes) for group in pooled.values()] == [2, 1]
    assert pooled["public development (pooled)"].totals() == (1, 1, 0)
    listed = render(scores, verbose=False)
    assert ("public development (pooled): 2 runs; 1 found, 1 false, 0 missed; macro 0.50 / 1.00, micro 0.50 / 1.00; "
            "healthy runs alarmed 1 of 1") in listed
    assert "public FINAL (pooled): 1 runs; 0 found, 0 false, 1 missed" in listed


def test_the_runs_labelled_with_high_confidence_are_pooled_again_on_their_own():
    """Two careful labellers disagree on many runs; the labeller marks those "medium". The runs it marks "high"
    are scored apart as well, FINAL apart from development, so a reader sees how the rules do where the curves
    leave no doubt."""
    scores = Scores([Outcome("a", {"spike"}, {"spike"}, False, part="public-dev2", confidence="high"),
                     Outcome("b", set(), {"oscillation"}, True, part="public-dev3", confidence="medium"),
                     Outcome("c", {"overfitting"}, set(), False, part="public-s21", confidence="medium")])
    pooled = scores.pooled()
    assert list(pooled) == ["public development (pooled)", "public FINAL (pooled)",
                            "public development, high-confidence labels"]
    assert pooled["public development, high-confidence labels"].totals() == (1, 0, 0)
    assert ("public development, high-confidence labels: 1 runs; 1 found, 0 false, 0 missed"
            in render(scores, verbose=False))


def test_where_a_second_labeller_labelled_a_run_it_is_judged_on_what_both_agree_on(tmp_path):
    """A symptom both labellers list is expected; one only one of them lists is neither expected nor false,
    reported or not; the run is healthy only when both say so."""
    data = tmp_path / "shared"
    for name in ("a", "b"):
        (data / "wild-dev4" / name).mkdir(parents=True)
        (data / "wild-dev4" / name / "metrics.csv").write_text(
            "epoch,train_loss,val_loss\n" + "".join(f"{e},{1 / (e + 1):.4f},{1 / (e + 1) + 0.01 * e * e:.4f}\n"
                                                    for e in range(12)))
    labels, second = tmp_path / "public" / "labels", tmp_path / "public" / "second_labels"
    for folder, runs in ((labels, {"a": ["overfitting", "oscillation"], "b": []}),
                         (second, {"a": ["overfitting"], "b": ["spike"]})):
        folder.mkdir(parents=True)
        (folder / "wild-dev4.json").write_text(json.dumps({"_parts": {"wild-dev4": "public-dev4"}, "runs": {
            f"wild-dev4/{name}/metrics.csv": {"symptoms": symptoms, "healthy": not symptoms}
            for name, symptoms in runs.items()}}))
    scores = evaluate(LabelledSet("public", PUBLIC, labels, data))
    agreed = scores.pooled()["public development, where two labellers agree"]
    by_run = {o.path.split("/")[1]: o for o in agreed.outcomes}
    assert by_run["a"].expected == {"overfitting"} and "overfitting" in by_run["a"].detected
    assert by_run["b"].expected == set() and not by_run["b"].healthy
    assert "oscillation" not in agreed.per_symptom()


def test_the_second_labeller_is_scored_by_the_first_beside_the_diagnosis_on_the_same_runs():
    """How well one careful labeller's reading matches another's bounds how well any diagnosis can be shown to
    match either: the second labeller is scored by the first as the diagnosis is, over the runs both labelled."""
    twice = {"part": "public-dev4"}
    scores = Scores([Outcome("a", {"overfitting", "oscillation"}, {"overfitting"}, False, **twice,
                             second=({"overfitting"}, False)),
                     Outcome("b", set(), set(), True, **twice, second=({"spike"}, False)),
                     Outcome("c", {"spike"}, {"spike"}, False, part="public-dev5")])
    pooled = scores.pooled()
    second = pooled["public development, labelled twice: the second labeller judged by the first"]
    diagnosis = pooled["public development, labelled twice: the diagnosis judged by the first labeller"]
    assert (second.totals(), second.false_alarm_rate()) == ((1, 1, 1), (1, 1))
    assert (diagnosis.totals(), diagnosis.false_alarm_rate()) == ((1, 0, 1), (0, 1))
    assert ("public development, labelled twice: the second labeller judged by the first: 2 runs; 1 found, 1 false, "
            "1 missed" in render(scores, verbose=False))


def test_a_labels_file_needs_the_folder_its_keys_are_relative_to(tmp_path, capsys):
    labels = tmp_path / "labels.json"
    labels.write_text(json.dumps({"runs": {}}))
    assert main([str(labels)]) == 2
    assert "needs --data" in capsys.readouterr().err
    assert main([str(tmp_path / "nothing")]) == 2


def test_a_public_run_whose_logs_are_not_on_this_machine_is_left_out_not_missed(tmp_path, capsys):
    """A machine that restored only some of the public logs scores those it has, and says how many it left out."""
    folder, data = tmp_path / "labels", tmp_path / "shared"
    folder.mkdir()
    (data / "wild-a").mkdir(parents=True)
    (data / "wild-a" / "metrics.csv").write_text("epoch,loss,val_loss\n" + "".join(
        f"{epoch},{2 / (epoch + 1):.4f},{2.1 / (epoch + 1):.4f}\n" for epoch in range(12)))
    (folder / "_parts.json").write_text(json.dumps({"_parts": {"wild-a": "public-a", "wild-b": "public-b"}}))
    (folder / "wild-a.json").write_text(json.dumps({"runs": {
        "wild-a/metrics.csv": {"symptoms": [], "healthy": True},
        "wild-a/gone.csv": {"symptoms": ["spike"], "healthy": False}}}))
    (folder / "wild-b.json").write_text(json.dumps({"runs": {"wild-b/x.csv": {"symptoms": ["nan_inf"]}}}))
    scores = evaluate(LabelledSet("public", PUBLIC, folder, data))
    assert [o.path for o in scores.outcomes] == ["wild-a/metrics.csv"]
    assert sorted(o.path for o in scores.absent) == ["wild-a/gone.csv", "wild-b/x.csv"]
    assert scores.per_symptom() == {}  # the absent run's spike is no miss
    listed = render(scores, verbose=False)
    assert "public-a: 1 runs (1 more labelled, not on this machine)" in listed
    assert "left out: 2 labelled public runs whose logs are not on this machine (none of public-b)" in listed
    assert main([str(folder), "--data", str(data), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["public-a"]["absent"] == 1


def test_a_run_of_our_own_corpus_missing_from_the_checkout_is_unreadable_not_absent(tmp_path):
    (tmp_path / "labels.json").write_text(json.dumps({"gone/run": {"symptoms": ["spike"], "healthy": False}}))
    scores = evaluate(tmp_path)
    assert not scores.absent and scores.outcomes[0].problem
    assert scores.per_symptom()["spike"]["fn"] == 1


# Every labelled folder but wild and wild-extra is wild-X, part public-X: the X, in the order the parts were added
PLAIN_PARTS = ("new fresh s18 dev2 dev3 s19 dev4 s20 dev5 dev6 dev7 dev8 dev9 dev10 dev11 s21 s22 s23 dev12 dev13 "
               "s24 dev14 s25 s26 dev15 s27 dev16 s28 dev17 dev18 s29 dev19 s30 dev20 s31 dev21 s32 s33 dev22 s34 "
               "dev23 s35 s36 dev24 s37 dev25 s38 dev26 s39 dev27 s40 dev28 s41 dev29 s42 s43 dev30 s44 s45 dev32 "
               "dev31 s46 s47 s48 dev33 s49 s50 dev34 dev35 s51 s52 dev36 s53 s54 dev37 s55 dev38 dev39 s56 dev40 "
               "s57 s58 dev41 s59 dev42 s60 dev43 s61 s62 dev45 dev44 dev46 s64 s63 s65 dev47 s66 dev48 s67 s68 "
               "dev49 s69 dev50 s70 dev51 s71 dev52 s72 dev53 dev54 s73 s74 dev55 dev56 s75 s76 dev57 s77 dev58 s78 "
               "s79 dev59 dev60 s80 dev61 s81 dev62 s82 dev63 s83 dev64 s84 dev65 s85 dev66 s86 dev67 s87 dev68 s88 "
               "dev69 dev70 s89 dev71 s90 s91 dev72 dev73 s92 dev74 s93 dev75 s94 dev76 s95 dev77 s96 s97 dev78 "
               "dev79 s98 dev80 s99 dev81 s100 dev82 s101 dev83 s102 dev84 s103 s104 dev85 dev86 s105 s106 dev87 s107 "
               "dev88 s108 dev89 s109 dev90 s110 dev91 s111 s112 dev92 dev93 s113 s114 dev94 dev95 s115 s116 dev96 "
               "dev97 s117 s118 dev98 dev99 s119 s120 dev100 dev101 s121 s122 dev102 dev103 s123 s124 dev104 dev105 "
               "dev106 dev107 s125 s126 dev108 dev109 s127 s128 dev110 dev111 s129 s130 s131 s132 dev112 dev113 "
               "s133 s134 dev114 dev115 s135 s136 dev116 dev117 s137 s138 s139 s140 dev118 dev119 dev120 "
               "dev121 s141 dev122 s142 dev123")


def test_labels_files_name_their_parts_by_first_folder():
    labels, parts = read_labels(PUBLIC_LABELS)
    assert parts == {"wild": "public", "wild-extra": "public-held-out",
                     **{f"wild-{name}": f"public-{name}" for name in PLAIN_PARTS.split()}}
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


def test_a_folder_of_labels_files_reads_as_one_labels_file(tmp_path):
    """The public labels keep one small file per log folder and the parts map in a file of its own: read together
    they are the labels one file would hold."""
    folder = tmp_path / "labels"
    folder.mkdir()
    (folder / "_parts.json").write_text(json.dumps({"_about": "…", "_parts": {"wild-a": "public-a"}, "runs": {}}))
    (folder / "wild-a.json").write_text(json.dumps({"runs": {"wild-a/x.csv": {"symptoms": [], "healthy": True}}}))
    spiked = {"wild-b/y.csv": {"symptoms": ["spike"], "healthy": False}}
    (folder / "wild-b.json").write_text(json.dumps({"runs": spiked}))
    labels, parts = read_labels(folder)
    assert sorted(labels) == ["wild-a/x.csv", "wild-b/y.csv"] and parts == {"wild-a": "public-a"}
    sets = chosen_sets(folder, tmp_path)
    assert [(item.part, item.labels) for item in sets] == [(PUBLIC, folder)]
