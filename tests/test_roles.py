import pytest

import numpy as np

import curvedoc
from curvedoc.model import RunBuilder
from curvedoc.roles import (Role, infer_role, is_grad_norm, is_perplexity, is_total_norm, is_truncation_share,
                             mark_abbreviated_splits, mark_training_metrics, names_a_term, primary_tag)

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
    "epoch_learning_rate": Role.LR, "x/lr0": Role.LR, "x/lr2": Role.LR, "LearningRate": Role.LR, "Learning Rate": Role.LR,
    "grad_norm": Role.GRAD_NORM, "train/grad_norm": Role.GRAD_NORM, "gradient_norm": Role.GRAD_NORM,
    # a test split stays apart from validation
    "test_loss": Role.TEST_LOSS, "test/acc": Role.TEST_ACC, "Accuracy/test": Role.TEST_ACC,
    # bookkeeping that mentions a split or a loss word is not a curve of the model
    "eval_runtime": Role.OTHER, "eval_samples_per_second": Role.OTHER, "train/loss_scale": Role.OTHER,
    "val/top5_acc": Role.OTHER, "prec1": Role.TRAIN_ACC, "valid_accuracy01": Role.VAL_ACC,
    "accuracy@1": Role.TRAIN_ACC, "accuracy03": Role.OTHER, "val_prec5": Role.OTHER, "hparam/accuracy": Role.OTHER,
    # "top-1" written with a hyphen or an underscore is top1 all the same
    "valid_top-1": Role.VAL_ACC, "Top_1 Acc": Role.TRAIN_ACC, "val_top-5": Role.OTHER, "laptop-1": Role.OTHER,
    "weight_decay": Role.OTHER, "momentum": Role.OTHER,
    # Ultralytics components
    "train/box_loss": Role.TRAIN_LOSS, "val/cls_loss": Role.VAL_LOSS,
    "metrics/accuracy_top1": Role.VAL_ACC, "metrics/accuracy_top5": Role.OTHER, "metrics/train_acc": Role.TRAIN_ACC,
    # a printed "Top-5 Accuracy" (top and 5 words of their own) is top-k too; "Top-1" is the accuracy
    "Top-5_Accuracy": Role.OTHER, "Test_Top_1_Accuracy": Role.TEST_ACC,
    # BasicSR (Real-ESRGAN, GFPGAN, pyiqa) names each loss term l_<name>
    "l_pix": Role.TRAIN_LOSS, "l_g_gan": Role.TRAIN_LOSS, "val/l_pix": Role.VAL_LOSS, "l2_reg": Role.OTHER,
    # a running best restates a curve's extreme, a value kept from an earlier evaluation that one
    "best_g_loss": Role.OTHER, "val/best_acc": Role.OTHER, "keeping_last_val_loss": Role.OTHER,
    "prev_val_loss": Role.OTHER,
    # a change since the epoch before (a public speech model's CSV) is the curve's slope, not the quantity
    "train_loss_delta_%": Role.OTHER, "val_wer_delta_%": Role.OTHER,
    # counts named after the loss they count for (an SFT log's tokens under the loss, GaitSet's triplets with a
    # loss above 0) count something, the loss beside them measures the model
    "num_loss_tokens": Role.OTHER, "full_loss_num": Role.OTHER, "train_mean_nll": Role.TRAIN_LOSS,
}

# Tag names copied from public logs (YOLOv8 results.csv, Detectron2 metrics.json, SB3 and custom RL logs, HF
# trainer states, W&B runs): higher-is-better metrics that are not accuracies are scores, never a loss or an accuracy.
SCORES = [
    "metrics/precision(B)", "metrics/recall(B)", "metrics/mAP50(B)", "metrics/mAP50-95(B)", "bbox/AP", "bbox/AP50",
    "bbox/AP75", "bbox/APs", "bbox/APm", "bbox/APl", "bbox/AP-hazelnut", "AP50", "segm/AP",
    "rollout/ep_rew_mean", "ep_rew_mean", "episode_reward", "running_reward", "mean_episode_rewards",
    "max_episode_rewards", "Rewards/mean_episodes", "Eval/0/episodic_return", "Eval/3/internal_agent_return",
    "ppo_agent_mean_reward_orig", "adversary_reward", "charts/episodic_return", "rollout/return", "AI_return",
    "train/success_rate", "test/success_rate", "metrics/mAP_0.5", "metrics/mAP_0.5:0.95", "eval/rougeLsum",
    "eval_macro_f1",
    "eval_f1", "val_f1_score", "eval_precision", "eval_recall", "val/mIoU", "mean_iou", "eval_bleu", "eval_rouge1",
    "eval_rougeLsum", "val_auc", "roc_auc", "eval_exact_match", "eval_exact", "dice_score", "dice_coef",
    "val_dice", "score", "val_score", "recall@10", "ndcg@10", "psnr", "r2", "Train Prec", "Valid Prec",
    # Keras names MeanIoU and IoU mean_io_u and io_u; a medical classifier's sensitivity and specificity
    "mean_io_u", "val_mean_io_u", "binary_io_u", "val_sensitivity", "specificity",
]
NOT_SCORES = {
    "dice_loss": Role.TRAIN_LOSS, "giou_loss": Role.TRAIN_LOSS, "train/reward_loss": Role.TRAIN_LOSS,
    "rollout/ep_len_mean": Role.OTHER, "train/explained_variance": Role.OTHER, "rollout/ep_rew_std": Role.OTHER,
    "fast_rcnn/false_negative": Role.OTHER, "eval_wer": Role.OTHER, "feature_maps": Role.OTHER,
    "train/ent_coef": Role.OTHER, "time/fps": Role.OTHER, "radio_u": Role.OTHER,
}
# Detectron2, HF SFT and RL logs: where the loss and accuracy roles go
LOSSES_AND_ACCURACIES = {
    "total_loss": Role.TRAIN_LOSS, "loss_cls": Role.TRAIN_LOSS, "loss_box_reg": Role.TRAIN_LOSS,
    "loss_rpn_cls": Role.TRAIN_LOSS, "loss_rpn_loc": Role.TRAIN_LOSS, "loss_mask": Role.TRAIN_LOSS,
    "fast_rcnn/cls_accuracy": Role.TRAIN_ACC, "mask_rcnn/accuracy": Role.TRAIN_ACC,
    "mean_token_accuracy": Role.TRAIN_ACC, "eval_mean_token_accuracy": Role.VAL_ACC, "num_tokens": Role.OTHER,
    "Train Accur.": Role.TRAIN_ACC, "Valid. Accur.": Role.VAL_ACC,  # a public KLUE fine-tune's training_stats.csv
    "train/value_loss": Role.TRAIN_LOSS, "train/policy_gradient_loss": Role.TRAIN_LOSS,
    "train/entropy_loss": Role.TRAIN_LOSS, "Loss/pi": Role.TRAIN_LOSS, "Conductor_Copper_loss": Role.TRAIN_LOSS,
    "initial_phi_port_port1_loss": Role.TRAIN_LOSS, "mean_loss": Role.TRAIN_LOSS,
    "train_bce": Role.TRAIN_LOSS, "val_bce": Role.VAL_LOSS,  # a binary cross-entropy by its initials
}
PERPLEXITIES = {
    "ppl": Role.TRAIN_LOSS, "train/ppl": Role.TRAIN_LOSS, "perplexity": Role.TRAIN_LOSS, "val_ppl": Role.VAL_LOSS,
    "valid/ppl": Role.VAL_LOSS, "eval_perplexity": Role.VAL_LOSS, "test_ppl": Role.TEST_LOSS,
    "main/perp": Role.TRAIN_LOSS, "validation/main/perp": Role.VAL_LOSS,  # Chainer's
}
# (tag, is a total norm)
GRAD_NORMS = [
    ("grad_norm", True), ("train/grad_norm", True), ("grad_2.0_norm_total", True), ("grad_2.0_norm_total_step", True),
    ("grad_inf_norm_total", True), ("total_norm", True), ("global_norm", True), ("gradients/global_norm", True),
    ("gnorm", True), ("gradient_norm", True), ("grad/norm", True),
    ("grad_norm/conv1.weight", False), ("grad_norm/layer4.1.bn2.bias", False), ("grad/fc.weight", False),
    ("grad/encoder.layers.0.self_attn.in_proj_weight", False), ("gradients/fc1.weight.norm", False),
    ("gradients/encoder/norm", False), ("grad_2.0_norm/net.0.weight", False),
    ("grad_2.0_norm/net.0.weight_epoch", False), ("grad_norm_layer3", False), ("layer1.weight.grad.norm", False),
]
NOT_GRAD_NORMS = ["param_norm", "weight_norm", "parameters/fc.weight.norm", "grad_scale", "train/loss_scale",
                  "grad/fc.weight/mean"]


@pytest.mark.parametrize("tag,role", CONVENTIONS.items())
def test_framework_conventions(tag, role):
    assert infer_role(tag) == role


def test_metrics_beside_the_same_names_under_a_validation_split_are_training_s():
    """A public pose estimator's losses.csv: metrics/loss beside val_metrics/loss. Alone, "metrics" is Ultralytics'
    folder of validation metrics; beside its validation twin it is the training split's."""
    roles = {tag: infer_role(tag) for tag in ("metrics/loss", "metrics/mAP50(B)", "val_metrics/loss", "train/box_loss")}
    mark_training_metrics(roles)
    assert roles == {"metrics/loss": Role.TRAIN_LOSS, "metrics/mAP50(B)": Role.SCORE, "val_metrics/loss": Role.VAL_LOSS,
                     "train/box_loss": Role.TRAIN_LOSS}
    alone = {"metrics/loss": infer_role("metrics/loss")}
    mark_training_metrics(alone)
    assert alone == {"metrics/loss": Role.VAL_LOSS}


def test_a_letter_for_validation_beside_the_same_name_with_a_letter_for_training_is_validation_s():
    """A public GNN's losses.csv logs t_loss and v_loss, a Korean classifier's log T_Loss, T_acc, V_Loss, V_acc: the
    pair says what the letters stand for. An agent's Loss/v beside Loss/pi is its value function's loss."""
    roles = {tag: infer_role(tag) for tag in ("t_loss", "v_loss", "T_acc", "V_acc", "tr_loss", "vl_loss")}
    mark_abbreviated_splits(roles)
    assert roles == {"t_loss": Role.TRAIN_LOSS, "v_loss": Role.VAL_LOSS, "T_acc": Role.TRAIN_ACC,
                     "V_acc": Role.VAL_ACC, "tr_loss": Role.TRAIN_LOSS, "vl_loss": Role.VAL_LOSS}
    agent = {tag: infer_role(tag) for tag in ("Loss/pi", "Loss/v", "Loss/entropy")}
    mark_abbreviated_splits(agent)
    assert agent["Loss/v"] == Role.TRAIN_LOSS


def test_a_loaded_log_reads_its_abbreviated_splits(tmp_path):
    path = tmp_path / "losses.csv"
    path.write_text("epoch,t_loss,v_loss\n" + "".join(f"{epoch},{1 / (epoch + 1)},{0.5 / (epoch + 1)}\n"
                                                      for epoch in range(10)))
    (run,) = curvedoc.load(path)
    assert run.roles == {"t_loss": Role.TRAIN_LOSS, "v_loss": Role.VAL_LOSS}


@pytest.mark.parametrize("tag", SCORES)
def test_higher_is_better_metrics_are_scores(tag):
    assert infer_role(tag) == Role.SCORE


@pytest.mark.parametrize("tag,role", {**NOT_SCORES, **LOSSES_AND_ACCURACIES}.items())
def test_losses_accuracies_and_bookkeeping_of_real_logs(tag, role):
    assert infer_role(tag) == role


IN_OTHER_LANGUAGES = {
    "Pérdida": Role.TRAIN_LOSS, "val_pérdida": Role.VAL_LOSS, "Perdua": Role.TRAIN_LOSS, "perda_treino": Role.TRAIN_LOSS,
    "perte_val": Role.VAL_LOSS, "Verlust": Role.TRAIN_LOSS, "Exactitud_validación": Role.VAL_ACC,
    "acurácia_teste": Role.TEST_ACC, "Genauigkeit": Role.TRAIN_ACC, "Точность валидация": Role.VAL_ACC,
    "Потери": Role.TRAIN_LOSS, "Época": Role.OTHER, "验证损失": Role.VAL_LOSS, "accuracy/验证": Role.VAL_ACC,
    # a word of another language that names nothing measured stays unknown; "precisión" is no accuracy here
    "precisión": Role.SCORE,
}


@pytest.mark.parametrize("tag,role", IN_OTHER_LANGUAGES.items())
def test_measurements_named_in_other_languages(tag, role):
    assert infer_role(tag) == role


@pytest.mark.parametrize("tag,role", PERPLEXITIES.items())
def test_a_perplexity_is_a_loss_of_its_split_on_a_log_scale(tag, role):
    assert infer_role(tag) == role and is_perplexity(tag)


def test_a_historys_plural_names_the_loss_itself_and_not_a_term_of_it():
    # a captioning history's {"train_losses": […], "val_losses": […], "perplexities": […]}: the loss, its held-out
    # side and its perplexity, none a term of a multi-term loss (which would leave the run's val-below-train unjudged)
    assert not any(map(names_a_term, ["train_losses", "val_losses", "perplexities", "val_accuracies"]))
    assert names_a_term("val/box_loss") and names_a_term("kl_losses")
    assert is_perplexity("perplexities") and infer_role("val_losses") == Role.VAL_LOSS


def test_trls_share_of_completions_cut_at_the_limit_and_what_is_not_it():
    assert is_truncation_share("completions/clipped_ratio") and is_truncation_share("train/completions/clipped_ratio")
    assert not any(map(is_truncation_share, ["clip_ratio/region_mean", "clip_ratio/high_max", "completion_length",
                                             "completions/mean_length", "objective/clipped_ratio"]))


@pytest.mark.parametrize("tag,role", [
    ("train_losses", Role.TRAIN_LOSS), ("val_losses", Role.VAL_LOSS), ("test_losses", Role.TEST_LOSS),
    ("train_accs", Role.TRAIN_ACC), ("val_accuracies", Role.VAL_ACC),
    # singular words, and plurals that are no measurement, stay as they were
    ("feature_maps", Role.OTHER), ("metrics/accuracy_top1", Role.VAL_ACC), ("epochs", Role.OTHER),
])
def test_a_scripts_lists_of_losses_and_accuracies_are_named_in_the_plural(tag, role):
    assert infer_role(tag) == role


@pytest.mark.parametrize("tag,role", [
    ("val_cross_entropy", Role.VAL_LOSS), ("train_cross_entropy_epoch", Role.TRAIN_LOSS),
    ("val_categorical_crossentropy", Role.VAL_LOSS), ("val_xent", Role.VAL_LOSS), ("test_ce", Role.TEST_LOSS),
    # a policy's or a prediction's entropy is no loss
    ("entropy", Role.OTHER), ("train/policy_entropy", Role.OTHER),
])
def test_a_cross_entropy_named_as_such_is_a_loss(tag, role):
    assert infer_role(tag) == role


def test_a_loss_is_not_a_perplexity():
    assert not any(is_perplexity(tag) for tag in ["loss", "val_loss", "nll_loss", "eval_mean_token_accuracy"])


@pytest.mark.parametrize("tag,total", GRAD_NORMS)
def test_gradient_norm_layouts_and_which_are_totals(tag, total):
    assert infer_role(tag) == Role.GRAD_NORM and is_grad_norm(tag)
    assert is_total_norm(tag) == total


@pytest.mark.parametrize("tag", NOT_GRAD_NORMS)
def test_weight_norms_and_gradient_statistics_are_not_gradient_norms(tag):
    assert infer_role(tag) != Role.GRAD_NORM and not is_grad_norm(tag)


def test_a_tag_the_user_named_a_gradient_norm_counts_as_total():
    assert is_total_norm("my/clipping_monitor")


def test_folder_split_hint_applies_when_the_tag_names_none():
    assert infer_role("epoch_loss", split="val") == Role.VAL_LOSS
    assert infer_role("epoch_loss") == Role.TRAIN_LOSS
    # folder names as discovery passes them: Keras's validation/, a TF Estimator's eval/ and eval_<name>/
    assert infer_role("epoch_loss", split="validation") == Role.VAL_LOSS
    assert infer_role("average_loss", split="eval") == Role.VAL_LOSS
    assert infer_role("accuracy", split="eval_holdout") == Role.VAL_ACC
    assert infer_role("val/box_loss", split="train") == Role.VAL_LOSS  # the tag's own split wins


def roles_of_run(tags: list[str]) -> dict[str, Role]:
    builder = RunBuilder("run", "test")
    for tag in tags:
        builder.add(tag, [0, 1, 2], [1.0, 0.9, 0.8])
    return builder.build().roles


@pytest.mark.parametrize("tags, losses", [
    (["Percent Good", "Mean Squared Error"], {"Mean Squared Error": Role.TRAIN_LOSS}),
    (["mse", "val_mse", "lr"], {"mse": Role.TRAIN_LOSS, "val_mse": Role.VAL_LOSS}),
    (["train_rmse", "val_rmse"], {"train_rmse": Role.TRAIN_LOSS, "val_rmse": Role.VAL_LOSS}),
    # a trajectory predictor's displacement error, best of k predictions
    (["train_minADE", "val_minADE"], {"train_minADE": Role.TRAIN_LOSS, "val_minADE": Role.VAL_LOSS}),
    # TensorFlow 1's tutorials ("Epoch: 0001 cost= 1.18") and PaddlePaddle ("AvgCost=11.56") call the loss a cost
    (["cost", "accuracy"], {"cost": Role.TRAIN_LOSS, "accuracy": Role.TRAIN_ACC}),
    (["AvgCost", "test_AvgCost"], {"AvgCost": Role.TRAIN_LOSS, "test_AvgCost": Role.TEST_LOSS}),
])
def test_a_regression_error_is_the_loss_of_a_run_that_logs_none(tags, losses):
    roles = roles_of_run(tags)
    assert {tag: role for tag, role in roles.items() if role != Role.OTHER and role != Role.LR} == losses


@pytest.mark.parametrize("tags", [["loss", "val_loss", "val_mae"], ["train_error", "val_error"], ["wer", "val_wer"],
                                  ["train_mse", "train_mae", "val_mae"], ["loss", "val_minADE", "val_minFDE"],
                                  ["transaction_cost", "val_transaction_cost"], ["time_cost", "val_time_cost"]])
def test_an_error_beside_a_loss_another_kind_of_error_or_an_error_rate_is_no_loss(tags):
    roles = roles_of_run(tags)
    assert all(roles[tag] == Role.OTHER for tag in tags if "loss" not in tag)


@pytest.mark.parametrize("tags, losses", [
    # a forecaster minimising its scaled MSE, judged on held-out RMSE and MAE: the MSE is the loss, the others
    # are no held-out side of it
    (["train_mse_scaled", "val_rmse", "val_mae"], {"train_mse_scaled": Role.TRAIN_LOSS}),
    (["Train_MSE+L1", "Val_MAE"], {"Train_MSE+L1": Role.TRAIN_LOSS}),  # a DDPM baseline: no train/val pair
    (["mse", "val_mse", "val_mae"], {"mse": Role.TRAIN_LOSS, "val_mse": Role.VAL_LOSS}),
])
def test_of_errors_of_several_kinds_the_one_the_training_split_logs_is_the_loss(tags, losses):
    roles = roles_of_run(tags)
    assert {tag: role for tag, role in roles.items() if role != Role.OTHER} == losses


@pytest.mark.parametrize("tags,adversarial,losses", [
    (["loss_D", "loss_G"], {"loss_D", "loss_G"}, set()),
    (["errD", "errG", "D(x)", "D(G(z))"], {"errD", "errG", "D(x)", "D(G(z))"}, set()),
    (["Loss_D", "Loss_G"], {"Loss_D", "Loss_G"}, set()),
    (["train/d_loss", "train/g_loss"], {"train/d_loss", "train/g_loss"}, set()),
    (["disc_loss", "gen_loss"], {"disc_loss", "gen_loss"}, set()),
    (["discriminator_loss", "generator_loss"], {"discriminator_loss", "generator_loss"}, set()),
    (["D_A", "G_A", "cycle_A", "idt_A", "D_B", "G_B", "cycle_B", "idt_B"], {"D_A", "G_A", "D_B", "G_B"},
     {"cycle_A", "idt_A", "cycle_B", "idt_B"}),
    (["G_GAN", "G_L1", "D_real", "D_fake"], {"G_GAN", "D_real", "D_fake"}, {"G_L1"}),
    (["loss_G_GAN", "loss_G_VGG", "loss_G_feat"], {"loss_G_GAN"}, {"loss_G_VGG", "loss_G_feat"}),
])
def test_a_gans_adversarial_terms_hover_and_its_reconstruction_terms_are_losses(tags, adversarial, losses):
    roles = roles_of_run(tags)
    assert {tag for tag, role in roles.items() if role == Role.ADVERSARIAL} == adversarial
    assert {tag for tag, role in roles.items() if role == Role.TRAIN_LOSS} == losses


@pytest.mark.parametrize("tags", [
    ["loss_D", "loss"],  # one player's letter alone: a depth or distillation loss as likely
    ["actor_loss", "critic_loss", "value_loss"],  # an actor-critic's critic is no discriminator
    ["loss", "D_KL", "recon"],  # a VAE
    ["D_A", "cycle_A"],  # no generator beside it
])
def test_a_player_named_alone_is_no_gan(tags):
    assert Role.ADVERSARIAL not in roles_of_run(tags).values()
    assert infer_role("loss_D") == Role.TRAIN_LOSS


def test_primary_tag_prefers_the_total_loss_then_the_densest_curve():
    assert primary_tag(["train/box_loss", "train/loss", "train/cls_loss"], {}) == "train/loss"
    counts = {"train_loss_step": 500, "train_loss_epoch": 10}
    assert primary_tag(["train_loss_epoch", "train_loss_step"], counts) == "train_loss_step"
    assert primary_tag([], {}) is None


@pytest.mark.parametrize("tag, role", [
    ("train/box_om", Role.TRAIN_LOSS), ("train/dfl_oo", Role.TRAIN_LOSS), ("val/cls_oo", Role.VAL_LOSS),
    ("val/box_om", Role.VAL_LOSS), ("zoom", Role.OTHER), ("box_size", Role.OTHER),
])
def test_yolov10s_terms_of_its_two_heads_are_losses(tag, role):
    # YOLOv10's results.csv names each loss term for its head, one-to-many (om) and one-to-one (oo), without "loss"
    assert infer_role(tag) == role


def test_a_mean_score_is_primary_over_the_extremes_logged_beside_it():
    rllib = ["episode_reward_max", "episode_reward_min", "episode_reward_mean"]
    assert primary_tag(rllib, dict.fromkeys(rllib, 50)) == "episode_reward_mean"
    assert primary_tag(["Top Fitness", "Mean Fitness"], {}) == "Mean Fitness"
    assert primary_tag(["eval/max_reward", "eval/mean_reward"], {}) == "eval/mean_reward"
    assert infer_role("Mean Fitness") == Role.SCORE


def test_a_loss_named_total_is_primary_over_its_components():
    detectron2 = ["loss_box_reg", "loss_cls", "loss_mask", "loss_rpn_cls", "loss_rpn_loc", "total_loss"]
    assert primary_tag(detectron2, dict.fromkeys(detectron2, 16)) == "total_loss"
    assert primary_tag(["policy_gradient_loss", "value_loss", "entropy_loss", "total_loss"], {}) == "total_loss"
    assert primary_tag(["train/loss", "train/value_loss", "train/entropy_loss"], {}) == "train/loss"
    assert primary_tag(["loss_a", "overall_loss", "loss"], {}) == "overall_loss"


def test_the_primary_score_is_a_headline_score_not_precision_or_recall():
    yolo = ["metrics/precision", "metrics/recall", "metrics/mAP_0.5", "metrics/mAP_0.5:0.95"]
    assert primary_tag(yolo, dict.fromkeys(yolo, 50)) == "metrics/mAP_0.5"
    assert primary_tag(["eval_precision", "eval_recall", "eval_f1"], {}) == "eval_f1"
    assert primary_tag(["Valid Prec", "Valid Recall", "Valid F1"], {}) == "Valid F1"


def test_a_real_loss_is_primary_over_a_perplexity():
    assert primary_tag(["valid/ppl", "valid/loss"], {"valid/ppl": 50, "valid/loss": 10}) == "valid/loss"
    assert primary_tag(["ppl", "nll_loss"], {}) == "nll_loss"
    assert primary_tag(["val_ppl"], {}) == "val_ppl"


def build(tags):
    builder = RunBuilder("run", "test")
    for tag, points in tags.items():
        builder.add(tag, np.arange(points), np.ones(points))
    return builder.build()


def test_the_primary_gradient_norm_is_the_total_never_one_layer():
    run = build({"grad_2.0_norm/fc.weight": 500, "grad_2.0_norm/fc.bias": 500, "grad_2.0_norm_total": 50})
    assert run.primary(Role.GRAD_NORM) == "grad_2.0_norm_total"
    assert len(run.tags_with(Role.GRAD_NORM)) == 3
    only_layers = build({"grad_norm/conv1.weight": 100, "grad_norm/fc.weight": 100})
    assert only_layers.primary(Role.GRAD_NORM) is None
    assert set(only_layers.tags_with(Role.GRAD_NORM)) == {"grad_norm/conv1.weight", "grad_norm/fc.weight"}


@pytest.mark.parametrize("tag, role", [("train_kl", "train_loss"), ("val_kl", "val_loss"), ("val_recon", "val_loss"),
                                       ("nll", "train_loss"), ("kl_coef", "other"), ("elbo", "other")])
def test_loss_terms_logged_without_the_word_loss(tag, role):
    assert infer_role(tag).value == role


def test_a_loss_logged_per_iteration_is_the_loss_not_a_term():
    assert primary_tag(["Loss/train", "Loss/iter"], {"Loss/train": 11, "Loss/iter": 5000}) == "Loss/iter"


def test_among_terms_the_loss_that_names_no_known_term_is_the_one_to_plot():
    """A VAE's loss_vae beside loss_recon, loss_kl and loss_mmd (public-dev11): the shortest name, loss_kl, is a term."""
    from curvedoc.roles import primary_tag

    tags = ["loss_vae", "loss_recon", "loss_kl", "loss_mmd"]
    assert primary_tag(tags, dict.fromkeys(tags, 400)) == "loss_vae"
    yolo = ["train/box_loss", "train/cls_loss", "train/dfl_loss"]
    assert primary_tag(yolo, dict.fromkeys(yolo, 50)) == "train/box_loss"  # all terms: the first, as before


def test_the_primary_learning_rate_is_no_group_that_warms_down_to_the_schedule():
    """Ultralytics' x/lr0 (biases) starts at warmup_bias_lr 0.1 and comes down to lr0 0.01 while x/lr1 and x/lr2 warm
    up from 0 to it: the schedule is the latter's."""
    epochs = np.arange(100)
    schedule = 0.01 * (1 - epochs / 100)
    warm_up = np.r_[[0.0033, 0.0066], schedule[2:]]
    warm_down = np.r_[[0.0962, 0.05], schedule[2:]]
    builder = RunBuilder("run", "test")
    for tag, values in (("x/lr0", warm_down), ("x/lr1", warm_up), ("x/lr2", warm_up)):
        builder.add(tag, epochs, values)
    assert builder.build().primary(Role.LR) in ("x/lr1", "x/lr2")
