"""Vocabulary sizes of the pretrained model families a fine-tune's files name as its base.

A fine-tune seldom records its vocabulary (a PEFT adapter saves only its own config) but names the model it starts
from (``base_model_name_or_path``, a model card's ``base_model``, ``--model_name_or_path``). A language model's chance
level is ln(vocabulary), and the vocabulary is a fact of that base: the rows of its output layer.

The count is taken as the run's own, not as an assumption a finding must flag (as a benchmark's class count is, see
curvedoc.datasets): it is the number the base's own config.json records, which the run's config would have copied
had it saved one, and it is used only where the run's files say the model predicts tokens, so the output layer is
the base's. Tokens a fine-tune adds move ln V by less than a thousandth of a nat (ten: ln(128,266 / 128,256) =
0.00008); the one guess left, the family a name belongs to, is kept conservative: a name no pattern below matches
gives nothing.
"""

from __future__ import annotations

import re

from curvedoc.model import VOCABULARY, Run
from curvedoc.roles import is_perplexity

# A hub id's name, a local folder's, or a hub cache's models--org--name/snapshots/<hash>: the last three components
NAME_COMPONENTS = 3
_START = r"(?<![a-z0-9])"  # each family's name starts a word: "tinyllama" and "codellama" are not "llama"
# (pattern searched in one lower-cased component of the name, "_" read as "-"; family; vocab_size of the family's
# Hugging Face config.json). That is the output layer's width, the softmax the loss runs over, padding rows included
# (phi-2: 51,200 rows for 50,295 tokens): an untrained model spreads its guess over all of them, and they differ
# from the tokenizer's own count by under 0.02 nats of ln V for every family here. Most specific pattern first.
# Numbers checked against the published config.json of each family's hub checkpoints, as public code quotes them:
# Llama 2/3.x (LlamaConfig dumps, oumi's llama3_1/llama3_2 recipe READMEs), TinyLlama (Llama 2 tokenizer, lit-gpt's
# tiny_LLaMA_1b), Mistral 7B v0.1/v0.2 and v0.3's "extended vocabulary to 32768" (mistralai model cards),
# Mistral-Nemo, Gemma 1/2/3, Phi-2, Phi-3, OPT, Falcon 7B/40B, Qwen2/2.5/3 (0.5B and 7B configs, verl's flops
# tests), SmolLM2 (its config.json), Whisper (tiny.en, tiny, large-v3 configs), T5, BERT and RoBERTa configs.
MODEL_VOCABULARIES = tuple((re.compile(_START + pattern), family, size) for pattern, family, size in (
    (r"tinyllama", "TinyLlama", 32000),
    (r"smollm2?-\d", "SmolLM", 49152),
    # llama-3b is OpenLLaMA 3B, llama-30b is LLaMA 30B: neither is Llama 3
    (r"llama-?3(?:\.\d)?(?![\db])", "Llama 3", 128256),
    (r"llama-?2(?![\db])", "Llama 2", 32000),
    (r"llama-(?:7|13|30|33|65)b", "LLaMA", 32000),
    (r"mistral-nemo", "Mistral-Nemo", 131072),
    (r"mistral-7b(?:-[a-z]+)*-v0\.3", "Mistral 7B v0.3", 32768),
    (r"mistral-7b(?:-[a-z]+)*-v0\.[12](?!\d)", "Mistral 7B", 32000),
    (r"gemma-?3-1b", "Gemma 3", 262144),
    (r"gemma-?3-(?:4|12|27)b", "Gemma 3", 262208),
    (r"gemma-?2-(?:2|9|27)b", "Gemma 2", 256000),
    (r"gemma-(?:1\.1-)?[27]b", "Gemma", 256000),
    (r"qwen2(?:\.5)?-(?:0\.5|1\.5|3)b", "Qwen2", 151936),
    (r"qwen2(?:\.5)?-(?:7|14|32|72)b", "Qwen2", 152064),
    (r"qwen3-(?:0\.6|1\.7|4|8|14|32)b", "Qwen3", 151936),
    (r"phi-2(?![\d.])", "Phi-2", 51200),
    (r"phi-3(?:\.5)?-(?:mini|medium|moe)", "Phi-3", 32064),
    (r"phi-3-small", "Phi-3-small", 100352),
    (r"^(?:distil)?gpt2(?:-medium|-large|-xl)?$", "GPT-2", 50257),
    (r"opt-(?:125m|350m|1\.3b|2\.7b|6\.7b|13b|30b|66b)", "OPT", 50272),
    (r"falcon-(?:7|40)b", "Falcon", 65024),
    (r"whisper-(?:tiny|base|small|medium)\.en", "Whisper (English)", 51864),
    (r"whisper-large-v3", "Whisper large-v3", 51866),
    (r"whisper-(?:tiny|base|small|medium|large)", "Whisper", 51865),
    (r"(?:flan-)?t5-(?:v1-1-)?(?:small|base|large|xl|xxl|3b|11b)", "T5", 32128),
    (r"bert-(?:base|large)-uncased", "BERT (uncased)", 30522),
    (r"bert-(?:base|large)-cased", "BERT (cased)", 28996),
    (r"roberta-(?:base|large)", "RoBERTa", 50265),
))


def base_vocabulary(name: str) -> tuple[str, int] | None:
    """(family, vocabulary size) of the pretrained model ``name`` names: a hub id (``meta-llama/Llama-2-7b-hf``,
    ``unsloth/llama-3-8b-Instruct-bnb-4bit``) or a path whose last components name it (``./models/TinyLlama-1.1B``);
    None when no listed family matches."""
    for component in reversed(re.split(r"[/\\]", name.strip().lower())[-NAME_COMPONENTS:]):
        component = re.sub(r"[_ ]", "-", component)
        for pattern, family, size in MODEL_VOCABULARIES:
            if pattern.search(component):
                return family, size
    return None


def complete_vocabulary(run: Run) -> None:
    """Gives a language model whose files record no class count or vocabulary the vocabulary of the base they name.
    A language model is what curvedoc already takes for one: a config saying so (a PEFT adapter's CAUSAL_LM or
    SEQ_2_SEQ_LM task, an LM head among its architectures) or a logged perplexity. A base fine-tuned as a classifier
    (task_type SEQ_CLS) predicts its labels, not the base's tokens, and gets nothing."""
    meta = run.meta
    if meta.n_classes is not None or not meta.base_model:
        return
    if not (meta.language_model or any(is_perplexity(tag) for tag in run.tags)):
        return
    named = base_vocabulary(meta.base_model)
    if named is not None:
        family, size = named
        where = f"{meta.base_model_source} names" if meta.base_model_source else "the base model is"
        run.set_n_classes(size, f"the vocabulary of {family} ({where} {meta.base_model})", VOCABULARY)
