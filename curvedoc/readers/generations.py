"""What a run generated, where it logged it: the model's outputs on evaluation prompts, read from the files beside
its logs, so that the rules can read them as an engineer would (:mod:`curvedoc.rules.generations`).

Where runs keep generations:
- JSON Lines written by an evaluation loop or harness, one sample a line (``eval_generations.jsonl``,
  ``predictions.jsonl``, ``completions.jsonl``, ``samples.jsonl`` …: a name holding ``generation``,
  ``prediction``, ``completion`` or ``sample``), with the output under a key such as ``completion``,
  ``generation``, ``prediction``, ``output``, ``response`` or ``generated_text``, and the prompt (when kept) under
  ``prompt``, ``input``, ``instruction``, ``question`` or ``query``; ``finish_reason`` (``length`` when the output
  hit the token limit) and a token count (``completion_tokens``, ``num_tokens``, ``output_tokens``) when the
  generator reported them;
- ``generated_predictions.txt``: the Hugging Face seq2seq examples' predictions, one a line;
- W&B tables (``files/media/table/**/*.table.json``: ``columns`` and ``data``) with such columns;
- TensorBoard text summaries under a tag that names them (``eval/generations``, ``samples``): every value is
  read by the TensorBoard reader, each string one output (no prompt).

They are looked for in the run's folder and one folder up (two above a Hugging Face ``checkpoint-N/``), like the
companion files, and at most MAX_SAMPLES are kept per run. Generated text is untrusted: it is kept as data and
every report renders it inert.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

from curvedoc.model import Generation, Run

MAX_SAMPLES = 2000
NAMED_LIKE_GENERATIONS = re.compile(r"(generation|prediction|completion|sample)s?", re.IGNORECASE)
OUTPUT_KEYS = ("completion", "generation", "generated", "generated_text", "prediction", "output", "response",
               "pred", "model_output", "answer")
PROMPT_KEYS = ("prompt", "input", "instruction", "question", "query", "source")
FINISH_KEYS = ("finish_reason", "stop_reason")
TOKEN_COUNT_KEYS = ("completion_tokens", "num_tokens", "output_tokens", "generated_tokens", "length")
HF_PREDICTIONS = "generated_predictions.txt"


def is_generations_file(path: Path) -> bool:
    """A file the generations reader reads: discovery leaves it out of the logs."""
    return is_generations_name(path.name)


def is_generations_name(name: str) -> bool:
    return name == HF_PREDICTIONS or (name.endswith(".jsonl") and bool(NAMED_LIKE_GENERATIONS.search(name)))


@functools.lru_cache(maxsize=1024)
def generations_names(names: frozenset[str]) -> tuple[str, ...]:
    """The generations files among a folder's ``names``, sorted; once per listing (folder_names hands the same
    frozenset while the folder is unchanged, and its hash is kept): an archive's thousands of run folders under
    one parent are not filtered and sorted once per run."""
    return tuple(sorted(name for name in names if is_generations_name(name)))


def is_generations_tag(tag: str) -> bool:
    """A TensorBoard text tag of generated samples (``eval/generations``, ``samples``, ``completions/0``)."""
    return bool(NAMED_LIKE_GENERATIONS.search(tag))


def complete(runs: list[Run], source_path: Path) -> None:
    """Gives ``runs`` read from ``source_path`` the generations logged beside them."""
    from curvedoc.readers.companions import search_folders  # YAML is imported only once a run is read

    anchor = source_path if source_path.is_dir() else source_path.parent
    samples, files = [], []
    for folder in search_folders(anchor):
        for path in _files_in(Path(folder)):
            found = _read(path)
            if found:
                samples.extend(found[:MAX_SAMPLES - len(samples)])
                files.append(str(path))
            if len(samples) >= MAX_SAMPLES:
                break
        if samples:
            break  # the nearest folder that holds generations is the run's
    for run in runs:
        if not run.generations and samples:
            run.generations = list(samples)
            run.meta.files.extend(name for name in files if name not in run.meta.files)


def _files_in(folder: Path) -> list[Path]:
    from curvedoc.readers.companions import folder_names

    names = folder_names(str(folder))
    found = [folder / name for name in generations_names(names)]
    tables = folder / "files" / "media" / "table"
    if "files" in names and tables.is_dir():
        found += sorted(tables.rglob("*.table.json"))
    return found


def _read(path: Path) -> list[Generation]:
    from curvedoc.readers.companions import MAX_BYTES

    try:
        if path.stat().st_size > MAX_BYTES:
            return []
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    if path.name == HF_PREDICTIONS:
        return [Generation(line, source=path.name) for line in text.splitlines()[:MAX_SAMPLES]]
    if path.name.endswith(".table.json"):
        return _from_table(text, path.name)
    records = []
    for line in text.splitlines()[:MAX_SAMPLES]:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and (sample := _from_record(record, path.name)) is not None:
            records.append(sample)
    return records


def _from_table(text: str, name: str) -> list[Generation]:
    try:
        table = json.loads(text)
    except ValueError:
        return []
    if not isinstance(table, dict) or not isinstance(table.get("columns"), list):
        return []
    columns = [str(column) for column in table["columns"]]
    rows = table.get("data") if isinstance(table.get("data"), list) else []
    return [sample for row in rows[:MAX_SAMPLES] if isinstance(row, list)
            and (sample := _from_record(dict(zip(columns, row)), name)) is not None]


def _from_record(record: dict, name: str) -> Generation | None:
    lowered = {str(key).lower(): value for key, value in record.items()}
    output = next((lowered[key] for key in OUTPUT_KEYS if isinstance(lowered.get(key), str)), None)
    if output is None:
        return None
    prompt = next((lowered[key] for key in PROMPT_KEYS if isinstance(lowered.get(key), str)), None)
    finish = next((lowered[key] for key in FINISH_KEYS if isinstance(lowered.get(key), str)), None)
    tokens = next((lowered[key] for key in TOKEN_COUNT_KEYS
                   if isinstance(lowered.get(key), int) and not isinstance(lowered.get(key), bool)), None)
    step = lowered.get("step") if isinstance(lowered.get("step"), int) else None
    return Generation(output, prompt=prompt, finish_reason=finish, tokens=tokens, step=step, source=name)
