"""Reading speed of row-shaped logs (CSV, JSON Lines): curvedoc against pandas, which a user would otherwise call.

    python benchmarks/bench_tables.py [--rows 1000000]

Generates (once, into benchmarks/data/, git-ignored) a Lightning-style sparse ``metrics.csv`` (train rows every
step, a validation row every 100 steps, an ``inf``/``nan`` here and there) and a W&B-style ``history.jsonl`` with
the same values. pandas only parses the table (``read_csv``, ``read_json(lines=True)``); curvedoc also sorts,
de-duplicates, keeps empty apart from NaN and builds the tidy per-tag model, so a ratio near 1 means the extra
work is free. Best of three runs, in this process.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

import curvedoc

DATA = Path(__file__).resolve().parent / "data"


def dataset(rows: int) -> dict[str, Path]:
    DATA.mkdir(exist_ok=True)
    csv_path, jsonl_path = DATA / f"metrics_{rows}.csv", DATA / f"history_{rows}.jsonl"
    if csv_path.exists() and jsonl_path.exists():
        return {"csv": csv_path, "jsonl": jsonl_path}
    rng = np.random.default_rng(0)
    loss = np.exp(-np.arange(rows) / rows * 5) + rng.normal(0, 0.05, rows)
    loss[rng.integers(0, rows, 20)] = np.inf
    frame = pd.DataFrame({
        "step": np.arange(rows), "epoch": np.arange(rows) // 1000, "train_loss_step": loss,
        "lr-Adam": 1e-3, "val_loss": np.where(np.arange(rows) % 100 == 99, loss + 0.1, np.nan),
    })
    frame.to_csv(csv_path, index=False, na_rep="")
    with open(jsonl_path, "w") as handle:
        for row in frame.itertuples(index=False):
            record = {"_step": int(row.step), "train/loss": float(row.train_loss_step), "lr": 1e-3}
            if row.val_loss == row.val_loss:
                record["val/loss"] = float(row.val_loss)
            handle.write(json.dumps(record) + "\n")
    return {"csv": csv_path, "jsonl": jsonl_path}


def best_of(function, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    rows = parser.parse_args().rows
    paths = dataset(rows)
    contenders = {
        "csv": {"curvedoc": lambda: curvedoc.load(paths["csv"]), "pandas.read_csv": lambda: pd.read_csv(paths["csv"])},
        "jsonl": {
            "curvedoc": lambda: curvedoc.load(paths["jsonl"]),
            "pandas.read_json(lines=True)": lambda: pd.read_json(paths["jsonl"], lines=True),
        },
    }
    print("| file | reader | rows | seconds | rows/s | time / curvedoc |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for kind, readers in contenders.items():
        seconds = {name: best_of(read) for name, read in readers.items()}
        for name, taken in seconds.items():
            print(f"| {kind} | {name} | {rows:,} | {taken:.2f} | {rows / taken:,.0f} | {taken / seconds['curvedoc']:.2f}× |")


if __name__ == "__main__":
    main()
