import pytest

from curvedoc.roles import Role, infer_role, primary_tag

CONVENTIONS = {
    # PyTorch / generic
    "loss": Role.TRAIN_LOSS, "train/loss": Role.TRAIN_LOSS, "train_loss": Role.TRAIN_LOSS, "Loss/train": Role.TRAIN_LOSS,
    "trainLoss": Role.TRAIN_LOSS, "batch_loss": Role.TRAIN_LOSS,
    # Lightning
    "train_loss_step": Role.TRAIN_LOSS, "train_loss_epoch": Role.TRAIN_LOSS, "val_loss_epoch": Role.VAL_LOSS,
    "lr-Adam": Role.LR, "lr-SGD/pg1": Role.LR, "hp_metric": Role.OTHER, "epoch": Role.OTHER,
    # Keras / HF / W&B
    "val_loss": Role.VAL_LOSS, "eval/loss": Role.VAL_LOSS, "eval_loss": Role.VAL_LOSS, "valid/loss": Role.VAL_LOSS,
    "validation_loss": Role.VAL_LOSS, "Loss/val": Role.VAL_LOSS, "validation/epoch_loss": Role.VAL_LOSS,
    "train/epoch_loss": Role.TRAIN_LOSS, "val_acc": Role.VAL_ACC, "accuracy": Role.TRAIN_ACC,
    "val_accuracy": Role.VAL_ACC, "eval_accuracy": Role.VAL_ACC, "validation/epoch_accuracy": Role.VAL_ACC,
    "train/epoch_sparse_categorical_accuracy": Role.TRAIN_ACC,
    "lr": Role.LR, "learning_rate": Role.LR, "train/learning_rate": Role.LR, "lr/pg0": Role.LR,
    "epoch_learning_rate": Role.LR,
    "grad_norm": Role.GRAD_NORM, "train/grad_norm": Role.GRAD_NORM, "gradient_norm": Role.GRAD_NORM,
    # a test split stays apart from validation
    "test_loss": Role.TEST_LOSS, "test/acc": Role.TEST_ACC, "Accuracy/test": Role.TEST_ACC,
    # bookkeeping that mentions a split or a loss word is not a curve of the model
    "eval_runtime": Role.OTHER, "eval_samples_per_second": Role.OTHER, "train/loss_scale": Role.OTHER,
    "val/top5_acc": Role.OTHER, "hparam/accuracy": Role.OTHER, "weight_decay": Role.OTHER, "momentum": Role.OTHER,
    # Ultralytics components
    "train/box_loss": Role.TRAIN_LOSS, "val/cls_loss": Role.VAL_LOSS, "metrics/mAP50(B)": Role.OTHER,
    "metrics/accuracy_top1": Role.VAL_ACC, "metrics/accuracy_top5": Role.OTHER, "metrics/train_acc": Role.TRAIN_ACC,
}


@pytest.mark.parametrize("tag,role", CONVENTIONS.items())
def test_framework_conventions(tag, role):
    assert infer_role(tag) == role


def test_folder_split_hint_applies_when_the_tag_names_none():
    assert infer_role("epoch_loss", split="val") == Role.VAL_LOSS
    assert infer_role("epoch_loss") == Role.TRAIN_LOSS


def test_primary_tag_prefers_the_total_loss_then_the_densest_curve():
    assert primary_tag(["train/box_loss", "train/loss", "train/cls_loss"], {}) == "train/loss"
    counts = {"train_loss_step": 500, "train_loss_epoch": 10}
    assert primary_tag(["train_loss_epoch", "train_loss_step"], counts) == "train_loss_step"
    assert primary_tag([], {}) is None
