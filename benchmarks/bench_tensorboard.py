"""Reading speed of TensorBoard event files: curvedoc against tbparse and TensorBoard's EventAccumulator.

    python benchmarks/bench_tensorboard.py [--points 2000000] [--repeat 1]

Generates (once, into benchmarks/data/, git-ignored) three event files laid out byte for byte as the real
writers lay them out:

- ``scalars``: simple_value scalars, one value per event, 4 tags (PyTorch SummaryWriter, tensorboardX, TF1);
- ``tensors``: TF2 rank-0 DT_FLOAT tensors in ``tensor_content``, plugin name on each tag's first value only;
- ``media``: mostly images (48 KB each) and histograms, with a few scalars.

Each file is read by each reader in a fresh subprocess (so peak RSS is the reader's own), nothing sampled
(EventAccumulator with size_guidance 0 for every kind; tbparse stores everything by default). Printed per reader:
scalar points, seconds, points/s, MB/s, peak RSS and its growth over the interpreter with the reader imported,
and the ratio of its time to curvedoc's. With ``--repeat N`` each reader is timed N times (a fresh subprocess each)
and the fastest run is printed, with the range of the N times after it: a shared VM's timings vary by 2x.
"""

from __future__ import annotations

import argparse
import json
import resource
import struct
import subprocess
import sys
import time
from pathlib import Path

import google_crc32c
import numpy as np

DATA = Path(__file__).resolve().parent / "data"
READERS = ("curvedoc", "tbparse", "EventAccumulator")
TAGS = ("train/loss", "train/acc", "lr", "train/grad_norm")


def masked_crc(data: bytes) -> int:
    crc = google_crc32c.value(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def write_records(path: Path, records) -> None:
    partial = path.with_suffix(".partial")
    with open(partial, "wb") as handle:
        for data in records:
            header = struct.pack("<Q", len(data))
            handle.write(header + struct.pack("<I", masked_crc(header)) + data + struct.pack("<I", masked_crc(data)))
    partial.rename(path)


def scalar_events(points: int):
    from tensorboard.compat.proto import event_pb2, summary_pb2

    yield event_pb2.Event(wall_time=1.7e9, file_version="brain.Event:2").SerializeToString()
    rng = np.random.default_rng(0)
    values = rng.normal(size=points).astype(np.float32)
    for index in range(points):
        value = summary_pb2.Summary.Value(tag=TAGS[index % 4], simple_value=float(values[index]))
        yield event_pb2.Event(wall_time=1.7e9 + index / 100, step=index // 4,
                              summary=summary_pb2.Summary(value=[value])).SerializeToString()


def tensor_events(points: int):
    from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2, types_pb2
    from tensorboard.plugins.scalar import metadata

    yield event_pb2.Event(wall_time=1.7e9, file_version="brain.Event:2").SerializeToString()
    rng = np.random.default_rng(1)
    values = rng.normal(size=points).astype(np.float32)
    for index in range(points):
        tag = TAGS[index % 4]
        tensor = tensor_pb2.TensorProto(dtype=types_pb2.DT_FLOAT, tensor_shape={}, tensor_content=values[index].tobytes())
        value = summary_pb2.Summary.Value(tag=tag, tensor=tensor)
        if index < 4:
            value.metadata.CopyFrom(metadata.create_summary_metadata(display_name=tag, description=""))
        yield event_pb2.Event(wall_time=1.7e9 + index / 100, step=index // 4,
                              summary=summary_pb2.Summary(value=[value])).SerializeToString()


def media_events(images: int):
    from tensorboard.compat.proto import event_pb2, summary_pb2

    yield event_pb2.Event(wall_time=1.7e9, file_version="brain.Event:2").SerializeToString()
    rng = np.random.default_rng(2)
    for step in range(images):
        wall = 1.7e9 + step
        picture = summary_pb2.Summary.Image(height=128, width=128, colorspace=3,
                                            encoded_image_string=rng.bytes(48_000))
        yield event_pb2.Event(wall_time=wall, step=step, summary=summary_pb2.Summary(
            value=[summary_pb2.Summary.Value(tag="samples", image=picture)])).SerializeToString()
        for layer in range(4):
            counts = rng.integers(0, 100, 60).astype(float)
            histogram = summary_pb2.HistogramProto(min=-1, max=1, num=counts.sum(), sum=0.0, sum_squares=1.0,
                                                   bucket_limit=np.linspace(-1, 1, 60).tolist(), bucket=counts.tolist())
            yield event_pb2.Event(wall_time=wall, step=step, summary=summary_pb2.Summary(
                value=[summary_pb2.Summary.Value(tag=f"weights/{layer}", histo=histogram)])).SerializeToString()
        value = summary_pb2.Summary.Value(tag="train/loss", simple_value=float(1 / (step + 1)))
        yield event_pb2.Event(wall_time=wall, step=step, summary=summary_pb2.Summary(value=[value])).SerializeToString()


def dataset(points: int) -> dict[str, Path]:
    files = {
        "scalars": (DATA / f"scalars_{points}" / "events.out.tfevents.1700000000.bench", scalar_events, points),
        "tensors": (DATA / f"tensors_{points // 2}" / "events.out.tfevents.1700000000.bench.v2", tensor_events,
                    points // 2),
        "media": (DATA / f"media_{points // 1000}" / "events.out.tfevents.1700000000.bench", media_events,
                  points // 1000),
    }
    for name, (path, events, count) in files.items():
        if not path.exists():
            print(f"generating {name} ({count} ...) -> {path}", file=sys.stderr)
            path.parent.mkdir(parents=True, exist_ok=True)
            write_records(path, events(count))
    return {name: path for name, (path, _, _) in files.items()}


def read_once(reader: str, path: str) -> dict:
    """Runs in the child: import the reader, then time one full read."""
    if reader == "curvedoc":
        import curvedoc
        import curvedoc.readers.tensorboard  # noqa: F401 — the reader itself, imported lazily by curvedoc.load

        def run() -> int:
            return sum(len(r.scalars) for r in curvedoc.load(path))
    elif reader == "tbparse":
        from tbparse import SummaryReader

        def run() -> int:
            found = SummaryReader(path)
            return len(found.scalars) + len(found.tensors)
    else:
        from tensorboard.backend.event_processing import event_accumulator as ea

        def run() -> int:
            kinds = (ea.SCALARS, ea.TENSORS, ea.IMAGES, ea.HISTOGRAMS, ea.COMPRESSED_HISTOGRAMS, ea.AUDIO)
            accumulator = ea.EventAccumulator(path, size_guidance={kind: 0 for kind in kinds})
            accumulator.Reload()
            tags = accumulator.Tags()
            return sum(len(accumulator.Scalars(t)) for t in tags["scalars"]) + sum(
                len(accumulator.Tensors(t)) for t in tags["tensors"])
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    points = run()
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"points": points, "seconds": seconds, "peak_mb": peak / 1024, "growth_mb": (peak - baseline) / 1024}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--points", type=int, default=2_000_000, help="scalar points in the scalar file")
    parser.add_argument("--readers", default=",".join(READERS))
    parser.add_argument("--repeat", type=int, default=1, help="time each reader this many times; print the fastest")
    parser.add_argument("--child", nargs=2, metavar=("READER", "FILE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(read_once(*args.child)))
        return
    header = f"{'file':8} {'reader':17} {'points':>9} {'seconds':>8} {'points/s':>11} {'MB/s':>7} " \
             f"{'peak MB':>8} {'+MB':>6} {'time/curvedoc':>13}"
    print(header)
    for name, path in dataset(args.points).items():
        size_mb = path.stat().st_size / 1e6
        baseline = None
        for reader in args.readers.split(","):
            runs = []
            for _ in range(args.repeat):
                child = subprocess.run([sys.executable, __file__, "--child", reader, str(path)],
                                       capture_output=True, text=True, check=True)
                runs.append(json.loads(child.stdout.strip().splitlines()[-1]))
            result = min(runs, key=lambda run: run["seconds"])
            spread = f"  ({result['seconds']:.3f}-{max(run['seconds'] for run in runs):.3f} s)" if len(runs) > 1 else ""
            baseline = baseline or result["seconds"]
            print(f"{name:8} {reader:17} {result['points']:>9} {result['seconds']:>8.2f} "
                  f"{result['points'] / result['seconds']:>11,.0f} {size_mb / result['seconds']:>7.1f} "
                  f"{result['peak_mb']:>8.0f} {result['growth_mb']:>6.0f} {result['seconds'] / baseline:>12.1f}x"
                  f"{spread}", flush=True)


if __name__ == "__main__":
    main()
