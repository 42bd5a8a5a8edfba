"""TensorBoard event files for tests, written with TensorBoard's own protos and writer (a core dependency): the
records PyTorch's ``SummaryWriter`` writes for ``add_scalar``, ``add_text`` and ``add_hparams``, without torch."""

from __future__ import annotations

from pathlib import Path

from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2, tensor_shape_pb2, types_pb2
from tensorboard.plugins.hparams import plugin_data_pb2
from tensorboard.summary.writer.event_file_writer import EventFileWriter


class EventWriter:
    def __init__(self, folder: Path):
        folder.mkdir(parents=True, exist_ok=True)
        self._writer = EventFileWriter(str(folder))

    def __enter__(self) -> EventWriter:
        return self

    def __exit__(self, *exc) -> None:
        self._writer.close()

    def flush(self) -> None:
        self._writer.flush()

    def _summary(self, value: summary_pb2.Summary.Value, step: int) -> None:
        self._writer.add_event(event_pb2.Event(step=step, wall_time=1.7e9 + step,
                                               summary=summary_pb2.Summary(value=[value])))

    def scalar(self, tag: str, value: float, step: int) -> None:
        self._summary(summary_pb2.Summary.Value(tag=tag, simple_value=value), step)

    def text(self, tag: str, text: str, step: int) -> None:
        """As ``add_text``: a string tensor under ``<tag>/text_summary`` with the text plugin's metadata."""
        self._string(f"{tag}/text_summary", text, "text", step)

    def keras_model(self, model_json: str) -> None:
        """As Keras' TensorBoard callback writes the model (write_graph): its JSON under the tag ``keras``."""
        self._string("keras", model_json, "graph_keras_model", 0)

    def _string(self, tag: str, text: str, plugin: str, step: int) -> None:
        metadata = summary_pb2.SummaryMetadata(plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name=plugin))
        tensor = tensor_pb2.TensorProto(dtype=types_pb2.DT_STRING, string_val=[text.encode()],
                                        tensor_shape=tensor_shape_pb2.TensorShapeProto(
                                            dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=1)]))
        self._summary(summary_pb2.Summary.Value(tag=tag, metadata=metadata, tensor=tensor), step)

    def hparams(self, values: dict[str, float | str]) -> None:
        """As ``add_hparams``: the hparams plugin's session start with the run's hyperparameters."""
        start = plugin_data_pb2.SessionStartInfo()
        for name, value in values.items():
            if isinstance(value, str):
                start.hparams[name].string_value = value
            else:
                start.hparams[name].number_value = value
        content = plugin_data_pb2.HParamsPluginData(session_start_info=start, version=0).SerializeToString()
        metadata = summary_pb2.SummaryMetadata(plugin_data=summary_pb2.SummaryMetadata.PluginData(
            plugin_name="hparams", content=content))
        self._summary(summary_pb2.Summary.Value(tag="_hparams_/session_start_info", metadata=metadata), 0)


def write_scalars(folder: Path, scalars: dict[str, list[float]]) -> None:
    with EventWriter(folder) as writer:
        for tag, values in scalars.items():
            for step, value in enumerate(values):
                writer.scalar(tag, value, step)
