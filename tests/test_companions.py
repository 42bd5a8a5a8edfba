"""A run's class count from its own files: text summaries in its event files, its hyperparameters, and companion
files beside the log (model configs, data configs, run arguments, label lists), with their precedence and cost."""

from __future__ import annotations

import json
import os
import time
import warnings
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import curvedoc
from curvedoc.audit import audit
from curvedoc.config import Config
from curvedoc.model import CLASSES, VOCABULARY, RunBuilder, n_classes_from
from curvedoc.readers import companions
from event_files import EventWriter

METRICS = "step,train_loss,val_loss\n0,2.3,2.2\n1,1.9,1.8\n2,1.5,1.6\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def csv_run(folder: Path) -> Path:
    return write(folder / "metrics.csv", METRICS)


def only_run(path: Path):
    (run,) = curvedoc.load(path)
    return run


def meta_of(path: Path) -> tuple:
    run = only_run(path)
    return run.meta.n_classes, run.meta.n_classes_source, run.meta.n_classes_kind


# ---- what a config says ------------------------------------------------------------------------------------------


REPORTED = {"precision": 0.7, "recall": 0.8, "f1-score": 0.75, "support": 916.0}
# scikit-learn's classification_report printed, and saved as pd.DataFrame(report).transpose().to_csv()
PRINTED_REPORT = """                 precision    recall  f1-score   support

          Covid       0.97      0.88      0.93        43
         Normal       1.00      1.00      1.00         9
Viral Pneumonia       0.83      0.96      0.89        25

       accuracy                           0.93        77
      macro avg       0.93      0.95      0.94        77
   weighted avg       0.94      0.93      0.93        77
"""
REPORT_TABLE = """,precision,recall,f1-score,support
angry,0.56,0.64,0.60,958.0
happy,0.88,0.85,0.86,1774.0
sad,0.55,0.54,0.54,1247.0
accuracy,0.66,0.66,0.66,0.66
macro avg,0.63,0.66,0.63,3979.0
weighted avg,0.66,0.66,0.65,3979.0
"""


@pytest.mark.parametrize("config,expected", [
    ({"num_classes": 10}, (10, "num_classes", CLASSES)),
    ({"nb_classes": "7"}, (7, "nb_classes", CLASSES)),  # MLflow keeps params as text
    ({"Arch": {"name": "cait_xxs_24", "class_num": 1000}}, (1000, "Arch.class_num", CLASSES)),  # PaddleClas
    ({"model/num_classes": 5}, (5, "model/num_classes", CLASSES)),
    ({"classes": ["cat", "dog", "bird"]}, (3, "classes", CLASSES)),
    ({"labels": ["open_cap", "unscrew_back"]}, (2, "labels", CLASSES)),
    # a name -> index map numbering the classes 0, 1, ... (a project's config.yaml)
    ({"data": {"image_size": 128, "labels": {"fresh": 0, "rotten": 1}}}, (2, "data.labels", CLASSES)),
    ({"label2id": {"neg": 0, "pos": 1}}, (2, "label2id", CLASSES)),
    ({"vocab_size": 50257}, (50257, "vocab_size", VOCABULARY)),
    ({"n_vocab": 65}, (65, "n_vocab", VOCABULARY)),
    # a character-level model's output is one of its characters (a Lightning module's hparams.yaml)
    ({"hidden_units": 512, "num_chars": 29, "seq_length": 100}, (29, "num_chars", VOCABULARY)),
    ({"vocab": 16384, "block_size": 1024}, (16384, "vocab", VOCABULARY)),
    # nanoGPT prints "found vocab_size = 65 (inside data/shakespeare_char/meta.pkl)", a text log's found_vocab_size
    ({"found_vocab_size": 65, "per_iteration_will_be": 16384}, (65, "found_vocab_size", VOCABULARY)),
    # a key ending in a count names it only when no key names one exactly
    ({"num_classes": 10, "extra_num_classes": 3}, (10, "num_classes", CLASSES)),
    # an encoder-decoder's output predicts the target's vocabulary (OpenNMT prints "* tgt vocab size = 36")
    ({"src_vocab_size": 50, "tgt_vocab_size": 36}, (36, "tgt_vocab_size", VOCABULARY)),
    # a classifier's config holds its encoder's vocabulary too: the labels are its output
    ({"vocab_size": 30522, "id2label": {"0": "negative", "1": "positive"}}, (2, "id2label", CLASSES)),
    # num_labels set to 3 gives three placeholder labels: set on purpose
    ({"vocab_size": 40, "id2label": {"0": "LABEL_0", "1": "LABEL_1", "2": "LABEL_2"}}, (3, "id2label", CLASSES)),
    # a causal LM's full config carries HF's two default labels: its output is the vocabulary
    ({"architectures": ["GemmaForCausalLM"], "vocab_size": 256000, "id2label": {"0": "LABEL_0", "1": "LABEL_1"}},
     (256000, "vocab_size", VOCABULARY)),
    ({"architectures": ["BertForSequenceClassification"], "vocab_size": 30522,
      "id2label": {"0": "LABEL_0", "1": "LABEL_1"}}, (2, "id2label", CLASSES)),
    # TrOCR: a composite encoder-decoder generates text; its decoder's placeholder labels say nothing
    ({"architectures": ["VisionEncoderDecoderModel"], "encoder": {"id2label": {"0": "LABEL_0", "1": "LABEL_1"}},
      "decoder": {"vocab_size": 50265, "id2label": {"0": "LABEL_0", "1": "LABEL_1"}}},
     (50265, "decoder.vocab_size", VOCABULARY)),
    # HF saves id2label only when it is not the default: a classifier's config without one has two labels
    ({"architectures": ["BertForSequenceClassification"], "vocab_size": 21128, "model_type": "bert"},
     (2, "architectures (BertForSequenceClassification, default num_labels)", CLASSES)),
    # YOLO data config: nc and names
    ({"path": "../datasets/fire", "train": "images/train", "val": "images/val", "nc": 2, "names": ["fire", "smoke"]},
     (2, "nc", CLASSES)),
    ({"train": "images/train", "val": "images/val", "names": {0: "wheat", 1: "weed"}}, (2, "names", CLASSES)),
    # the model block's count beats a dataset's
    ({"model": {"num_classes": 10}, "pretraining": {"num_classes": 1000}}, (10, "model.num_classes", CLASSES)),
    ({"num_classes": 10, "data": {"num_classes": 10}}, (10, "num_classes", CLASSES)),
    # pytorch_tabular's hparams.yaml states it only in the torchmetrics settings, a list of blocks
    ({"output_dim": 7, "metrics": ["accuracy"],
      "metrics_params": [{"sub_params_list": [{"task": "multiclass", "num_classes": 7, "top_k": 1}]}]},
     (7, "metrics_params[0].sub_params_list[0].num_classes", CLASSES)),
    # Detectron2's full config holds every head's block: its meta-architecture says which head the model has
    ({"MODEL": {"META_ARCHITECTURE": "GeneralizedRCNN", "ROI_HEADS": {"NUM_CLASSES": 4},
                "RETINANET": {"NUM_CLASSES": 80}, "SEM_SEG_HEAD": {"NUM_CLASSES": 54}}},
     (4, "MODEL.ROI_HEADS.NUM_CLASSES", CLASSES)),
    ({"MODEL": {"META_ARCHITECTURE": "RelationRetinaNet", "ROI_HEADS": {"NUM_CLASSES": 80},
                "RETINANET": {"NUM_CLASSES": 4}, "SEM_SEG_HEAD": {"NUM_CLASSES": 54}}},
     (4, "MODEL.RETINANET.NUM_CLASSES", CLASSES)),
    # scikit-learn's classification_report(output_dict=True) saved with the results: one entry per class
    ({"epochs": 500, "test_report": {"Rush": REPORTED, "Pass": REPORTED, "accuracy": 0.79, "macro avg": REPORTED,
                                     "weighted avg": REPORTED}}, (2, "test_report", CLASSES)),
    # a count the config states beats the classes one evaluation happened to see
    ({"num_classes": 3, "report": {"a": REPORTED, "b": REPORTED, "macro avg": REPORTED}}, (3, "num_classes", CLASSES)),
])
def test_a_config_states_its_class_count(config, expected):
    assert tuple(n_classes_from(config)) == expected


def test_labels_that_are_no_numbering_of_classes_count_nothing():
    # class ids picked out of a larger set, and one label column of a table
    assert n_classes_from({"labels": {"cat": 3, "dog": 7}}) is None
    assert n_classes_from({"labels": ["price"]}) is None


def test_blocks_of_a_list_that_disagree_count_nothing():
    assert n_classes_from({"heads": [{"num_classes": 10}, {"num_classes": 3}]}) is None


def test_a_list_of_input_blocks_gives_way_to_the_model_s_own_blocks():
    """bayou's config.json: an encoder per kind of evidence, each with its own input vocabulary, in a list, beside
    the decoder whose output vocabulary the loss is over."""
    config = {"evidence": [{"name": "apicalls", "vocab_size": 19}, {"name": "types", "vocab_size": 21}],
              "reverse_encoder": {"vocab_size": 30}, "decoder": {"vocab_size": 30}}
    assert tuple(n_classes_from(config)) == (30, "reverse_encoder.vocab_size", VOCABULARY)


def test_hf_default_labels_beside_a_model_that_is_no_classifier_count_nothing():
    """ChatGLM2's config (a W&B run's hparams): architectures ChatGLMModel, vocab_size 65024 and the id2label every
    PretrainedConfig carries, {0: LABEL_0, 1: LABEL_1}. Those two labels are no class count of a model without a
    classifier's head, and its architecture's name says no more: the count stays unknown, not 2."""
    config = {"architectures": ["ChatGLMModel"], "model_type": "chatglm", "vocab_size": 65024,
              "padded_vocab_size": 65024, "id2label": {"0": "LABEL_0", "1": "LABEL_1"},
              "label2id": {"LABEL_0": 0, "LABEL_1": 1}}
    assert n_classes_from(config) is None


@pytest.mark.parametrize("config", [
    {"num_attention_heads": 12, "hidden_size": 768, "num_hidden_layers": 12},
    {"nc": 3, "nz": 100, "ngf": 64},  # a DCGAN's nc counts image channels
    {"names": ["alice", "bob"]},  # names alone are not YOLO's
    {"classes": ["a", "a", "b"]},  # repeats: per-sample labels, not the classes
    {"classes": [0, 2]},  # class indices: a filter
    # Ultralytics' args.yaml: classes filters predictions
    {"task": "detect", "mode": "train", "data": "/content/datasets/fire-8/data.yaml", "classes": 3},
    {"num_classes": 1},
    {"vocab": "gpt2", "tokenizer_vocab": "bpe.json"},  # a tokenizer's name or file, not a size
    {"src_vocab_size": 32000, "emb_vocab_size": 24000},  # two endings, two counts: ambiguous
    {"num_classes": True},
    # HF's two default labels beside a vocabulary, with no architecture saying which is the output
    {"vocab_size": 30522, "id2label": {"0": "LABEL_0", "1": "LABEL_1"}},
    # an encoder's config (the base of a fine-tune with its own head) holds its input vocabulary, not an output
    {"architectures": ["BertForMaskedLM"], "vocab_size": 21128, "model_type": "bert"},
    # Detectron2's full config: a count per head, and the config alone does not say which head is used
    {"MODEL": {"ROI_HEADS": {"NUM_CLASSES": 3}, "RETINANET": {"NUM_CLASSES": 80}}},
    # ... nor when its meta-architecture is a project's own, naming none of the heads
    {"MODEL": {"META_ARCHITECTURE": "MyDetector", "ROI_HEADS": {"NUM_CLASSES": 3}, "RETINANET": {"NUM_CLASSES": 80}}},
    {"model": {"num_classes": 10}, "model_b": {"head": {"num_classes": 20}}},
    # a tokenizer's cap, which a small corpus leaves far below (a from-scratch LM's config.json)
    {"max_vocab_size": 10000, "d_model": 256, "n_layers": 4},
    # an HF classifier class with a regression head: one label, problem_type regression, no classes
    {"architectures": ["DistilBertForSequenceClassification"], "id2label": {"0": "LABEL_0"},
     "problem_type": "regression", "vocab_size": 30522},
    {"architectures": ["DistilBertForSequenceClassification"], "id2label": {"0": "LABEL_0"}, "vocab_size": 30522},
])
def test_configs_that_state_no_class_count_or_an_ambiguous_one(config):
    assert n_classes_from(config) is None


def test_detectron2s_per_class_ap_tags_count_the_classes():
    builder = RunBuilder("output/metrics.json", "detectron2-jsonl")
    for tag in ["total_loss", "bbox/AP", "bbox/AP50", "bbox/AP-date", "bbox/AP-fig", "bbox/AP-hazelnut",
                "segm/AP-date", "segm/AP-fig", "segm/AP-hazelnut"]:
        builder.add(tag, [99, 199], [1.0, 0.5])
    meta = builder.build().meta
    assert (meta.n_classes, meta.n_classes_kind, meta.n_classes_source) == (
        3, CLASSES, "per-class AP tags: bbox/AP-<class>")


# ---- companion files ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name,text,expected", [
    ("config.json", json.dumps({"num_labels": 4, "model_type": "bert"}), (4, "config.json: num_labels", CLASSES)),
    ("args.json", json.dumps({"lr": 0.1, "num_classes": 100}), (100, "args.json: num_classes", CLASSES)),
    ("params.json", json.dumps({"n_classes": 6}), (6, "params.json: n_classes", CLASSES)),
    ("hparams.json", json.dumps({"model": {"n_classes": 9}}), (9, "hparams.json: model.n_classes", CLASSES)),
    ("data.yaml", "path: ../datasets/weeds\ntrain: images/train\nval: images/val\nnc: 2\nnames: ['wheat', 'weed']\n",
     (2, "data.yaml: nc", CLASSES)),
    ("args.yaml", "task: classify\nmodel: {num_classes: 37}\n", (37, "args.yaml: model.num_classes", CLASSES)),
    ("experiment.yml", "trainer: {max_epochs: 3}\nmodel:\n  vocab_size: 5000\n",
     (5000, "experiment.yml: model.vocab_size", VOCABULARY)),
    ("default_parameters.json", json.dumps({"lr": 2e-4, "num_classes": 8, "imsize": 128}),
     (8, "default_parameters.json: num_classes", CLASSES)),
    ("training_config.json", json.dumps({"model": {"n_classes": 5}}), (5, "training_config.json: model.n_classes",
                                                                         CLASSES)),
    ("labels.txt", "cat\ndog\nbird\n\nfish\n", (4, "labels.txt: labels", CLASSES)),
    ("classes.txt", "0\n1\n2\n", (3, "classes.txt: labels", CLASSES)),
    ("class_names.txt", "healthy\nrust\n", (2, "class_names.txt: labels", CLASSES)),
    # Keras' flow_from_directory(...).class_indices and torchvision's class_to_idx, dumped with json.dump
    ("class_indices.json", json.dumps({"angry": 0, "disgust": 1, "fear": 2, "happy": 3}),
     (4, "class_indices.json: labels", CLASSES)),
    ("label_map.json", json.dumps({str(i): f"sign {i}" for i in range(12)}), (12, "label_map.json: labels", CLASSES)),
    ("class_names.json", json.dumps(["cat", "dog", "bird"]), (3, "class_names.json: labels", CLASSES)),
    ("labels.json", json.dumps({"class_names": ["ok", "crack"], "image_size": 224}), (2, "labels.json: labels", CLASSES)),
    # the class list alone, written beside a Keras CSVLogger file by the same export
    ("labels.json", json.dumps({"class_names": [f"plant disease {i}" for i in range(109)]}),
     (109, "labels.json: labels", CLASSES)),
    # the summary a script writes at its end, beside the scores
    ("summary_metrics.json", json.dumps({"num_classes": 9, "test_accuracy": 0.93}),
     (9, "summary_metrics.json: num_classes", CLASSES)),
    # an evaluation's classification report, printed to a file or saved as a table (pd.DataFrame(report)
    # .transpose().to_csv()) or as a whole JSON file (output_dict=True)
    ("classification_report.txt", PRINTED_REPORT, (3, "classification_report.txt: classification report", CLASSES)),
    ("per_class_metrics.csv", REPORT_TABLE, (3, "per_class_metrics.csv: classification report", CLASSES)),
    ("classification_report.json", json.dumps({"0": REPORTED, "1": REPORTED, "accuracy": 0.98,
                                               "macro avg": REPORTED, "weighted avg": REPORTED}),
     (2, "classification_report.json: classification report", CLASSES)),
    # a W&B run's files/config.yaml beside its captured output.log: each key under {value: ..., desc: ...}
    ("config.yaml", "_wandb:\n  value: {cli_version: 0.22.2}\ndataset:\n  value: cifar10\nnum_classes:\n  value: 10\n",
     (10, "config.yaml: num_classes", CLASSES)),
])
def test_each_kind_of_companion_beside_the_log(tmp_path, name, text, expected):
    csv_run(tmp_path / "run")
    companion = write(tmp_path / "run" / name, text)
    assert meta_of(tmp_path / "run") == expected
    assert str(companion) in only_run(tmp_path / "run").meta.files


def test_a_companion_the_log_reader_listed_by_a_relative_path_is_listed_once(tmp_path, monkeypatch):
    """Lightning's reader lists the hparams.yaml beside metrics.csv by the path it was given; the companions it
    holds are found from the resolved folder. One file is one entry, whichever way it was named."""
    csv_run(tmp_path / "run")
    write(tmp_path / "run" / "hparams.yaml", "num_classes: 5\n")
    monkeypatch.chdir(tmp_path)
    run = only_run(Path("run") / "metrics.csv")
    assert run.meta.n_classes == 5
    assert len({os.path.abspath(name) for name in run.meta.files}) == len(run.meta.files) == 2


@pytest.mark.parametrize("name,text", [
    ("config.json", json.dumps({"editor.tabSize": 4, "files.exclude": {"**/.git": True}})),  # another tool's config
    ("labels.txt", "0\n1\n1\n0\n1\n"),  # one label per sample
    ("docker-compose.yml", "services:\n  web:\n    image: nginx\n"),
    ("results.json", json.dumps({"num_classes": 3, "accuracy": 0.9})),  # JSON not named for settings: results, data
    # a label file of examples: its indices repeat, or name files rather than classes
    ("labels.json", json.dumps({"img_001.png": 0, "img_002.png": 1, "img_003.png": 1})),
    ("labels.json", json.dumps({"images": [{"id": 1}], "annotations": [{"id": 1, "category_id": 3}]})),  # COCO
    ("class_indices.json", json.dumps({"a": 0, "b": 2, "c": 5})),  # a filter of some classes, not all of them
    ("test_results.txt", "accuracy 0.93\nprecision 0.91\nrecall 0.88\n"),  # scores, no report of classes
    ("final_report.txt", "Best epoch 12 of 40; precision and recall improved on both classes.\n"),
])
def test_companions_of_other_tools_say_nothing(tmp_path, name, text):
    csv_run(tmp_path / "run")
    write(tmp_path / "run" / name, text)
    assert meta_of(tmp_path / "run") == (None, None, None)


def test_one_folder_up_and_two_above_a_hugging_face_checkpoint(tmp_path):
    csv_run(tmp_path / "sweep" / "run1")
    write(tmp_path / "sweep" / "config.json", json.dumps({"num_labels": 3}))
    assert meta_of(tmp_path / "sweep" / "run1") == (3, "../config.json: num_labels", CLASSES)
    csv_run(tmp_path / "far" / "a" / "b")
    write(tmp_path / "far" / "config.json", json.dumps({"num_labels": 3}))
    assert meta_of(tmp_path / "far" / "a" / "b")[0] is None  # two folders up is someone else's
    state = {"log_history": [{"loss": 1.0, "step": 1}, {"loss": 0.5, "step": 2}]}
    write(tmp_path / "hf" / "out" / "checkpoint-2" / "trainer_state.json", json.dumps(state))
    write(tmp_path / "hf" / "config.json", json.dumps({"id2label": {"0": "a", "1": "b", "2": "c", "3": "d"}}))
    assert meta_of(tmp_path / "hf" / "out" / "checkpoint-2") == (4, "../../config.json: id2label", CLASSES)


@pytest.mark.parametrize("data", ["data.yaml", "C:\\Users\\me\\yolo\\Battery\\data.yaml",
                                  "/content/drive/MyDrive/yolo/data.yaml"])
def test_ultralytics_args_name_the_data_config_of_the_folder_training_ran_in(tmp_path, data):
    run = tmp_path / "project" / "runs" / "detect" / "train2"
    write(run / "results.csv", "epoch,train/box_loss,train/cls_loss\n1,1.5,2.0\n2,1.3,1.6\n3,1.2,1.4\n")
    write(run / "args.yaml", f"task: detect\nmode: train\ndata: '{data}'\nepochs: 3\n")
    data_config = write(tmp_path / "project" / "data.yaml",
                        "train: images/train\nval: images/val\nnc: 5\nnames: [a, b, c, d, e]\n")
    assert meta_of(run) == (5, "../../../data.yaml: nc", CLASSES)
    assert str(data_config) in only_run(run).meta.files


@pytest.mark.parametrize("data, where", [
    ("hockey_vio-1/data.yaml", "hockey_vio-1/data.yaml"),  # relative to the folder training ran in
    ("C:/Users/PC/Desktop/project/archive/grading/grading.yaml", "archive/grading/grading.yaml"),  # another machine
    ("../datasets/mango/data.yaml", "datasets/mango/data.yaml"),
])
def test_ultralytics_args_name_a_data_config_by_a_path_the_project_tree_holds(tmp_path, data, where):
    """Public YOLOv8 runs name their data config by a path: one relative to where training ran, or an absolute one
    from the author's machine whose end the repository holds."""
    run = tmp_path / "project" / "runs" / "detect" / "train3"
    write(run / "results.csv", "epoch,train/box_loss,train/cls_loss\n1,1.5,2.0\n2,1.3,1.6\n3,1.2,1.4\n")
    write(run / "args.yaml", f"task: detect\nmode: train\ndata: '{data}'\nepochs: 3\n")
    write(tmp_path / "project" / where, "train: images/train\nval: images/val\nnc: 3\nnames: [a, b, c]\n")
    assert meta_of(run) == (3, f"../../../{where}: nc", CLASSES)


def test_a_label_map_in_the_configs_folder_beside_the_log_holds_the_class_count(tmp_path):
    """A Keras script's models/training_log.csv beside models/configs/label_mapping.json (index -> letter)."""
    write(tmp_path / "models" / "training_log.csv", "epoch,loss,val_loss\n0,3.5,3.4\n1,3.2,3.3\n2,3.0,3.2\n")
    write(tmp_path / "models" / "configs" / "label_mapping.json", json.dumps({str(i): chr(65 + i) for i in range(32)}))
    assert meta_of(tmp_path / "models")[:1] == (32,)


def test_a_projects_configs_folder_beside_its_outputs_holds_the_class_count(tmp_path):
    """Real public layouts: outputs/log.txt beside configs/config.yaml (dataset.num_classes: 2), and Lightning's
    lightning_logs/version_0/metrics.csv two levels below configs/default.yaml (num_classes: 15)."""
    write(tmp_path / "gan" / "outputs" / "log.txt", "".join(f"Epoch {e}: loss={0.7 - e / 100:.3f}\n" for e in range(9)))
    write(tmp_path / "gan" / "configs" / "config.yaml", "dataset:\n  image_size: 64\n  num_classes: 2\n")
    assert meta_of(tmp_path / "gan" / "outputs" / "log.txt")[:1] == (2,)
    write(tmp_path / "sign" / "lightning_logs" / "version_0" / "metrics.csv",
          "epoch,step,train_loss\n0,10,2.7\n1,20,2.5\n2,30,2.2\n")
    write(tmp_path / "sign" / "configs" / "default.yaml", "num_classes: 15\nlr: 0.001\n")
    assert meta_of(tmp_path / "sign" / "lightning_logs" / "version_0")[:1] == (15,)


def _keras_layer(kind: str, name: str, **settings) -> dict:
    return {"class_name": kind, "config": {"name": name, "trainable": True, **settings}}


@pytest.mark.parametrize("output, count", [
    ([_keras_layer("Dense", "dense_1", units=5, activation="softmax")], 5),
    ([_keras_layer("Dense", "dense_1", units=7, activation="linear"),
      _keras_layer("Activation", "act", activation="softmax"), _keras_layer("Dropout", "drop", rate=0.2)], 7),
    ([_keras_layer("Dense", "dense_1", units=1, activation="sigmoid")], 2),
    ([_keras_layer("Dense", "dense_1", units=6, activation="sigmoid")], None),  # multi-label
    ([_keras_layer("Dense", "dense_1", units=1, activation="linear")], None),  # a regression
])
def test_a_keras_model_saved_as_json_gives_its_output_layers_class_count(tmp_path, output, count):
    """A public Keras cassava classifier saves model.to_json() as model/model_save.json beside its history.csv; its
    last Dense layer (softmax, 5 units) is the class count."""
    layers = [_keras_layer("Conv2D", "conv2d", filters=32), _keras_layer("Flatten", "flatten"), *output]
    model = {"class_name": "Sequential", "config": {"name": "sequential", "layers": layers}, "keras_version": "2.4.0",
             "backend": "tensorflow"}
    write(tmp_path / "model" / "history.csv", "epoch,loss,val_loss\n0,1.6,1.5\n1,1.4,1.4\n2,1.3,1.3\n")
    write(tmp_path / "model" / "model_save.json", json.dumps(model))
    assert meta_of(tmp_path / "model")[0] == count


def test_the_keras_model_a_tensorboard_callback_logs_gives_its_class_count(tmp_path):
    """Keras' TensorBoard callback writes the model's JSON to the train/ event file (tag "keras", the
    graph_keras_model plugin): a public FER-2013 CNN's softmax over 7 units is the run's class count."""
    layers = [_keras_layer("Conv2D", "conv2d", filters=32), _keras_layer("Flatten", "flatten"),
              _keras_layer("Dense", "dense_2", units=7, activation="softmax")]
    model = {"module": "keras", "class_name": "Sequential", "config": {"name": "EmotionCNN", "layers": layers}}
    with EventWriter(tmp_path / "logs" / "train") as writer:
        writer.keras_model(json.dumps(model))
        for step, loss in enumerate([2.0, 1.6, 1.3]):
            writer.scalar("epoch_loss", loss, step)
    with EventWriter(tmp_path / "logs" / "validation") as writer:
        for step, loss in enumerate([1.8, 1.5, 1.3]):
            writer.scalar("epoch_loss", loss, step)
    assert meta_of(tmp_path / "logs")[:2] == (
        7, "TensorBoard Keras model graph (keras): output layer dense_2: 7 unit(s), softmax")


def test_a_functional_keras_models_output_layer_is_found_by_name(tmp_path):
    """Keras 3's functional JSON: layers in any order, the output named in output_layers (one, unnested)."""
    layers = [_keras_layer("Dense", "logits", units=10, activation="softmax"),
              _keras_layer("Dense", "hidden", units=64, activation="relu")]
    model = {"module": "keras", "class_name": "Functional",
             "config": {"name": "net", "layers": layers, "output_layers": ["logits", 0, 0]}}
    write(tmp_path / "history.csv", "epoch,loss\n0,2.3\n1,2.0\n2,1.8\n")
    write(tmp_path / "model.json", json.dumps(model))
    assert meta_of(tmp_path)[:2] == (10, "model.json: output layer logits: 10 unit(s), softmax")


def test_a_named_data_config_further_up_than_training_ran_is_not_looked_for(tmp_path):
    run = tmp_path / "far" / "project" / "runs" / "detect" / "train"
    write(run / "results.csv", "epoch,train/box_loss,train/cls_loss\n1,1.5,2.0\n2,1.3,1.6\n3,1.2,1.4\n")
    write(run / "args.yaml", "task: detect\nmode: train\ndata: data.yaml\n")
    write(tmp_path / "far" / "data.yaml", "train: images/train\nval: images/val\nnc: 5\n")
    assert meta_of(run)[0] is None


def test_an_adapter_config_names_the_base_model(tmp_path):
    state = {"log_history": [{"loss": 2.0, "step": 1}, {"loss": 1.5, "step": 2}]}
    write(tmp_path / "out" / "trainer_state.json", json.dumps(state))
    write(tmp_path / "out" / "adapter_config.json", json.dumps({
        "base_model_name_or_path": "tiiuae/falcon-rw-1b", "peft_type": "LORA", "task_type": "CAUSAL_LM", "r": 8}))
    run = only_run(tmp_path / "out")
    assert run.meta.base_model == "tiiuae/falcon-rw-1b" and run.meta.n_classes is None


def test_a_model_configs_own_name_or_path_is_the_checkpoint_it_was_loaded_from_not_a_base(tmp_path):
    state = {"log_history": [{"loss": 0.2, "step": 100}, {"loss": 0.1, "step": 200}]}
    write(tmp_path / "out" / "trainer_state.json", json.dumps(state))
    write(tmp_path / "out" / "config.json", json.dumps({
        "_name_or_path": "openai/whisper-small", "architectures": ["WhisperForConditionalGeneration"],
        "vocab_size": 51865}))
    meta = only_run(tmp_path / "out").meta
    assert (meta.checkpoint, meta.checkpoint_source) == ("openai/whisper-small", "config.json: _name_or_path")
    assert meta.base_model is None and (meta.n_classes, meta.n_classes_kind) == (51865, VOCABULARY)


def test_precedence_own_hyperparameters_then_the_nearest_companion_then_the_option(tmp_path):
    run_folder = tmp_path / "lightning_logs" / "version_0"
    csv_run(run_folder)
    write(tmp_path / "lightning_logs" / "config.json", json.dumps({"num_labels": 5}))
    assert meta_of(run_folder)[:2] == (5, "../config.json: num_labels")
    write(run_folder / "labels.txt", "a\nb\nc\n")
    assert meta_of(run_folder)[:2] == (3, "labels.txt: labels")  # nearer
    write(run_folder / "config.json", json.dumps({"num_labels": 4}))
    assert meta_of(run_folder)[:2] == (4, "config.json: num_labels")  # the model config before a label list
    write(run_folder / "hparams.yaml", "num_classes: 7\n")
    assert meta_of(run_folder)[:2] == (7, "config: num_classes")  # the run's own hyperparameters
    (run,) = curvedoc.load(run_folder, num_classes=9)
    assert run.meta.n_classes == 7  # the option fills in only where the run records none
    (tmp_path / "other").mkdir()
    csv_run(tmp_path / "other")
    (run,) = curvedoc.load(tmp_path / "other", num_classes=9)
    assert (run.meta.n_classes, run.meta.n_classes_source) == (9, "--num-classes")


def test_a_broken_named_companion_is_a_warning_and_an_oversized_one_is_not_read(tmp_path, monkeypatch):
    csv_run(tmp_path / "run")
    write(tmp_path / "run" / "config.json", '{"num_labels": 3,')
    run = only_run(tmp_path / "run")
    assert run.meta.n_classes is None and any("config.json: not valid JSON" in w for w in run.warnings)
    monkeypatch.setattr(companions, "MAX_BYTES", 1 << 20)
    csv_run(tmp_path / "big")
    write(tmp_path / "big" / "config.json", json.dumps({"num_labels": 3, "padding": "x" * (1 << 20)}))
    run = only_run(tmp_path / "big")
    assert run.meta.n_classes is None and any("config.json: over 1 MB" in w for w in run.warnings)
    csv_run(tmp_path / "small")
    write(tmp_path / "small" / "config.json", json.dumps({"num_labels": 3, "padding": "x" * 1000}))
    assert meta_of(tmp_path / "small")[0] == 3


def test_a_changed_or_new_companion_is_read_again(tmp_path):
    csv_run(tmp_path / "run")
    config = write(tmp_path / "run" / "config.json", json.dumps({"num_labels": 3}))
    assert meta_of(tmp_path / "run")[0] == 3
    config.write_text(json.dumps({"num_labels": 5}))
    os.utime(config, ns=(time.time_ns(), time.time_ns() + 10**9))
    assert meta_of(tmp_path / "run")[0] == 5
    write(tmp_path / "run" / "hparams.yaml", "num_classes: 6\n")  # a file added to the folder
    assert meta_of(tmp_path / "run")[0] == 6


def test_each_folder_is_listed_once_while_it_is_unchanged(tmp_path, monkeypatch):
    for index in range(5):
        csv_run(tmp_path / "sweep" / f"run{index}")
    write(tmp_path / "sweep" / "config.json", json.dumps({"num_labels": 3}))
    listed = []
    real_scandir = os.scandir
    monkeypatch.setattr(companions.os, "scandir", lambda path: listed.append(path) or real_scandir(path))
    assert [run.meta.n_classes for run in curvedoc.load(tmp_path / "sweep")] == [3] * 5
    assert listed.count(os.path.abspath(tmp_path / "sweep")) == 1


def test_the_audit_cache_sees_a_companion_change(tmp_path):
    root, cache = tmp_path / "archive", tmp_path / "cache"
    csv_run(root / "sweep" / "run1")
    csv_run(root / "sweep" / "run2")
    csv_run(root / "elsewhere")
    config = write(root / "sweep" / "config.json", json.dumps({"num_labels": 3}))
    first = audit([root], jobs=1, cache=cache)
    assert sorted(run.n_classes or 0 for run in first.runs) == [0, 3, 3]
    config.write_text(json.dumps({"num_labels": 10}))
    os.utime(config, ns=(time.time_ns(), time.time_ns() + 10**9))
    again = audit([root], jobs=1, cache=cache)
    assert again.n_analysed == 2 and again.n_cached == 1
    assert sorted(run.n_classes or 0 for run in again.runs) == [0, 10, 10]


# ---- text summaries ----------------------------------------------------------------------------------------------


def write_text_summaries(folder: Path, texts: dict[str, str]) -> None:
    with EventWriter(folder) as writer:
        for tag, text in texts.items():
            writer.text(tag, text, 0)
        for step, loss in enumerate([2.3, 1.7, 1.2]):
            writer.scalar("train/loss", loss, step)


CLEANRL_TABLE = "|param|value|\n|-|-|\n" + "\n".join(f"|{k}|{v}|" for k, v in
                                                    {"env_id": "CartPole-v1", "num_classes": 4, "lr": 0.001}.items())


@pytest.mark.parametrize("text,key", [
    (json.dumps({"model_type": "bert", "num_labels": 4}, indent=2), "num_labels"),
    (CLEANRL_TABLE, "num_classes"),
    ("model:\n  num_classes: 4\n  depth: 18\n", "model.num_classes"),
    ("Namespace(batch_size=64, lr=0.1, num_classes=4, name='run 1')", "num_classes"),
    ("```yaml\nnum_classes: 4\n```", "num_classes"),
])
def test_a_config_logged_as_text_gives_the_class_count(tmp_path, text, key):
    write_text_summaries(tmp_path / "run", {"config": text})
    assert meta_of(tmp_path / "run") == (4, f"TensorBoard text config/text_summary: {key}", CLASSES)


def test_only_each_text_tags_first_value_is_read(tmp_path):
    with EventWriter(tmp_path / "run") as writer:
        writer.text("samples", "the model says hello", 0)
        writer.text("samples", "num_classes: 4", 1)  # a generated sample, not the run's config
        writer.scalar("loss", 1.0, 0)
    assert meta_of(tmp_path / "run")[0] is None


def test_hyperparameters_come_before_text_summaries(tmp_path):
    with EventWriter(tmp_path / "run") as writer:
        writer.text("config", json.dumps({"num_classes": 4}), 0)
        writer.hparams({"num_classes": 10, "lr": 0.1})
        writer.scalar("loss", 1.0, 0)
    assert meta_of(tmp_path / "run")[:2] == (10, "config: num_classes")


# What the HF Trainer's TensorBoard callback logs as model_config/text_summary: the model config as JSON
HF_CLASSIFIER_CONFIG = {"architectures": ["BertForSequenceClassification"], "model_type": "bert", "vocab_size": 40,
                        "id2label": {"0": "LABEL_0", "1": "LABEL_1", "2": "LABEL_2"},
                        "label2id": {"LABEL_0": 0, "LABEL_1": 1, "LABEL_2": 2}, "hidden_size": 8}
HF_LM_CONFIG = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "vocab_size": 50, "n_embd": 8}


@pytest.mark.parametrize("config, expected", [
    (HF_CLASSIFIER_CONFIG, (3, CLASSES, "TensorBoard text model_config/text_summary: id2label")),
    (HF_LM_CONFIG, (50, VOCABULARY, "TensorBoard text model_config/text_summary: vocab_size")),
])
def test_the_hf_trainers_tensorboard_run_gives_its_model_configs_count(tmp_path, config, expected):
    write_text_summaries(tmp_path / "runs" / "Dec04_16-00-00_host", {"args": json.dumps({"output_dir": "out"}),
                                                                      "model_config": json.dumps(config, indent=2)})
    (run,) = curvedoc.load(tmp_path / "runs" / "Dec04_16-00-00_host")
    assert (run.meta.n_classes, run.meta.n_classes_kind, run.meta.n_classes_source) == expected


def test_a_real_trainer_run_logged_to_tensorboard_only_gives_its_vocabulary():
    """fixtures/holdout: a tiny GPT-2 trained by the Trainer whose output folder kept only its runs/ log."""
    (run,) = curvedoc.load(Path(__file__).resolve().parent.parent / "fixtures" / "holdout" / "healthy"
                           / "hf_gpt2_chars_runs_only")
    assert (run.meta.n_classes, run.meta.n_classes_kind) == (91, VOCABULARY)


def test_the_option_sets_a_class_count_of_kind_classes(tmp_path):
    csv_run(tmp_path / "run")
    (run,) = curvedoc.load(tmp_path / "run", config=Config(num_classes=4))
    assert (run.meta.n_classes, run.meta.n_classes_kind) == (4, CLASSES)


def test_a_table_of_the_classes_beside_the_log_gives_their_count(tmp_path):
    """GTSRB's labels.csv (``ClassId,Name``, one class a row, numbered from 0) beside a Keras history."""
    (tmp_path / "labels.csv").write_text("ClassId,Name\n" + "".join(f"{i},Sign {i}\n" for i in range(43)))
    (tmp_path / "history.csv").write_text("epoch,loss,val_loss\n" + "".join(f"{e},{3.7 - e / 10},{3.6}\n"
                                                                          for e in range(5)))
    (run,) = curvedoc.load(tmp_path / "history.csv")
    assert run.meta.n_classes == 43
    assert str(tmp_path / "labels.csv") in run.meta.files


def test_a_table_of_examples_and_their_labels_gives_no_class_count(tmp_path):
    (tmp_path / "labels.csv").write_text("file,label\n" + "".join(f"img{i}.png,{i % 3}\n" for i in range(30)))
    (tmp_path / "classes.csv").write_text("id,label\n" + "".join(f"{i % 5},{i}\n" for i in range(10)))
    (tmp_path / "history.csv").write_text("epoch,loss\n0,1.0\n1,0.8\n2,0.7\n")
    (run,) = curvedoc.load(tmp_path / "history.csv")
    assert run.meta.n_classes is None


def test_a_table_of_examples_and_their_one_hot_labels_gives_the_class_count_and_is_no_log(tmp_path):
    """A public bird classifier keeps Roboflow's export beside its Keras history: train-classes.csv, a file name and
    a 0 or 1 under each of 4 classes (an example may have none). It gives the run its 4 classes, is passed over as a
    log in the folder, and refused in one line when named; a table of numbers under class names is no such table."""
    rows = "".join(f"bird-{i}_jpg.rf.{i:032x}.jpg, {int(i % 4 == 0)}, {int(i % 4 == 1)}, {int(i % 4 == 2)}, 0\n"
                   for i in range(30))
    write(tmp_path / "models" / "train-classes.csv", "filename, Apteryx australis, Birds, Casuarius, Tinamus\n" + rows)
    write(tmp_path / "models" / "history.csv", "epoch,loss,val_loss\n" + "".join(f"{e},{1.4 - e / 10},{1.3}\n"
                                                                               for e in range(5)))
    (run,) = curvedoc.load(tmp_path / "models")
    assert run.meta.n_classes == 4 and run.path.endswith("history.csv")
    with pytest.raises(curvedoc.CurvedocError, match="one-hot labels, not a training log"):
        curvedoc.load(tmp_path / "models" / "train-classes.csv")
    assert companions.one_hot_classes("epoch, cat, dog\n1, 0.5, 0.4\n2, 0.6, 0.3\n3, 0.7, 0.2\n") is None


def test_a_model_metadata_json_beside_the_log_gives_its_class_count(tmp_path):
    """AbyssDrn/Animal-Sound-Classifier keeps num_classes and the species in model_metadata.json beside its Keras
    history; W&B's wandb-metadata.json (the machine, the command line) gives none."""
    (tmp_path / "model_metadata.json").write_text(json.dumps({"model_name": "x", "num_classes": 10,
                                                               "species": [f"s{i}" for i in range(10)]}))
    (tmp_path / "training_history.csv").write_text("loss,val_loss\n2.3,2.2\n1.9,2.0\n1.5,1.8\n")
    (run,) = curvedoc.load(tmp_path / "training_history.csv")
    assert run.meta.n_classes == 10 and run.meta.n_classes_source.startswith("model_metadata.json")
    (tmp_path / "model_metadata.json").unlink()
    (tmp_path / "wandb-metadata.json").write_text(json.dumps({"os": "Linux", "args": ["--epochs", "3"]}))
    (run,) = curvedoc.load(tmp_path / "training_history.csv")
    assert run.meta.n_classes is None


# A project's config.py one folder above the outputs/ its history is written to, as real projects keep it
CONFIG_MODULE = '''"""Settings of the breath-sound classifier."""
import os
BASE_DIR = os.path.dirname(__file__)
CLASS_NAMES = ["inspiration", "expiration", "wheeze", "stridor", "rhonchi", "crackle", "normal"]
# CLASS_NAMES = ["inspiration", "expiration", "abnormal"]
NUM_CLASSES = len(CLASS_NAMES)
CLASS_TO_IDX = {name: index for index, name in enumerate(CLASS_NAMES)}
LEARNING_RATE = 1e-3
'''


@pytest.mark.parametrize("name, text, expected", [
    ("config.py", CONFIG_MODULE, (7, "../config.py: CLASS_NAMES")),
    ("hparams.py", "class HParams:\n    num_classes: int = 10\n    lr: float = 3e-4\n", (10, "../hparams.py: num_classes")),
    ("train_config.py", ("from yacs.config import CfgNode\n_C = CfgNode()\n_C.MODEL = CfgNode()\n"
                         "_C.MODEL.NUM_CLASSES = 9\n"), (9, "../train_config.py: _C.MODEL.NUM_CLASSES")),
    ("config.py", ("import argparse\nparser = argparse.ArgumentParser()\n"
                   "parser.add_argument('-n', '--num-classes', type=int, default=5)\n"),
     (5, "../config.py: num_classes")),
    ("settings.py", "model = AutoModel.from_pretrained(CHECKPOINT, num_labels=3)\n", (3, "../settings.py: num_labels")),
    ("config.ini", "[TRAINING]\nBATCH_SIZE = 32\nCLASSES = [\"fire_and_smoke\", \"normal\"]\nINIT_LR = 0,0001\n",
     (2, "../config.ini: TRAINING.classes")),
    ("params.cfg", "num_classes = 4\nepochs = 20\n", (4, "../params.cfg: settings.num_classes")),
])
def test_a_settings_module_or_ini_file_gives_the_class_count_without_being_run(tmp_path, name, text, expected):
    write(tmp_path / name, text)
    assert meta_of(csv_run(tmp_path / "outputs"))[:2] == expected


@pytest.mark.parametrize("name, text", [
    # a count per dataset: the file says neither
    ("config.py", "NUM_CLASSES = 10\nif DATASET == 'cifar100':\n    NUM_CLASSES = 100\n"),
    # an argument that is no setting, and a count computed from what only running the code knows
    ("config.py", ("import pandas as pd\ncolumns = pd.read_csv(PATH, names=['a', 'b', 'c'])\n"
                   "NUM_CLASSES = dataset.num_classes\n")),
    ("config.py", "NUM_CLASSES = len('abc')\n"),  # the length of a string is no class count
    ("config.py", "print 'python 2'\nNUM_CLASSES = 10\n"),  # not Python 3: not parsed, no warning
    ("defaults.py", "NUM_CLASSES = 80\n"),  # a framework's defaults, which the run's config overrides
    ("setup.cfg", "[metadata]\nclasses = 3\n"),  # packaging, not the run's settings
])
def test_a_settings_module_that_states_no_single_count_gives_none(tmp_path, name, text):
    write(tmp_path / name, text)
    run = only_run(csv_run(tmp_path / "outputs"))
    assert run.meta.n_classes is None and not run.warnings


def test_a_settings_module_is_parsed_never_run(tmp_path):
    marker = tmp_path / "ran"
    write(tmp_path / "config.py", f"open({str(marker)!r}, 'w').write('x')\nNUM_CLASSES = 4\n")
    assert meta_of(csv_run(tmp_path / "outputs"))[0] == 4 and not marker.exists()


def test_a_class_map_json_nested_under_the_direction_it_maps_gives_the_count(tmp_path):
    """A car classifier's class_mapping.json holds {"index_to_class": {"0": …}, "class_to_index": {…: 0}}; a map
    whose key names no class map (char_to_idx: the characters of a vocabulary) is left alone."""
    names = [f"Car model {i}" for i in range(196)]
    write(tmp_path / "class_mapping.json", json.dumps({"index_to_class": dict(enumerate(names)),
                                                       "class_to_index": {name: i for i, name in enumerate(names)}}))
    assert meta_of(csv_run(tmp_path))[:2] == (196, "class_mapping.json: labels")
    assert n_classes_from({"idx_to_class": {"0": "cat", "1": "dog", "2": "bird"}}).count == 3
    assert n_classes_from({"char_to_idx": {"a": 0, "b": 1, "c": 2}}) is None


def test_the_only_training_script_beside_the_outputs_gives_the_count_it_passes(tmp_path):
    """A fine-tune's train.py one folder above its output: DistilBertForSequenceClassification.from_pretrained(…,
    num_labels=2). Two training scripts in one folder (train_cifar10.py, train_cifar100.py) do not say which ran."""
    write(tmp_path / "train.py", "from transformers import AutoModelForSequenceClassification\n"
                                 "def main():\n    model = AutoModelForSequenceClassification.from_pretrained(\n"
                                 "        CHECKPOINT, num_labels=2)\n")
    assert meta_of(csv_run(tmp_path / "results"))[:2] == (2, "../train.py: num_labels")
    (tmp_path / "train.py").unlink()
    write(tmp_path / "train_cifar10.py", "model = resnet18(num_classes=10)\n")
    write(tmp_path / "train_cifar100.py", "model = resnet18(num_classes=100)\n")
    assert only_run(csv_run(tmp_path / "results")).meta.n_classes is None


def test_a_count_passed_on_from_the_arguments_does_not_hide_the_arguments_default(tmp_path):
    """The usual training script: an argparse default, then Net(num_classes=args.num_classes); a count assigned
    from the data (num_classes = len(train_set.classes)) is known only by running it, and says none."""
    write(tmp_path / "train.py", "parser.add_argument('--num_classes', type=int, default=10)\n"
                                 "model = Net(num_classes=args.num_classes)\n")
    assert meta_of(csv_run(tmp_path / "runs"))[:2] == (10, "../train.py: num_classes")
    write(tmp_path / "train.py", "parser.add_argument('--num_classes', type=int, default=10)\n"
                                 "num_classes = len(train_set.classes)\n")
    assert only_run(csv_run(tmp_path / "runs")).meta.n_classes is None


def test_a_settings_module_with_invalid_escapes_is_read_without_a_warning(tmp_path):
    """A Windows path in a plain string ("C:\\data\\new") warns as Python compiles the module: the user's code."""
    write(tmp_path / "config.py", 'DATA_DIR = "C:\\data\\new\\d"\nNUM_CLASSES = 3\n')
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert meta_of(csv_run(tmp_path / "runs"))[0] == 3


def test_a_settings_module_named_like_a_training_script_is_read_once(tmp_path):
    write(tmp_path / "train_config.py", "NUM_CLASSES = 5\n")
    assert only_run(csv_run(tmp_path / "runs")).meta.n_classes == 5
    read = [companion.path for companion in companions.companions_of(tmp_path / "runs")]
    assert read.count(os.path.join(tmp_path, "train_config.py")) == 1


def test_a_finding_built_on_a_recorded_count_says_where_the_count_was_read(tmp_path):
    """A count taken from a settings module is quoted with the finding it yields, file and name, so that the user
    can check it; an inferred one keeps its own sentence (tests/test_classcount.py)."""
    write(tmp_path / "config.py", "CLASS_NAMES = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j']\n"
                                  "NUM_CLASSES = len(CLASS_NAMES)\n")
    write(tmp_path / "outputs" / "metrics.csv", "step,train_loss,val_loss\n" + "".join(
        f"{step},{30.0 / (1 + step) + 0.5},{0.6 + 0.01 * step}\n" for step in range(12)))
    (run,) = curvedoc.diagnose(tmp_path / "outputs")
    (finding,) = [finding for finding in run.findings if finding.code == "CD201"]
    assert "class count 10 from ../config.py: CLASS_NAMES" in finding.evidence


# Lines a settings module or an INI file is made of, with the shapes that are read and some that break a parser
SETTINGS_LINES = st.sampled_from([
    "NUM_CLASSES = 10", "NUM_CLASSES = len(NAMES)", "NAMES = ['a', 'b']", "num_classes: int = 3", "x = (", "def f(:",
    "cfg.MODEL.NUM_CLASSES = 9", "config['num_labels'] = 2", "parser.add_argument('--num-classes', default=4)",
    "m = Net(num_classes=args.n)", "print 'old'", "s = 'C:\\data\\d'", "[section]", "[broken", "key = value",
    "classes = [1, 2", "n = 1e309", "deep = " + "[" * 200 + "]" * 200, "\x00", "%(interpolated)s = 1", "= 5",
])


@settings(max_examples=80, deadline=None)
@given(lines=st.lists(st.one_of(SETTINGS_LINES, st.text(max_size=30)), max_size=12))
@example(lines=["flag", "  continued"])  # the standard INI parser's own AttributeError: a key without a value, then more
def test_any_settings_text_is_read_or_passed_over_without_an_exception_or_a_warning(lines):
    text = "\n".join(lines)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for settings_read in (companions.settings_in_code(text), companions.settings_in_ini(text),
                              companions.parse_config_text(text)):
            assert settings_read is None or isinstance(settings_read, dict)
            if settings_read:
                n_classes_from(settings_read)  # whatever was read, the count lookup takes it


@pytest.mark.parametrize("name, text, expected", [
    # a character-level model's settings written out by its script, one "key : value" a line
    ("config.txt", "batch_size        : 128\nvocab_size        : 226\nmax_lr            : 0.00015\n",
     (226, "config.txt: vocab_size")),
    ("args.txt", "Namespace(lr=0.01, num_classes=5, epochs=30)", (5, "args.txt: num_classes")),
    ("training_config.txt", "lr=0.001\nnum_labels=3\n", (3, "training_config.txt: num_labels")),
])
def test_settings_written_out_as_text_give_the_count(tmp_path, name, text, expected):
    write(tmp_path / name, text)
    assert meta_of(csv_run(tmp_path))[:2] == expected


def test_text_beside_the_log_that_is_no_settings_gives_no_count(tmp_path):
    write(tmp_path / "config.txt", "QuartzNet 5x5 Baseline\n======\nModel\n-----\nParameters: 7,259,933\n")
    write(tmp_path / "requirements.txt", "torch==2.1\nnum_classes==3\n")
    assert only_run(csv_run(tmp_path)).meta.n_classes is None
