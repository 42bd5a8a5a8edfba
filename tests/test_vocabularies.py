"""A language model's vocabulary read off the pretrained base its files name (curvedoc.vocabularies)."""

import json
import math

import pytest

import curvedoc
from curvedoc.diagnose import diagnose_run
from curvedoc.model import VOCABULARY
from curvedoc.rules import ERROR, WARNING
from curvedoc.vocabularies import base_vocabulary

LLAMA_3 = "unsloth/Meta-Llama-3.1-8B-bnb-4bit"


@pytest.mark.parametrize("name,expected", [
    (LLAMA_3, ("Llama 3", 128256)),
    ("unsloth/llama-3-8b-Instruct-bnb-4bit", ("Llama 3", 128256)),
    ("meta-llama/Llama-3.2-1B", ("Llama 3", 128256)),
    ("meta-llama/Llama-2-7b-hf", ("Llama 2", 32000)),
    ("TheBloke/Llama-2-7B-Chat-GPTQ", ("Llama 2", 32000)),
    ("./models/TinyLlama-1.1B-Chat", ("TinyLlama", 32000)),
    ("/cache/hub/models--meta-llama--Llama-2-7b-hf/snapshots/8cca527612d856d7d32bd94f8103728d614eb852",
     ("Llama 2", 32000)),
    ("C:\\models\\Meta_Llama_3_8B", ("Llama 3", 128256)),
    ("mistralai/Mistral-7B-Instruct-v0.2", ("Mistral 7B", 32000)),
    ("unsloth/mistral-7b-v0.3-bnb-4bit", ("Mistral 7B v0.3", 32768)),
    ("mistralai/Mistral-Nemo-Instruct-2407", ("Mistral-Nemo", 131072)),
    ("openai/whisper-small", ("Whisper", 51865)),
    ("openai/whisper-small.en", ("Whisper (English)", 51864)),
    ("openai/whisper-large-v3-turbo", ("Whisper large-v3", 51866)),
    ("gpt2", ("GPT-2", 50257)),
    ("openai-community/gpt2-medium", ("GPT-2", 50257)),
    ("facebook/opt-1.3b", ("OPT", 50272)),
    ("tiiuae/falcon-7b-instruct", ("Falcon", 65024)),
    ("google/gemma-2b", ("Gemma", 256000)),
    ("google/gemma-2-9b-it", ("Gemma 2", 256000)),
    ("Qwen/Qwen2.5-0.5B-Instruct", ("Qwen2", 151936)),
    ("Qwen/Qwen2.5-7B-Instruct-AWQ", ("Qwen2", 152064)),
    ("microsoft/phi-2", ("Phi-2", 51200)),
    ("microsoft/Phi-3-mini-4k-instruct", ("Phi-3", 32064)),
    ("google/flan-t5-base", ("T5", 32128)),
    ("bert-base-uncased", ("BERT (uncased)", 30522)),
    ("bert-base-cased", ("BERT (cased)", 28996)),
    ("roberta-large", ("RoBERTa", 50265)),
    ("HuggingFaceTB/SmolLM2-135M", ("SmolLM", 49152)),
])
def test_a_base_model_name_gives_its_familys_vocabulary(name, expected):
    assert base_vocabulary(name) == expected


@pytest.mark.parametrize("name", [
    "my-model", "./output/checkpoint-500", "curvedoc-fixtures/pydoc-llama-tiny", "stdlib-gpt2-tiny",
    "gpt2-chinese-cluecorpussmall",  # a GPT-2 architecture with a tokenizer of its own
    "openlm-research/open_llama_3b", "codellama/CodeLlama-7b-hf", "HuggingFaceTB/SmolLM3-3B", "google/mt5-small",
    "bert-base-multilingual-cased", "deepseek-ai/DeepSeek-R1-Distill-Llama-8B", "",
])
def test_a_name_no_family_matches_gives_nothing(name):
    assert base_vocabulary(name) is None


def _adapter_run(folder, task_type, first_loss, base=LLAMA_3):
    """An adapter-only output folder: the PEFT adapter's config and the Trainer's state, no model config."""
    (folder / "adapter_config.json").write_text(json.dumps(
        {"base_model_name_or_path": base, "peft_type": "LORA", "task_type": task_type, "r": 16}))
    history = [{"step": step, "loss": round(first_loss * (1 - step / 2000), 4), "epoch": step / 400}
               for step in range(10, 410, 10)]
    (folder / "trainer_state.json").write_text(json.dumps({"log_history": history}))
    (run,) = curvedoc.load(folder)
    return run


def test_an_adapter_only_run_starting_at_ln_of_its_bases_vocabulary_did_not_load_the_base(tmp_path):
    run = _adapter_run(tmp_path, "CAUSAL_LM", math.log(128256))
    assert (run.meta.n_classes, run.meta.n_classes_kind) == (128256, VOCABULARY)
    assert run.meta.n_classes_source == f"the vocabulary of Llama 3 (adapter_config.json names {LLAMA_3})"
    (finding,) = [f for f in diagnose_run(run) if f.code == "CD901"]
    assert finding.symptom == "finetune_start_high" and LLAMA_3 in finding.title
    assert any("ln(vocabulary size 128,256) = 11.76" in line and "adapter_config.json names" in line
               for line in finding.evidence)
    assert not [f for f in run.findings if f.symptom == "needs_n_classes"]


def test_a_base_fine_tuned_as_a_classifier_predicts_its_labels_not_the_bases_tokens(tmp_path):
    run = _adapter_run(tmp_path, "SEQ_CLS", math.log(128256))
    assert run.meta.n_classes is None
    assert not [f for f in diagnose_run(run) if f.code == "CD901"]


def test_a_healthy_lora_run_of_a_named_base_raises_nothing(tmp_path):
    run = _adapter_run(tmp_path, "CAUSAL_LM", 2.3)
    assert run.meta.n_classes == 128256
    assert not [f for f in diagnose_run(run) if f.severity in (WARNING, ERROR)]


def test_a_recorded_vocabulary_and_the_users_count_win_over_the_bases(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLM"], "vocab_size": 128320}))
    run = _adapter_run(tmp_path, "CAUSAL_LM", 2.3)
    assert (run.meta.n_classes, run.meta.n_classes_source) == (128320, "config.json: vocab_size")
    (tmp_path / "config.json").unlink()
    (run,) = curvedoc.load(tmp_path, num_classes=128300)
    assert (run.meta.n_classes, run.meta.n_classes_source) == (128300, "--num-classes")


def test_a_logged_perplexity_is_language_model_evidence_enough(tmp_path):
    (tmp_path / "args.json").write_text(json.dumps({"model_name_or_path": "gpt2"}))
    history = [{"step": step, "loss": 3.5 - step / 1000, "eval_perplexity": 30.0 - step / 100}
               for step in range(10, 210, 10)]
    (tmp_path / "trainer_state.json").write_text(json.dumps({"log_history": history}))
    (run,) = curvedoc.load(tmp_path)
    assert (run.meta.n_classes, run.meta.n_classes_kind) == (50257, VOCABULARY)
    assert run.meta.n_classes_source == "the vocabulary of GPT-2 (args.json names gpt2)"
