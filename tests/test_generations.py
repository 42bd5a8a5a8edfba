"""Generations logged beside a run (curvedoc.readers.generations) and the rules that read them (CD904 prompt
echoed, CD905 cut off at the length limit, CD906 chat-template markers): the files real evaluation loops and
trackers write, edge cases, and text from logs rendered inert."""

import json

import pytest

import curvedoc
from curvedoc.diagnose import diagnose_run
from curvedoc.model import Generation
from curvedoc.report import ReportOptions, render

STATE = {"log_history": [{"step": step, "loss": 2.0 - step / 100, "epoch": step / 50} for step in range(5, 105, 5)]}


def run_folder(tmp_path, files: dict[str, str]):
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "trainer_state.json").write_text(json.dumps(STATE))
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def jsonl(records) -> str:
    return "".join(json.dumps(record) + "\n" for record in records)


def codes(path):
    (run,) = curvedoc.load(path)
    return {f.code: f for f in diagnose_run(run)}, run


ANSWERS = ["Return the sum of the values.", "Split a pathname into its parts.", "Open the file and read it.",
           "Yes.", "Convert a string to lower case, keeping digits.", "Sort the items in place."]


def test_generations_beside_a_run_are_read_and_not_taken_for_a_log(tmp_path):
    folder = run_folder(tmp_path, {"eval_generations.jsonl": jsonl(
        {"step": 100, "prompt": f"Q{i}: what does f{i} do?", "completion": answer} for i, answer in
        enumerate(ANSWERS))})
    found, run = codes(folder)
    assert len(run.generations) == 6 and run.generations[0].prompt == "Q0: what does f0 do?"
    assert not {"CD904", "CD905", "CD906"} & set(found)
    assert not curvedoc.load(folder).problems


def test_a_whole_sequence_decoded_repeats_every_prompt(tmp_path):
    records = [{"prompt": f"### Question {i}: what does f{i} do?\n", "output": f"### Question {i}: what does f{i} "
                f"do?\n{answer}"} for i, answer in enumerate(ANSWERS)]
    found, _ = codes(run_folder(tmp_path, {"predictions.jsonl": jsonl(records)}))
    assert found["CD904"].title == "6 of 6 generations repeat their prompt"


@pytest.mark.parametrize("records,how", [
    ([{"completion": "x" * 40, "finish_reason": "length"}] * 4 + [{"completion": "Done.", "finish_reason": "stop"}] * 2,
     "finish_reason is 'length'"),
    ([{"completion": "words " * 9, "completion_tokens": 64}] * 4 + [{"completion": "Done.", "completion_tokens": 3}] * 2,
     "exactly 64 tokens long"),
    ([{"generated_text": f"The function returns the sum of the item{'s' * i} and th"} for i in range(5)]
     + [{"generated_text": "Done."}], "unfinished (no sentence end) and of one length"),
])
def test_outputs_that_stop_at_the_limit_are_cut_off(tmp_path, records, how):
    found, _ = codes(run_folder(tmp_path, {"samples.jsonl": jsonl(records)}))
    assert how in found["CD905"].evidence[0]


def test_outputs_that_end_at_their_own_lengths_are_not_cut_off(tmp_path):
    records = [{"completion": answer} for answer in ANSWERS] + [{"completion": "a list of the keys"}]
    found, _ = codes(run_folder(tmp_path, {"samples.jsonl": jsonl(records)}))
    assert "CD905" not in found


def test_chat_markers_in_the_outputs_are_a_template_mismatch(tmp_path):
    records = [{"completion": f"{answer}<|im_end|>\n<|im_start|>user"} for answer in ANSWERS[:3]]
    records += [{"completion": answer} for answer in ANSWERS[3:]]
    found, _ = codes(run_folder(tmp_path, {"completions.jsonl": jsonl(records)}))
    assert found["CD906"].evidence[0].endswith("contain '<|im_end|>', '<|im_start|>'")


def test_a_wandb_table_and_the_seq2seq_predictions_file_are_read(tmp_path):
    table = {"columns": ["step", "prompt", "generation"],
             "data": [[10, f"prompt {i}", f"[INST] answer {i}"] for i in range(6)]}
    folder = run_folder(tmp_path / "a", {"files/media/table/samples_10_abc.table.json": json.dumps(table)})
    found, run = codes(folder)
    assert len(run.generations) == 6 and "CD906" in found
    folder = run_folder(tmp_path / "b", {"generated_predictions.txt": "\n".join(ANSWERS) + "\n"})
    assert [g.text for g in curvedoc.load(folder)[0].generations] == ANSWERS


def test_generated_text_is_inert_in_every_report(tmp_path):
    hostile = "<script>alert(1)</script> ](javascript:x) @everyone <|im_start|>"
    records = [{"completion": f"{hostile} {i}"} for i in range(6)]
    runs = curvedoc.diagnose(run_folder(tmp_path, {"completions.jsonl": jsonl(records)}))
    assert any(f.code == "CD906" for f in runs[0].findings)
    for fmt in ("markdown", "html"):
        text = render(fmt, list(runs), [], ReportOptions())
        assert "<script>alert(1)</script>" not in text


def test_a_generation_keeps_only_what_the_rules_need():
    sample = Generation("text", prompt="p", finish_reason="length", tokens=3, step=4, source="f.jsonl")
    assert (sample.text, sample.prompt, sample.finish_reason, sample.tokens, sample.step) == ("text", "p", "length", 3, 4)


def test_generated_samples_logged_as_tensorboard_text_are_read_every_one(tmp_path):
    from event_files import EventWriter

    with EventWriter(tmp_path / "run") as writer:
        writer.text("config", "num_classes: 10", 0)
        for step in range(0, 200, 10):
            writer.scalar("train/loss", 2.0 - step / 200, step)
            if step % 50 == 0:
                for index in range(3):
                    writer.text("eval/generations", f"Answer {index} <|assistant|> then more", step)
    (run,) = curvedoc.load(tmp_path / "run")
    assert run.meta.n_classes == 10  # a config's first value is still read as one
    assert [(g.step, g.text) for g in run.generations[:4]] == [
        (0, "Answer 0 <|assistant|> then more"), (0, "Answer 1 <|assistant|> then more"),
        (0, "Answer 2 <|assistant|> then more"), (50, "Answer 0 <|assistant|> then more")]
    assert len(run.generations) == 12 and run.generations[0].source == "TensorBoard text eval/generations/text_summary"
    assert "CD906" in {f.code for f in diagnose_run(run)}


def grpo_state(clipped: list[float]) -> dict:
    """A TRL GRPO trainer_state.json: the share of completions cut at max_completion_length (512) each log."""
    return {"log_history": [{"step": 5 * (i + 1), "loss": 0.01, "reward": 0.2 + i / 100,
                             "completions/clipped_ratio": share, "completions/max_length": 512.0,
                             "completions/mean_length": 300 + 212 * share, "epoch": i / 10}
                            for i, share in enumerate(clipped)]}


def test_a_trainer_that_counts_its_completions_cut_at_the_limit_says_so(tmp_path):
    """GRPO's completions/clipped_ratio climbs 0.6 → 1.0 and stays (a real public run's shape): every completion
    runs to max_completion_length, so rewards judge truncated answers. A low ratio is no finding."""
    (tmp_path / "cut").mkdir()
    (tmp_path / "cut" / "trainer_state.json").write_text(json.dumps(grpo_state([0.6, 0.8, 0.9] + [1.0] * 12)))
    found, run = codes(tmp_path / "cut")
    assert "CD905" in found and "completions/clipped_ratio: median 100%" in found["CD905"].evidence[0]
    assert "completions/mean_length at the end: 512" in " ".join(found["CD905"].evidence)
    (tmp_path / "fine").mkdir()
    (tmp_path / "fine" / "trainer_state.json").write_text(json.dumps(grpo_state([0.3, 0.2, 0.1] + [0.05] * 12)))
    found, run = codes(tmp_path / "fine")
    assert "CD905" not in found and not any("CD905" in line for line in run.not_checked)


def seq2seq_state(gen_lens: list[float]) -> dict:
    """A Seq2SeqTrainer trainer_state.json with predict_with_generate: the train loss every 500 steps and, each
    evaluation, the eval loss and the mean generated length (eval_gen_len)."""
    history = [{"step": 500 * (i + 1), "loss": 2.3 - i / 100, "epoch": i / 10} for i in range(2 * len(gen_lens))]
    history += [{"step": 1000 * (i + 1), "eval_loss": 2.34 - i / 80, "eval_rouge1": 18.3 + i / 50,
                 "eval_gen_len": gen_len, "epoch": i / 5} for i, gen_len in enumerate(gen_lens)]
    return {"log_history": sorted(history, key=lambda entry: entry["step"])}


def test_a_mean_generated_length_pinned_at_one_whole_number_is_the_length_limit(tmp_path):
    """A public summarisation fine-tune's eval_gen_len is 19.0 at 11 of 11 evaluations (18.9998 once): every summary
    runs to the default generation max_length of 20 while the eval loss falls. A question rewriter's 12.44–12.54,
    which moves with the model and is no whole number, is no finding; nor are a limit the first evaluations hit and
    later ones do not (127, 122.9, 121.9, 120.4, 92.7)."""
    (tmp_path / "cut").mkdir()
    (tmp_path / "cut" / "trainer_state.json").write_text(json.dumps(seq2seq_state([19.0] * 6 + [18.9998] + [19.0] * 4)))
    found, run = codes(tmp_path / "cut")
    assert "CD905" in found and "eval_gen_len = 19" in found["CD905"].evidence[0]
    assert "11 of 11 evaluations" in found["CD905"].evidence[0]
    for name, lengths in (("moving", [12.537, 12.503, 12.498, 12.485, 12.486, 12.466, 12.466, 12.464, 12.44]),
                          ("shortening", [127.0, 122.87, 121.935, 120.365, 92.725])):
        (tmp_path / name).mkdir()
        (tmp_path / name / "trainer_state.json").write_text(json.dumps(seq2seq_state(lengths)))
        found, run = codes(tmp_path / name)
        assert "CD905" not in found and not any("CD905" in line for line in run.not_checked)
