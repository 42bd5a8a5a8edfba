"""What the framework callbacks cost a real training loop: wall time with and without the callback.

    python benchmarks/bench_callbacks.py [--steps 1000]

A tiny GPT-2 classifier trained with the Hugging Face Trainer on CPU, at the Trainer's default logging interval
(every 500 steps) and at every step (the worst case: the rules run at each log event), best of three each.
"""

from __future__ import annotations

import argparse
import tempfile
import time


def train_seconds(steps: int, logging_steps: int, with_callback: bool) -> float:
    import torch
    from transformers import GPT2Config, GPT2ForSequenceClassification, Trainer, TrainingArguments

    from curvedoc.integrations.huggingface import CurvedocCallback

    torch.manual_seed(0)
    config = GPT2Config(vocab_size=32, n_positions=8, n_embd=16, n_layer=1, n_head=2, num_labels=4, pad_token_id=0)
    ids = torch.randint(1, 32, (512, 8))
    data = [{"input_ids": row, "labels": int(row[0] % 4)} for row in ids]
    with tempfile.TemporaryDirectory() as folder:
        arguments = TrainingArguments(output_dir=folder, max_steps=steps, per_device_train_batch_size=16,
                                      learning_rate=3e-3, logging_steps=logging_steps, save_strategy="no",
                                      report_to=[], use_cpu=True, disable_tqdm=True, seed=0)
        trainer = Trainer(model=GPT2ForSequenceClassification(config), args=arguments, train_dataset=data,
                          callbacks=[CurvedocCallback()] if with_callback else [])
        started = time.perf_counter()
        trainer.train()
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=1000)
    args = parser.parse_args()
    print("| logging every | without (s) | with CurvedocCallback (s) | overhead |")
    print("| ---: | ---: | ---: | ---: |")
    for logging_steps in (500, 1):
        without = min(train_seconds(args.steps, logging_steps, False) for _ in range(3))
        with_callback = min(train_seconds(args.steps, logging_steps, True) for _ in range(3))
        print(f"| {logging_steps} | {without:.2f} | {with_callback:.2f} | {with_callback / without - 1:+.1%} |")


if __name__ == "__main__":
    main()
