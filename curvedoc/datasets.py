"""Class counts of the public benchmarks a run's config may name instead of stating its class count.

Configs often say ``dataset: cifar100`` or ``task_name: mnli`` and never ``num_classes``: the count is a fact
of the benchmark. It is a fact of the benchmark's labels, though, not of the run's output layer: the same MNIST
trains VAEs and GANs, IMDB language models. So a count read off a dataset's name is an inference: a finding
built on it says so and drops one severity level, unless a curve agrees (a loss at ln k, an accuracy at 1/k).

Only benchmarks with one fixed label set are listed (EMNIST and Speech Commands have several, COCO is detection).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

# normalised name (lower case, letters and digits only) -> classes
BENCHMARK_CLASSES = {
    # images
    "mnist": 10, "fashionmnist": 10, "fmnist": 10, "kmnist": 10, "qmnist": 10, "usps": 10, "svhn": 10,
    "cifar10": 10, "cifar100": 100, "stl10": 10, "imagenet": 1000, "imagenet1k": 1000, "ilsvrc2012": 1000,
    "tinyimagenet": 200, "tinyimagenet200": 200, "caltech101": 101, "caltech256": 257, "food101": 101,
    "flowers102": 102, "oxfordflowers102": 102, "oxfordiiitpet": 37, "stanfordcars": 196, "fgvcaircraft": 100,
    "dtd": 47, "eurosat": 10, "gtsrb": 43, "fer2013": 7, "places365": 365, "sun397": 397, "cub200": 200,
    "cub2002011": 200,
    # text
    "imdb": 2, "sst2": 2, "yelppolarity": 2, "amazonpolarity": 2, "agnews": 4, "dbpedia14": 14,
    "yahooanswerstopics": 10, "trec": 6, "emotion": 6, "banking77": 77, "mnli": 3, "multinli": 3, "snli": 3,
    "qnli": 2, "rte": 2, "mrpc": 2, "qqp": 2, "cola": 2, "wnli": 2, "boolq": 2, "yelpreviewfull": 5,
    # audio
    "esc50": 50, "urbansound8k": 10,
}
# Keys under which configs name their data (HF's run_glue names the GLUE task in task_name)
DATASET_KEYS = frozenset({"dataset", "dataset_name", "dataset_id", "data", "data_name", "data_set", "task_name"})
# ... and the keys inside such a block that hold its name (W&B's config.yaml keeps every value under ``value``)
WRAPPING_KEYS = frozenset({"name", "value"})


def benchmark_classes(parts: tuple[str, ...], value: Any) -> tuple[str, int] | None:
    """(the benchmark named, its class count) when the config entry ``parts`` = ``value`` names a listed
    benchmark: by its name, a hub id (``stanfordnlp/imdb``) or a path ending in it (``./data/cifar10``), under a
    key of DATASET_KEYS or a ``name`` in such a block (``data.name``; W&B's ``dataset.value``)."""
    key = parts[-2] if parts[-1].lower() in WRAPPING_KEYS and len(parts) > 1 else parts[-1]
    if key.lower() not in DATASET_KEYS or not isinstance(value, str) or len(value) > 300:
        return None
    for component in reversed(re.split(r"[/\\.]", value)):
        count = BENCHMARK_CLASSES.get(re.sub(r"[^a-z0-9]", "", component.lower()))
        if count is not None:
            return component, count
    return None


def named_benchmark(entries: Iterable[tuple[tuple[str, ...], str, Any, Any]]) -> tuple[str, int] | None:
    """The listed benchmark a config names ("key = 'value'", class count), given the config's entries (key parts,
    dotted name, value, …); None when it names none, or several with different counts."""
    found: dict[int, str] = {}
    for parts, name, value, *_ in entries:
        named = benchmark_classes(parts, value)
        if named is not None:
            found.setdefault(named[1], f"{name} = {value!r}")
    return next((where, count) for count, where in found.items()) if len(found) == 1 else None
