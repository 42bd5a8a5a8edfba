"""What the model generated, where the run logged its outputs (curvedoc.readers.generations): outputs that repeat
the prompt back, that all stop at the same length mid-sentence, or that carry a chat template's markers.

A fine-tune's loss can fall for all three while the outputs are useless: the loss does not see how outputs are
decoded, where generation stops, or which template the tokenizer applies at inference. Generated text is
untrusted: evidence quotes at most a short excerpt of it, escaped.
"""

from __future__ import annotations

import re

import numpy as np

from curvedoc.features import RunCurves
from curvedoc.model import Generation
from curvedoc.roles import is_generation_length, is_truncation_share
from curvedoc.rules import GENERATIONS, WARNING, Found, Limits, Threshold, rule

EXCERPT = 60  # characters of a generation quoted as evidence
# Role markers of the common chat templates, and the Alpaca headers: in an output they are the template, not text
TEMPLATE_MARKERS = ("<|im_start|>", "<|im_end|>", "[INST]", "[/INST]", "<|user|>", "<|assistant|>", "<|system|>",
                    "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>", "<start_of_turn>", "<end_of_turn>",
                    "### Instruction:", "### Response:", "<|begin_of_text|>")
FINISHED = re.compile(r"""[.!?;:)\]}"'`»”’]\s*$|\n\s*$""")
SHARE = Threshold(0.5, "share of the logged generations that must show it (most outputs, not one odd sample)")
MIN_SAMPLES = Threshold(5, "fewest logged generations judged")


def excerpt(text: str) -> str:
    """A short, escaped quote of generated text: repr() shows newlines and control characters as escapes."""
    return repr(text[:EXCERPT] + ("…" if len(text) > EXCERPT else ""))


def _normal(text: str) -> str:
    return " ".join(text.split())


@rule(
    "CD904", "prompt-echoed", symptom="prompt_echoed", severity=WARNING,
    needs=(GENERATIONS,),
    causes=(
        "the whole output sequence decoded (prompt + completion) instead of only the new tokens",
        "the loss applied to the prompt tokens too (no completion-only mask), so the model learned to repeat them",
    ),
    check="decode output_ids[:, input_ids.shape[1]:] (only the new tokens) and compare; count the supervised "
          "tokens of one training example: the prompt's labels should be −100",
    thresholds={"share": SHARE, "min_samples": MIN_SAMPLES},
)
def prompt_echoed(run: RunCurves, limits: Limits):
    """Most logged generations contain their own prompt: the output repeats the input back."""
    samples = [g for g in run.run.generations if g.prompt and len(_normal(g.prompt)) >= 10]
    if len(samples) < limits["min_samples"]:
        return None
    echoed = [g for g in samples if _normal(g.prompt) in _normal(g.text)]
    if len(echoed) < limits["share"] * len(samples):
        return None
    first = echoed[0]
    return Found(f"{len(echoed)} of {len(samples)} generations repeat their prompt",
                 [], [f"{len(echoed)} of {len(samples)} logged generations (in {first.source}) contain their whole "
                      "prompt",
                      f"e.g. prompt {excerpt(first.prompt)} → output {excerpt(first.text)}"],
                 step=first.step)


@rule(
    "CD905", "generations-cut-off", symptom="generations_cut_off", severity=WARNING,
    needs=(GENERATIONS,),
    causes=(
        "max_new_tokens (or max_length) too small for the answers: every output is cut at the limit",
        "the model never learned to end: no EOS token in the training targets (a collator or template that drops "
        "it), so it runs on until the limit",
    ),
    check="look at the token count of 20 outputs: all at the limit means the limit cut them; then check that the "
          "training targets end with the tokenizer's eos_token_id",
    thresholds={"share": SHARE, "min_samples": MIN_SAMPLES,
                "same_length": Threshold(1.25, "outputs of the same length in characters when the longest is at "
                                               "most this many times the shortest (a token limit in characters)"),
                "min_chars": Threshold(20, "outputs this short are answers, not cut-off text"),
                "whole_tokens": Threshold(0.01, "an evaluation's mean output length within this many tokens of a "
                                                "whole number: every output (but one in a hundred, one token "
                                                "shorter) of that very length")},
)
def generations_cut_off(run: RunCurves, limits: Limits):
    """Most logged generations stop at the same length, mid-sentence: they hit the token limit rather than ending.
    Read from the generator's own finish reason (``length``) or token counts where it logged them, else from the
    text: outputs that end without a sentence's end, all within a quarter of one length. A trainer that counts its
    completions cut at the limit (TRL's ``completions/clipped_ratio``) says it outright: most of them over the
    second half of its run. So does a mean output length (the Seq2SeqTrainer's ``eval_gen_len``) that is one whole
    number of tokens at most evaluations: outputs that end where their text ends differ in length, and the model
    changing from one evaluation to the next changes their mean; only a limit holds every one at one length."""
    truncated = _truncated_completions(run, limits)
    if truncated is None:
        truncated = _pinned_generation_length(run, limits)
    if truncated is not None:
        return truncated
    samples = run.run.generations
    if len(samples) < limits["min_samples"]:
        return None
    reasons = [g.finish_reason for g in samples if g.finish_reason]
    if len(reasons) >= limits["min_samples"]:
        at_limit = sum(reason.lower() == "length" for reason in reasons)
        return _cut_off(at_limit, len(reasons), "the generator's finish_reason is 'length'", samples, limits)
    counts = [g.tokens for g in samples if g.tokens is not None]
    if len(counts) >= limits["min_samples"]:
        longest = max(counts)
        return _cut_off(sum(count == longest for count in counts), len(counts),
                        f"exactly {longest} tokens long, the longest any is", samples, limits)
    unfinished = [g for g in samples if len(g.text.strip()) >= limits["min_chars"] and not FINISHED.search(g.text)]
    if not unfinished:
        return None
    lengths = sorted(len(g.text) for g in unfinished)
    # the largest group of unfinished outputs whose lengths lie within same_length of each other
    best = max(sum(1 for other in lengths if length <= other <= limits["same_length"] * length)
               for length in lengths)
    return _cut_off(best, len(samples), "unfinished (no sentence end) and of one length, within "
                    f"{limits['same_length'] - 1:.0%}", samples, limits)


def _pinned_generation_length(run: RunCurves, limits: Limits):
    """The finding from a mean output length that is the same whole number of tokens at most of at least
    MIN_SAMPLES evaluations."""
    for tag in filter(is_generation_length, run.run.tags):
        curve = run.curve_of(tag)
        if curve is None or len(curve.finite_values) < limits["min_samples"]:
            continue
        values = curve.finite_values
        length = round(float(np.median(values)))
        pinned = np.abs(values - length) <= limits["whole_tokens"]
        if length < 1 or pinned.mean() < limits["share"]:
            continue
        first = int(np.argmax(pinned))
        evidence = [f"{tag} = {length} (within {limits['whole_tokens']:g} of a token) at {int(pinned.sum())} of "
                    f"{len(values)} evaluations, steps {curve.step_at(first)}–{curve.step_at(len(values) - 1)}: the "
                    "mean of outputs that end where their text ends is no whole number, nor the same while the model "
                    "changes",
                    "a Seq2SeqTrainer generates up to the model's generation max_length, 20 tokens unless "
                    "generation_max_length or generation_config says otherwise"]
        return Found(f"every generated output is {length} tokens long, evaluation after evaluation: the length limit",
                     [tag], evidence, step=curve.step_at(first))
    return None


def _truncated_completions(run: RunCurves, limits: Limits):
    """The finding from a trainer's share of completions cut at the length limit, when most were over the second
    half of the run (logged at MIN_SAMPLES steps at least)."""
    for tag in filter(is_truncation_share, run.run.tags):
        curve = run.curve_of(tag)
        if curve is None or len(curve.finite_values) < limits["min_samples"]:
            continue
        values = curve.finite_values
        half = len(values) // 2
        share = float(np.median(values[half:]))
        if share < limits["share"]:
            continue
        reached = int(np.argmax(values >= limits["share"]))
        evidence = [f"{tag}: median {share:.0%} over the second half of the run (steps {curve.step_at(half)}–"
                    f"{curve.step_at(len(values) - 1)}); {limits['share']:.0%} or more from step {curve.step_at(reached)}"]
        # TRL logs the completions' mean and maximum length beside it: a mean at the maximum is every one cut
        group = tag.rsplit("/", 1)[0]
        evidence += [f"{other.tag} at the end: {other.end:g}" for name in run.run.tags
                     if name.startswith(group + "/") and name.endswith(("/mean_length", "/max_length"))
                     and (other := run.curve_of(name)) is not None]
        return Found(f"{share:.0%} of the completions stop at the length limit", [tag], evidence,
                     step=curve.step_at(reached))
    return None


def _cut_off(count: int, total: int, how: str, samples: list[Generation], limits: Limits):
    if count < limits["share"] * total:
        return None
    example = max(samples, key=lambda g: len(g.text))
    return Found(f"{count} of {total} generations stop at the length limit",
                 [], [f"{count} of {total} logged generations (in {example.source}) are {how}",
                      f"e.g. {excerpt(example.text[-EXCERPT:])} (its end)"],
                 step=example.step)


@rule(
    "CD906", "template-leaked", symptom="template_leaked", severity=WARNING,
    needs=(GENERATIONS,),
    causes=(
        "the chat template at inference differs from training's: the model writes the turn markers it was "
        "trained to see",
        "the template's markers were added as plain text, not as the tokenizer's special tokens",
        "special tokens decoded into the output (skip_special_tokens=False)",
    ),
    check="print tokenizer.apply_chat_template(one conversation, tokenize=False) at training and at inference "
          "and diff them; check that the markers are single special-token ids",
    thresholds={"share": Threshold(0.1, "share of the logged generations holding a marker (and at least two)"),
                "min_samples": MIN_SAMPLES},
)
def template_leaked(run: RunCurves, limits: Limits):
    """Logged generations contain a chat template's markers (``<|im_start|>``, ``[INST]``, ``<|assistant|>``,
    ``### Response:`` …): the template seen at inference is not the one trained on."""
    samples = run.run.generations
    if len(samples) < limits["min_samples"]:
        return None
    leaked = [(g, marker) for g in samples if (marker := next((m for m in TEMPLATE_MARKERS if m in g.text), None))]
    if len(leaked) < max(2, limits["share"] * len(samples)):
        return None
    markers = sorted({marker for g, _ in leaked for marker in TEMPLATE_MARKERS if marker in g.text})
    first, marker = leaked[0]
    at = first.text.index(marker)
    return Found(f"{len(leaked)} of {len(samples)} generations contain chat-template markers",
                 [], [f"{len(leaked)} of {len(samples)} logged generations (in {first.source}) contain "
                      f"{', '.join(repr(m) for m in markers)}",
                      f"e.g. {excerpt(first.text[max(0, at - 20):])}"],
                 step=first.step)
