"""Roles and class counts on public logs from GitHub (``../shared/wild``, see its MANIFEST.md; never committed).

Skipped where that folder is absent."""

from pathlib import Path

import pytest

import curvedoc
from curvedoc.model import CLASSES, VOCABULARY
from curvedoc.roles import Role

WILD = Path(__file__).resolve().parents[2] / "shared" / "wild"
pytestmark = pytest.mark.skipif(not WILD.is_dir(), reason="the public logs of ../shared/wild are not here")


def run_at(relative: str):
    (run,) = curvedoc.load(WILD / relative)
    return run


def test_detectron2_total_loss_is_the_loss_and_ap_a_score():
    run = run_at("detectron2/Ghailen-Ben-Achour__detectron2_detection/output/metrics.json")
    assert run.primary(Role.TRAIN_LOSS) == "total_loss"
    assert {"loss_cls", "loss_box_reg", "loss_rpn_cls", "loss_rpn_loc"} < set(run.tags_with(Role.TRAIN_LOSS))
    assert run.roles["fast_rcnn/cls_accuracy"] == Role.TRAIN_ACC
    assert run.roles["bbox/AP"] == run.roles["bbox/AP50"] == run.roles["bbox/APs"] == Role.SCORE


def test_an_ultralytics_run_folder_named_train():
    run = run_at("tfevents/Abonia1__YOLOv8-Fire-and-Smoke-Detection/runs/detect/train")
    assert run.primary(Role.TRAIN_LOSS) == "train/box_loss" and run.primary(Role.VAL_LOSS) == "val/box_loss"
    assert run.roles["metrics/mAP50-95(B)"] == run.roles["metrics/precision(B)"] == Role.SCORE


def test_tf_estimator_eval_folders_are_validation():
    (run,) = curvedoc.load(WILD / "tfevents/WaltEhren__TrafficCollisionPredictor")
    assert run.primary(Role.TRAIN_LOSS) == "loss" and run.primary(Role.VAL_LOSS) == "eval/loss"
    (run,) = curvedoc.load(WILD / "tfevents/Celesto1010__lstm_text_classification")
    assert run.primary(Role.VAL_ACC) == "eval/eval_accuracy" and run.primary(Role.VAL_LOSS) == "eval/loss"


def test_rl_rewards_are_scores_and_rl_losses_stay_losses():
    run = run_at("tfevents/rishabhg97__robust-cartpole/logs/ppo/PPO_1")
    assert run.roles["rollout/ep_rew_mean"] == Role.SCORE and run.roles["rollout/ep_len_mean"] == Role.OTHER
    assert run.primary(Role.TRAIN_LOSS) == "train/loss"
    assert {"train/value_loss", "train/policy_gradient_loss", "train/entropy_loss"} < set(run.tags_with(Role.TRAIN_LOSS))
    run = run_at("rl_progress/BoogaQ__PPO-exploration/progress.csv")
    assert run.roles["ep_rew_mean"] == Role.SCORE and run.primary(Role.TRAIN_LOSS) == "total_loss"


def test_hf_token_accuracy_is_an_accuracy():
    run = run_at("hf_trainer_state/Dheena731__tinyLlama-finetune/trainer_state.json")
    assert run.roles["mean_token_accuracy"] == Role.TRAIN_ACC
    assert run.roles["eval_mean_token_accuracy"] == Role.VAL_ACC and run.roles["num_tokens"] == Role.OTHER


@pytest.mark.parametrize("relative,count,kind,source", [
    ("tfevents/ananyakaligal__Gemma2B-Finetuning/logs", 256000, VOCABULARY,
     "TensorBoard text model_config/text_summary: vocab_size"),
    ("tfevents/CatherineYellow__Fine-Tuning-TinyLLaMA-1b-with-Clinical-Instruction-Data-with-QLoRA-Method/outputs/"
     "runs/Dec11_09-32-21_acef13eee0ce", 32001, VOCABULARY, "TensorBoard text model_config/text_summary: vocab_size"),
    ("hf_trainer_state/P4P4N1CK__whisper-large-v2-japanese-5k-steps/last-checkpoint/trainer_state.json", 51865,
     VOCABULARY, "config.json: vocab_size"),
    ("mlflow/10tanmay100__DEEPCNNCLASSIFIER/mlruns/0/cb0096518b0e4c66a94428555f05420b", 2, CLASSES,
     "MLflow param: CLASSES"),
    ("detectron2/Ghailen-Ben-Achour__detectron2_detection/output/metrics.json", 3, CLASSES,
     "per-class AP tags: bbox/AP-<class>"),
])
def test_class_counts_the_runs_own_files_hold(relative, count, kind, source):
    meta = run_at(relative).meta
    assert (meta.n_classes, meta.n_classes_kind, meta.n_classes_source) == (count, kind, source)


def test_an_adapters_base_model():
    meta = run_at("hf_trainer_state/RohitBind123__falcon-lora-imdb-sentiment/trainer_state.json").meta
    assert meta.base_model == "tiiuae/falcon-rw-1b" and meta.n_classes is None
