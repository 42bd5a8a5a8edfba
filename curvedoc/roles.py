"""What a tag measures, inferred from the naming conventions that real training frameworks use.

Rules are written against roles, never against tag names, so a rule works the same on a Keras CSV log and a
PyTorch event file. Several tags may share a role (Lightning's ``train_loss_step`` and ``train_loss_epoch``,
Ultralytics' ``train/box_loss`` and ``train/cls_loss``); :func:`primary_tag` picks the one a person would plot.

Besides the roles, two readings of a tag that the rules need and a role cannot carry:

- :func:`is_perplexity`: a perplexity (``ppl``, ``val_ppl``, ``eval_perplexity``) has the loss role of its split,
  but its values are exp(loss): a rule compares ``ln(value)`` with other losses and with ln(vocabulary size).
- :func:`is_total_norm`: gradient norms come as one global norm (``grad_norm``, ``grad_2.0_norm_total``,
  ``global_norm``) and per layer or per parameter (``grad_norm/<param>``, ``grad/<param>``,
  ``gradients/<name>/norm``, Lightning's ``grad_2.0_norm/<param>``, ``<layer>.weight.grad.norm``). All have the
  role ``grad_norm``; :meth:`curvedoc.model.Run.primary` gives only a total one.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from enum import Enum


class Role(str, Enum):
    TRAIN_LOSS = "train_loss"
    VAL_LOSS = "val_loss"
    TEST_LOSS = "test_loss"
    TRAIN_ACC = "train_acc"
    VAL_ACC = "val_acc"
    TEST_ACC = "test_acc"
    LR = "lr"
    GRAD_NORM = "grad_norm"
    # Higher is better and not an accuracy: RL rewards, returns and success rates, mAP, precision/recall/F1, IoU,
    # BLEU/ROUGE, AUC.
    # No split: such metrics are mostly computed once per evaluation, and their chance level is not 1/n.
    SCORE = "score"
    # A GAN's generator or discriminator term (D_A, loss_G, errD, G_GAN): it hovers by design while both players
    # learn, so no rule expects it to fall; NaN/Inf and sudden jumps still judge it. See :func:`mark_gan_terms`.
    ADVERSARIAL = "adversarial"
    OTHER = "other"

    def __str__(self) -> str:
        return self.value


_SPLIT_WORDS = {
    "train": "train", "training": "train", "trn": "train", "batch": "train",
    "val": "val", "valid": "val", "validation": "val", "eval": "val", "evaluation": "val", "dev": "val",
    # a printed line names its split with a verb as often as a noun: "Validate: Loss 1.98 Acc@1 25.0"
    "validate": "val", "validating": "val", "evaluate": "val", "evaluating": "val",
    "test": "test", "testing": "test", "holdout": "test", "tst": "test",
}
# The accuracy of each split and the loss measured on the same split
LOSS_OF_ACCURACY = {Role.TRAIN_ACC: Role.TRAIN_LOSS, Role.VAL_ACC: Role.VAL_LOSS, Role.TEST_ACC: Role.TEST_LOSS}
HELD_OUT_ACC = (Role.VAL_ACC, Role.TEST_ACC)
# Throughput, timing and bookkeeping tags mention a split ("eval_runtime") but are not curves of the model.
_NOT_A_METRIC = {
    "runtime", "time", "samples", "per", "second", "seconds", "steps", "flos", "memory", "mem", "epoch_time",
    "throughput", "count", "scale", "scaler", "weight", "weights", "coef", "coefficient",
    "hparam", "hparams",  # add_hparams' metric_dict: one summary value per run, not a curve
    "delta",  # train_loss_delta_%: the change since the epoch before, a slope of the curve and not the quantity
    "num",  # num_loss_tokens (tokens the loss was averaged over), GaitSet's full_loss_num (triplets with a loss > 0)
}
# "coef" names a loss weight (ent_coef, vf_coef) except in these overlap metrics (Keras's dice_coef)
_OVERLAP_METRICS = {"dice", "jaccard"}
# ... and the overlap metrics a segmentation run logs beside (or instead of) its pixel accuracy
OVERLAP_WORDS = frozenset(_OVERLAP_METRICS | {"iou", "miou"})
# "Acc@1" (timm, pytorch/examples) and the older "Prec@1" are top-1 accuracy; "@5" is top-5
# prec1 is the PyTorch ImageNet example's top-1 accuracy (prec5 its top-5); prec alone is precision, a score
_ACC_WORDS = {"acc", "accuracy", "acc1", "top1", "accu", "accur", "acc@1", "prec@1", "prec1", "top@1", "accuracy@1",
              "accuracy1", "accuracy01"}  # accuracy01: Catalyst's top-1 accuracy (accuracy03 is its top-3)
_TOPK = re.compile(r"^(top|acc|prec)_?@?[2-9]\d*$")
_LR_WORDS = {"lr", "learning_rate", "learningrate", "learning-rate"}
_LR_OF_GROUP = re.compile(r"^lr\d+$")  # YOLOv5's x/lr0, x/lr1: one learning rate per parameter group
_PERPLEXITY_WORDS = {"ppl", "perp", "perplexity", "perplexities"}  # perp: Chainer's main/perp
# Terms of a loss logged without the word "loss" (a VAE's train_kl and val_recon): losses all the same (an ELBO is
# not: it is logged either way up)
_LOSS_TERM_WORDS = {"kl", "kld", "recon", "reconstruction", "nll"}
# Words that name one term of a multi-term loss, whatever the model: a regulariser, a VAE's, a detector's
_KNOWN_TERM_WORDS = _LOSS_TERM_WORDS | {"mmd", "reg", "regularization", "l1", "l2", "aux", "box", "bbox", "cls",
                                        "obj", "dfl", "iou", "giou", "mask", "rpn", "seg", "ctc", "commitment",
                                        "vq", "perceptual", "adv", "gp"}
# YOLOv10's results.csv: each loss term of its one-to-many ("om") and one-to-one ("oo") heads
_YOLO_TERMS = {"box", "cls", "dfl"}
_YOLO_HEADS = {"om", "oo"}
# BasicSR and the image-restoration code built on it (Real-ESRGAN, GFPGAN, pyiqa) name each loss term l_<name>:
# l_pix, l_percep, l_g_gan, l_d_real, l_mos
_BASICSR_LOSS = "l"
# a curve's running best so far (best_loss, "Best val_acc=1.0000"): it restates the curve's extreme
RUNNING_BEST = "best"
# words that say a value is restated rather than measured at that point: its running best, or one carried over
# from an earlier point ("Skipping validation (keeping last val_loss=inf)", prev_val_loss)
RESTATED_WORDS = {RUNNING_BEST, "keeping", "kept", "previous", "prev"}
# A cross-entropy named as such, without the word "loss" (Keras's categorical_crossentropy metric, torchmetrics'
# val_cross_entropy, xent, ce); "entropy" alone is a policy's or a prediction's, no loss
_CROSS_ENTROPY_WORDS = {"crossentropy", "xent", "ce", "bce"}  # bce: binary cross-entropy
# One word of a tag naming a higher-is-better metric; digits and @k after a stem are its variants (mAP50, AP75,
# recall@10, rouge2, rougeLsum, f1). Detectron2 splits AP by object size (APs, APm, APl). The FCN paper's "mean IU"
# (HRNet's MeanIU) is mIoU.
_SCORE_WORD = re.compile(
    r"^(?:reward|rewards|rew|return|returns|fitness|success|score|scores|f1score|fscore|"
    r"m?ap\d*|ap[lms]|precision|prec(?=$)|recall|ndcg|mrr|hits?(?=@)|f[12]|fb1|fbeta|"
    r"(?:mean)?m?iou|(?:mean)?iu|jaccard|dice|bleu|sacrebleu|rouge[a-z]*|meteor|cider|chrf|bertscore|"
    r"auc|auroc|auprc|roc|exact|psnr|ssim|r2|mcc|kappa|spearmanr?|pearsonr?|srcc|plcc|krcc|sensitivity|specificity)"
    r"(?:\d+|@\d+)?$"
)
# ... and those of them only an evaluation computes, never a training batch
_EVALUATION_SCORE_WORD = re.compile(
    r"^(?:(?:mean)?m?iou|(?:mean)?iu|m?ap\d*|ap[lms]|bleu\d*|sacrebleu|rouge[a-z0-9]*|meteor|cider|chrf)$")
# The spread of a score is not a score: higher is not better
_SPREAD_WORDS = {"std", "var", "variance", "stddev"}
_GRAD_NORM = re.compile(r"(^|[^a-z])(grad(ient)?s?[_\-/ ]?norm|global[_\-]?norm|gnorm|grad_l2)($|[^a-z])")
_GRAD_WORDS = {"grad", "grads", "gradient", "gradients"}
# Under a grad/ or gradients/ prefix a scalar is a norm unless it names a statistic that is not one
_NOT_A_NORM = {"mean", "std", "var", "variance", "min", "median", "hist", "histogram", "sparsity", "zero", "zeros",
               "scale", "noise", "cosine", "cos", "angle"}
# Words of a gradient-norm tag that name no layer: the norm itself, its order, its split, where it was measured
_TOTAL_NORM_WORDS = _GRAD_WORDS | {
    "norm", "norms", "gnorm", "total", "global", "overall", "all", "l2", "inf", "grad_l2", "step", "epoch", "mean",
    "avg", "clipped", "unclipped", "clip", "pre", "post", "before", "after", "raw", "model",
} | set(_SPLIT_WORDS)


# What a log written in another language calls its measurements, as the English words the roles know (accents
# stripped: ``Pérdida``, ``Época``): Spanish, Portuguese, Catalan, Italian, French, German and Dutch; Chinese and
# Russian below.
# Only words that name nothing else in English; "precisión" is left out, for it names accuracy in some logs and
# precision in others.
FOREIGN_WORDS = {
    **dict.fromkeys(("perdida", "perdidas", "perda", "perdas", "perdua", "perdita", "perte", "verlust", "verlies"),
                    "loss"),
    **dict.fromkeys(("exactitud", "acuracia", "accuratezza", "exactitude", "genauigkeit", "nauwkeurigheid"),
                    "accuracy"),
    **dict.fromkeys(("epoca", "epocas", "epoche", "epochen", "epoque", "epoques"), "epoch"),
    **dict.fromkeys(("entrenamiento", "treino", "treinamento", "entrenament", "addestramento", "entrainement"),
                    "train"),
    **dict.fromkeys(("validacion", "validacao", "validacio", "validazione", "validierung", "validatie"), "val"),
    **dict.fromkeys(("prueba", "teste"), "test"),
}
# Chinese, longest first, so that 训练集 (the training set) is not read as 训练 (train) followed by something else
_CJK_WORDS = {
    "训练集": "train set", "验证集": "val set", "测试集": "test set", "训练": "train", "验证": "val", "测试": "test",
    "损失": "loss", "准确率": "acc", "准确度": "acc", "正确率": "acc", "学习率": "lr", "轮次": "epoch",
}
_CJK = re.compile("|".join(sorted(_CJK_WORDS, key=len, reverse=True)))
_CYRILLIC_WORDS = {"потери": "loss", "потеря": "loss", "эпоха": "epoch", "точность": "accuracy", "обучение": "train",
                   "валидация": "val", "тест": "test"}
_FOREIGN_WORD = re.compile(r"(?<![A-Za-z])(?:" + "|".join(FOREIGN_WORDS) + r")(?![A-Za-z])", re.IGNORECASE)
_ACCENTED = re.compile("[\u00c0-\u024f]")  # Latin-1 Supplement and Latin Extended-A/B letters
_COMBINING_MARK = re.compile("[\u0300-\u036f]")
_CYRILLIC_LETTER = re.compile("[\u0400-\u04ff]")
_CYRILLIC = re.compile("|".join(sorted(_CYRILLIC_WORDS, key=len, reverse=True)), re.IGNORECASE)


# "top-1" and "top_1" are top1, one word (the accuracy a table or a report headed in words names so)
_TOP_K = re.compile(r"(?<![A-Za-z])(top)[-_ ](?=\d)", re.IGNORECASE)


def tokens(tag: str) -> list[str]:
    """Lower-case words of a tag: separators split, and so does camelCase (``valLoss`` → val, loss); a word of
    another language that names a measurement as its English word (``Pérdida`` → loss, see FOREIGN_WORDS)."""
    if not tag.isascii():
        tag = _in_ascii_letters(tag)
    if "op" in tag or "OP" in tag:  # tokens runs for every tag a rule asks about: the substitution only where it can
        tag = _TOP_K.sub(r"\1", tag)
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", tag)
    return [FOREIGN_WORDS.get(t, t) for t in re.split(r"[^A-Za-z0-9@]+", spaced.lower()) if t]


def _in_ascii_letters(tag: str) -> str:
    """The Chinese and Russian words of a measurement in English, and accented Latin letters without their
    accents."""
    if _CJK.search(tag):
        tag = _CJK.sub(lambda match: f" {_CJK_WORDS[match[0]]} ", tag)
    # a text log's progress bars are not ASCII either (█, ━): the word searches, slow without a literal to look for
    # first, run only where a letter of their alphabet is
    if _CYRILLIC_LETTER.search(tag):
        tag = _CYRILLIC.sub(lambda match: f" {_CYRILLIC_WORDS[match[0].lower()]} ", tag)
    if _ACCENTED.search(tag):
        tag = _COMBINING_MARK.sub("", unicodedata.normalize("NFD", tag))
    return tag


def in_english(text: str) -> str:
    """A line of text that is not ASCII with the measurement words of other languages in English (``Época 3/10 -
    pérdida: 0.52`` → ``epoch 3/10 - loss: 0.52``), as :func:`tokens` reads them in a tag."""
    if not _ACCENTED.search(text):
        return _in_ascii_letters(text)  # no Latin alphabet but English's: its words are English's too
    return _FOREIGN_WORD.sub(lambda match: FOREIGN_WORDS[match[0].lower()], _in_ascii_letters(text))


# Ultralytics files its validation metrics under "metrics/" (metrics/accuracy_top1, metrics/mAP50(B)); a split
# named anywhere in the tag still wins.
_FALLBACK_SPLIT_WORDS = {"metrics": "val"}


def split_of(words: list[str]) -> str | None:
    found = [_SPLIT_WORDS[w] for w in words if w in _SPLIT_WORDS]
    fallback = [_FALLBACK_SPLIT_WORDS[w] for w in words if w in _FALLBACK_SPLIT_WORDS]
    return (found or fallback or [None])[0]


def singular(word: str) -> str:
    """``word`` in the singular, as a tag names one measurement: losses → loss, accuracies → accuracy, accs → acc,
    f1s → f1. Words of two letters (``bs``) and those ending in ``ss`` or ``us`` stay as they are."""
    if len(word) <= 2 or word.endswith(("ss", "us")):
        return word
    if word.endswith("sses"):
        return word[:-2]
    if word.endswith("ies"):
        return word[:-3] + "y"
    return word[:-1] if word.endswith("s") else word


def infer_role(tag: str, split: str | None = None, loss: bool = False) -> Role:
    """The role of ``tag``; ``split`` is a hint from where the tag was found: a folder naming its split (Keras's
    ``validation/``, a TF Estimator's ``eval/`` or ``eval_<name>/``); ``loss`` says the log's format prints only
    losses whatever their names (the CycleGAN/pix2pix ``loss_log.txt``: ``D_A``, ``cycle_A``)."""
    lowered = tag.lower()
    words = tokens(tag)
    if not words:
        return Role.OTHER
    if is_grad_norm(tag):
        return Role.GRAD_NORM
    if (
        any(w in _LR_WORDS or _LR_OF_GROUP.match(w) for w in words)
        or "learning_rate" in "_".join(words)  # learning-rate, InsightFace's LearningRate
        or re.search(r"(^|[/_\-])lr($|[/_\-])", lowered)
    ):
        return Role.LR
    if any(w in _NOT_A_METRIC for w in words) and not (_OVERLAP_METRICS & set(words)):
        return Role.OTHER
    if not RESTATED_WORDS.isdisjoint(words):
        return Role.OTHER  # best_g_loss, val/best_acc: the curve's running extreme, which measures nothing new
    # a script's lists of them are named in the plural (train_losses, val_accs, accuracies)
    measured = [singular(w) for w in words]
    if loss or any(w == "loss" or w.endswith("loss") or w in _PERPLEXITY_WORDS for w in measured) or (
            _yolo_head_term(words)) or (
            _BASICSR_LOSS in words[:-1]) or (
            (_LOSS_TERM_WORDS | _CROSS_ENTROPY_WORDS) & set(words) and not _ACC_WORDS & set(words)) or (
            {"cross", "entropy"} <= set(words)):
        kind = "loss"
    elif any(w in _ACC_WORDS or w.endswith("accuracy") for w in measured):
        # top5_acc, acc@5; and Top-5 Accuracy, whose "top" and "5" are words of their own
        if any(_TOPK.match(w) for w in words) or any(
                word == "top" and following.isdigit() and int(following) >= 2
                for word, following in itertools.pairwise(words)):
            return Role.OTHER  # top-5 accuracy has no chance level of 1/n
        kind = "acc"
    elif _names_a_score(tag, words):
        return Role.SCORE
    else:
        return Role.OTHER
    split = split_of(words) or (split_of(tokens(split)) if split else None) or "train"
    return Role(f"{split}_{kind}")


def _yolo_head_term(words: list[str]) -> bool:
    """YOLOv10's loss terms, each named for its head without the word loss: ``train/box_om`` (the one-to-many
    head's box term), ``val/cls_oo`` (the one-to-one head's class term)."""
    return any(term in _YOLO_TERMS and head in _YOLO_HEADS for term, head in itertools.pairwise(words))


def _names_a_score(tag: str, words: list[str]) -> bool:
    candidates = _score_candidates(tag, words)
    return any(_SCORE_WORD.match(w) for w in candidates) and not _SPREAD_WORDS & candidates


def _score_candidates(tag: str, words: list[str]) -> set[str]:
    # camelCase splitting breaks "mIoU" into m, io, u: the unsplit words are tried too; Keras names its MeanIoU
    # metric the same way, "mean_io_u" (and IoU "io_u"), whose io and u are one word
    candidates = set(words) | set(tokens(tag.lower()))
    return candidates | {"iou"} if {"io", "u"} <= candidates else candidates


def is_evaluation_score(tag: str) -> bool:
    """True when ``tag`` names a score a training loop computes on an evaluation set, not on its batches: overlap
    (mIoU, the FCN paper's mean IU), detection (mAP, AP) and generation (BLEU, ROUGE …) scores."""
    return any(map(_EVALUATION_SCORE_WORD.match, _score_candidates(tag, tokens(tag))))


# A regression's error, the quantity its loss is (MSE) or is judged by (RMSE, MAE): "Mean Squared Error", "val_rmse"
# ... and a trajectory predictor's average and final displacement errors (minADE, minFDE: metres off, best of k)
_REGRESSION_ERROR_WORDS = {"mse", "rmse", "nrmse", "msle", "rmsle", "mae", "ade", "fde"}
_ERROR_METRIC_WORDS = _REGRESSION_ERROR_WORDS | {"mape", "smape", "wer", "cer", "error", "err"}


def is_error_metric(tag: str) -> bool:
    """True when ``tag`` names an error a run measures, lower being better, that no rule reads as a loss: a
    regression's MAE or RMSE, a recogniser's WER or CER, a classification error. It turning NaN or Inf is the
    run's numbers breaking as a loss's would."""
    return not _ERROR_METRIC_WORDS.isdisjoint(tokens(tag))


_ERROR_KIND_WORDS = {"squared", "absolute"}  # "Mean Squared Error", "mean absolute error"
# What TensorFlow 1's tutorials, Andrew Ng's courses and PaddlePaddle call the loss ("Epoch: 0001 cost= 1.18",
# "Cost after iteration 100: 0.69", "AvgCost=11.56"), named alone or with how it was averaged; a cost of something
# else (an agent's transaction_cost, a time cost) names that something
_COST = "cost"
# The words that say a value is an average (of a metric's batches, an agent's episodes)
AVERAGE_WORDS = frozenset({"avg", "average", "mean"})
_COST_QUALIFIERS = AVERAGE_WORDS | {"current", "total", "epoch", "batch", "running"}


_TRAINING_TWIN = {Role.VAL_LOSS: Role.TRAIN_LOSS, Role.VAL_ACC: Role.TRAIN_ACC}


def mark_training_metrics(roles: dict[str, Role]) -> None:
    """A tag read as validation's for its "metrics" alone (Ultralytics' folder for them, metrics/loss) beside the
    same name under a validation split (val_metrics/loss) is training's: the script logs its two splits so."""
    held_out = {tuple(word for word in words if word not in _SPLIT_WORDS) for tag in roles
                if split_of(words := tokens(tag)) == "val" and not _SPLIT_WORDS.keys().isdisjoint(words)
                and not _FALLBACK_SPLIT_WORDS.keys().isdisjoint(words)}
    for tag, role in roles.items():
        words = tokens(tag)
        if role in _TRAINING_TWIN and _SPLIT_WORDS.keys().isdisjoint(words) and tuple(words) in held_out:
            roles[tag] = _TRAINING_TWIN[role]


# A split abbreviated to a letter or two (t_loss and v_loss, T_acc and V_acc, tr_loss and vl_loss): a lone "v" is
# as often a value function's (an agent's Loss/v beside Loss/pi), so it names validation only beside the same name
# with a training abbreviation
_TRAIN_ABBREVIATIONS = frozenset({"t", "tr", "trn"})
_VAL_ABBREVIATIONS = frozenset({"v", "vl"})
_HELD_OUT_TWIN = {train: val for val, train in _TRAINING_TWIN.items()}


def mark_abbreviated_splits(roles: dict[str, Role]) -> None:
    """A tag that names its split with a letter or two of validation's (v, vl) beside the same name with a letter
    or two of training's (t, tr, trn) is validation's: the pair says what the letters stand for."""
    named = {tuple(tokens(tag)) for tag in roles}
    for tag, role in roles.items():
        if role not in _HELD_OUT_TWIN:
            continue
        words = tokens(tag)
        for index, word in enumerate(words):
            if word in _VAL_ABBREVIATIONS and any((*words[:index], short, *words[index + 1:]) in named
                                                  for short in _TRAIN_ABBREVIATIONS):
                roles[tag] = _HELD_OUT_TWIN[role]
                break


def mark_errors_as_losses(roles: dict[str, Role]) -> None:
    """In a run that logs no loss under that name, gives each regression error it logs (MSE, RMSE, MAE: a
    hand-written loop's "Mean Squared Error", a Keras regression metric) the loss role of its split: it is the
    loss, or what the loss is judged by; when they are all one kind of error, so that a train and a validation
    error compare (a train MSE beside a validation MAE do not). Errors of several kinds: the one kind the training
    split logs is what the loop minimises, the loss, and the held-out errors of that kind compare with it; the
    other kinds are left as they are (a forecaster's ``train_mse_scaled`` beside ``val_rmse`` and ``val_mae``). An
    error rate (a classifier's "error", WER) is not a loss: left as it is."""
    if any(role in (Role.TRAIN_LOSS, Role.VAL_LOSS, Role.TEST_LOSS) for role in roles.values()):
        return
    kinds = {}  # each error's naming words (what kind of error it is) and its split
    for tag, role in roles.items():
        if role is not Role.OTHER:
            continue
        words = tokens(tag)
        named = set(words)
        if named & _REGRESSION_ERROR_WORDS or (named & _ERROR_KIND_WORDS and "error" in named):
            kinds[tag] = frozenset(named & (_REGRESSION_ERROR_WORDS | _ERROR_KIND_WORDS)), split_of(words) or "train"
        elif _COST in named and named <= {_COST, *_COST_QUALIFIERS, *_SPLIT_WORDS}:
            kinds[tag] = frozenset({_COST}), split_of(words) or "train"
    every = {kind for kind, _ in kinds.values()}
    trained = {kind for kind, split in kinds.values() if split == "train"}
    chosen = every if len(every) == 1 else trained if len(trained) == 1 else set()
    for tag, (kind, split) in kinds.items():
        if kind in chosen:
            roles[tag] = Role(f"{split}_loss")


def is_perplexity(tag: str) -> bool:
    """True when ``tag`` logs a perplexity, exp(cross-entropy): read it as ``ln(value)`` to compare it with a loss."""
    return bool(_PERPLEXITY_WORDS & set(tokens(tag)))


def is_truncation_share(tag: str) -> bool:
    """True when ``tag`` logs the share of generated completions cut at the length limit: TRL's
    ``completions/clipped_ratio`` (GRPO, RLOO, online DPO), a count of the generations the trainer made."""
    words = tokens(tag)
    return len(words) >= 2 and words[-2:] == ["clipped", "ratio"] and any(w.startswith("completion") for w in words)


def epoch_average_of(tag: str) -> str | None:
    """The tag Lightning logs a metric's epoch average under when the metric is logged each step as well
    (``train_loss_step`` → ``train_loss_epoch``), or None for a tag that is no such per-step metric."""
    return tag[:-len("_step")] + "_epoch" if tag.endswith("_step") else None


def is_generation_length(tag: str) -> bool:
    """True when ``tag`` logs the mean length, in tokens, of the outputs an evaluation generated: the Seq2SeqTrainer's
    ``eval_gen_len`` (``predict_with_generate``), ``test_gen_len``, ``val/generation_length``."""
    words = [word for word in tokens(tag) if word not in _SPLIT_WORDS]
    return len(words) == 2 and words[0] in ("gen", "generation") and words[1] in ("len", "length")


def measures_generations(tag: str) -> bool:
    """True when ``tag`` is a curve of what the run generated (see :func:`is_truncation_share` and
    :func:`is_generation_length`): generated outputs a rule can judge without the outputs themselves."""
    return is_truncation_share(tag) or is_generation_length(tag)


def is_grad_norm(tag: str) -> bool:
    """True when ``tag`` names a gradient norm, total or of one layer. Weight and parameter norms are not."""
    words = tokens(tag)
    if _GRAD_NORM.search(tag.lower()) or (_GRAD_WORDS & set(words) and {"norm", "norms"} & set(words)):
        return True
    if [w for w in words if w not in _SPLIT_WORDS] == ["total", "norm"]:
        return True  # what torch.nn.utils.clip_grad_norm_ returns, logged under its variable's name
    # grad/<param>, gradients/<name>: a scalar logged per parameter under a gradient prefix
    first = re.split(r"[/.]", tag.lower(), maxsplit=1)[0]
    return first in _GRAD_WORDS and "/" in tag and len(words) > 1 and words[-1] not in _NOT_A_NORM


def is_total_norm(tag: str) -> bool:
    """True unless ``tag`` is the gradient norm of one layer or parameter (``grad_norm/conv1.weight``,
    ``grad_2.0_norm/fc.bias``, ``gradients/encoder/norm``): its words name nothing but the norm, its order, its
    split and where it was measured (``grad_norm``, ``train/grad_norm``, ``grad_2.0_norm_total``, ``total_norm``,
    ``global_norm``). A tag not named as a gradient norm at all (one a user gave the role) counts as total."""
    if not is_grad_norm(tag):
        return True
    return all(w in _TOTAL_NORM_WORDS or w.isdigit() for w in tokens(tag))


def norm_order(tag: str) -> str:
    """The order of the norm a gradient-norm tag measures: ``1`` (``grad_l1_norm``, Lightning's ``grad_1.0_norm``),
    ``inf`` (``grad_inf_norm``, ``linf``, ``max``), else ``2``, the norm every framework means unnamed. Norms of
    different orders of one tensor differ by orders of magnitude (an L1 norm sums every element), so only those
    of one order compare."""
    words = tokens(tag)
    if not {"inf", "linf", "max"}.isdisjoint(words):
        return "inf"
    if "l1" in words:
        return "1"
    for index, word in enumerate(words):
        if word == "norm" and index >= 1:
            # Lightning's "grad_2.0_norm": the order's digits are split at its point
            order = words[index - 2] if words[index - 1] == "0" and index >= 2 else words[index - 1]
            if order.isdigit():
                return order
    return "2"


# Words that name the loss (or accuracy) itself, not a term of it; plurals too (a history's train_losses, perplexities)
_LOSS_ALONE = {"loss", "losses", "acc", "accuracy", "accuracies"} | _PERPLEXITY_WORDS
# Precision and recall are the halves of a detector's or a classifier's headline score (mAP, F1)
_PARTIAL_SCORE = re.compile(r"^(precision|prec|recall)(\d+|@\d+)?$")
# A loss named as the sum of the others (Detectron2's total_loss, a PPO total_loss)
_TOTAL_WORDS = {"total", "overall", "sum", "combined", "full"}
# The extremes of a window of episodes or of a population, logged beside its mean: the best or worst one, not the
# level the run is at
_EXTREME_WORDS = {"max", "min", "maximum", "minimum", "top", "worst", "highest", "lowest", "peak"}
# Words that say when or how a loss was logged, not which loss it is (nanoGPT's Loss/iter beside Loss/train)
_NOT_NAMING_THE_CURVE = {"epoch", "step", "mean", "avg", "iter", "iteration", "it"}


def names_a_total(tag: str) -> bool:
    """True when the tag names a loss as the sum of others (``total_loss``, ``loss_overall``)."""
    return bool(_TOTAL_WORDS & set(tokens(tag)))


def _naming_words(tag: str) -> list[str]:
    """The words of ``tag`` that say which curve it is: not its split, bookkeeping, or "total"."""
    return [w for w in tokens(tag) if w not in _SPLIT_WORDS and w not in _NOT_NAMING_THE_CURVE
            and w not in _TOTAL_WORDS]


def names_a_term(tag: str) -> bool:
    """True when the tag names one term of a multi-term loss (``loss_cls``, ``val/box_loss``, ``kl_loss``):
    words beyond its split, the loss itself and bookkeeping (``train_loss_epoch`` is the loss, not a term)."""
    words = _naming_words(tag)
    return bool(words) and not set(words) <= _LOSS_ALONE


def same_curve_named(tag: str, other: str) -> bool:
    """True when two tags name the same curve of different splits (``val/obj_loss`` and ``train/obj_loss``)."""
    return _naming_words(tag) == _naming_words(other)


def primary_tag(tags: list[str], n_points: dict[str, int]) -> str | None:
    """The tag a person would plot for a role: a loss before a perplexity of it; the total loss (named ``total``,
    ``overall``, ``sum``, or bare ``loss``) over its components; a headline score (mAP, F1, a return) over
    precision or recall; a mean over the extremes logged beside it (RLlib's ``episode_reward_mean`` over
    ``episode_reward_max`` and ``_min``, a genetic algorithm's ``Mean Fitness`` over its ``Top Fitness``); then the
    densest curve."""
    if not tags:
        return None

    def rank(tag: str) -> tuple[int, int, int, int, int, int, int]:
        words = _naming_words(tag)
        total = (2 if names_a_total(tag) else 1) if words and set(words) <= _LOSS_ALONE else 0
        headline = not any(_PARTIAL_SCORE.match(w) for w in words)
        typical = _EXTREME_WORDS.isdisjoint(words)
        # among terms, one that names no known term is the model's own loss (a VAE's loss_vae beside loss_kl)
        unnamed_term = not (_KNOWN_TERM_WORDS & set(words))
        return (not is_perplexity(tag), total, headline, typical, unnamed_term, n_points.get(tag, 0), -len(tag))

    return max(tags, key=rank)


# The two players of a GAN as tags name them: D_A, errD, loss_D, d_loss, disc_loss, netD; G_A, errG, gen_loss, and a
# WGAN's critic. Alone each is ambiguous (D_KL, an actor-critic's critic_loss): a run is a GAN when its terms name
# both players, or one names a GAN outright (G_GAN, gan_loss).
_PLAYERS = {"d": "d", "dis": "d", "disc": "d", "discriminator": "d", "critic": "d",
            "g": "g", "gen": "g", "generator": "g"}
_GAN_WORDS = {"gan"}
_ADVERSARIAL_WORDS = _GAN_WORDS | {"adv", "adversarial"}
# What a GAN's generator minimises besides fooling its discriminator, and should bring down like any loss:
# reconstruction (pix2pix's G_L1), cycle-consistency and identity (CycleGAN's cycle_A, idt_A), perceptual and
# feature-matching terms
_RECONSTRUCTION_WORDS = {
    "l1", "l2", "mse", "mae", "cycle", "cyc", "idt", "identity", "rec", "recon", "reconstruction", "vgg",
    "perceptual", "percep", "feat", "fm", "content", "pixel", "style", "tv",
}
# Words around a player's letter that leave it the player's term: errD, netD, lossD
_PLAYER_PREFIXES = {"loss", "losses", "err", "error", "errors", "net"}
_GAN_TERM_ROLES = (Role.TRAIN_LOSS, Role.VAL_LOSS, Role.TEST_LOSS, Role.OTHER)


def _player(words: list[str]) -> str | None:
    """``"d"`` or ``"g"`` when the first word naming the curve is a GAN player's (``D_A``, ``errG``), else None."""
    named = [w for w in words if w not in _PLAYER_PREFIXES]
    return _PLAYERS.get(named[0]) if named else None


def mark_gan_terms(roles: dict[str, Role]) -> None:
    """In a GAN's run, gives each player's adversarial term the role ``ADVERSARIAL`` (a discriminator or
    generator loss hovers while neither side wins; judged as a loss that must fall, it would be flat or on a
    plateau), and each reconstruction term (``G_L1``, ``cycle_A``, ``idt_A``) the loss role of its split, as the
    run's losses that must fall. Other runs' roles are left as they are."""
    terms: dict[str, tuple[set[str], str | None]] = {}  # each candidate term's naming words, and its player
    for tag, role in roles.items():
        if role in _GAN_TERM_ROLES:
            named = _naming_words(tag)
            terms[tag] = set(named), _player(named)
    if not ({"d", "g"} <= {player for _, player in terms.values()}
            or any(_GAN_WORDS & words for words, _ in terms.values())):
        return
    for tag, (words, player) in terms.items():
        if _RECONSTRUCTION_WORDS & words:
            if roles[tag] is Role.OTHER:
                roles[tag] = Role(f"{split_of(tokens(tag)) or 'train'}_loss")
        elif player or _ADVERSARIAL_WORDS & words:
            roles[tag] = Role.ADVERSARIAL
