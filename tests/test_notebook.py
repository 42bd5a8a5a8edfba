"""Jupyter notebooks: the training output their cells printed, read as captured output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from damage import assert_reads_or_refuses_in_one_line, damaged
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import curvedoc
from curvedoc import CurvedocError, Role
from curvedoc.readers import classify_file, discover, notebook


def write_notebook(path: Path, cells: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1))
    return path


def code_cell(source: str, *outputs: dict) -> dict:
    return {"cell_type": "code", "execution_count": 1, "metadata": {}, "source": source.splitlines(True),
            "outputs": list(outputs)}


def stream(text: str) -> dict:
    return {"output_type": "stream", "name": "stdout", "text": text.splitlines(True)}


KERAS_EPOCHS = "".join(
    f"Epoch {epoch}/5\n469/469 [==============================] - 5s 10ms/step - loss: {0.6 - epoch / 10:.4f} - "
    f"accuracy: {0.8 + epoch / 50:.4f} - val_loss: {0.5 - epoch / 20:.4f} - val_accuracy: {0.82 + epoch / 50:.4f}\n"
    for epoch in range(1, 6))
IMAGE = {"output_type": "display_data", "data": {"image/png": "iVBORw0KGgo=", "text/plain": ["<Figure size 640x480>"]},
         "metadata": {}}
ERROR = {"output_type": "error", "ename": "KeyError", "evalue": "'loss'",
         "traceback": ["\u001b[0;31mKeyError\u001b[0m: 'loss' at epoch 3"]}


def test_a_keras_fit_printed_in_a_notebook_is_its_run(tmp_path):
    """Colab and Kaggle keep a training's only log in the notebook's outputs: model.fit's epoch lines, between a
    plot and a traceback, which are no log."""
    path = write_notebook(tmp_path / "train.ipynb", [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Training"]},
        code_cell("print(model.summary())", stream("Total params: 134,794\n")),
        code_cell("history = model.fit(x, y, epochs=5, validation_split=0.1)", stream(KERAS_EPOCHS)),
        code_cell("plt.plot(history.history['loss'])", IMAGE),
        code_cell("history.history['los']", ERROR),
    ])
    (run,) = curvedoc.load(path)
    assert run.format == "notebook" and run.series("val_loss")["step"].tolist() == [1, 2, 3, 4, 5]
    assert run.roles["val_accuracy"] == Role.VAL_ACC and sorted(run.tags) == [
        "accuracy", "loss", "val_accuracy", "val_loss"]


TRAINER_TABLE = """<div>
  <progress value='1500' max='1500' style='width:300px; height:20px; vertical-align: middle;'></progress>
  [1500/1500 02:31, Epoch 3/3]
</div>
<table border="1" class="dataframe">
  <thead>
 <tr style="text-align: left;">
      <th>Epoch</th>
      <th>Training Loss</th>
      <th>Validation Loss</th>
      <th>Accuracy</th>
    </tr>
  </thead>
  <tbody>
{rows}  </tbody>
</table><p>"""


def test_the_hugging_face_trainers_table_in_a_notebook_is_its_run(tmp_path):
    """The Trainer draws its progress in a notebook as an HTML table, redrawn as training goes and saved as last
    drawn; "No log" stands where no training loss was logged yet. The text shown beside it in plain text says
    nothing."""
    rows = "".join(f"    <tr>\n      <td>{epoch}</td>\n      <td>{'No log' if epoch == 1 else f'{0.5 / epoch:.6f}'}"
                   f"</td>\n      <td>{0.4 / epoch + 0.1:.6f}</td>\n      <td>{0.8 + epoch / 100:.6f}</td>\n    </tr>\n"
                   for epoch in range(1, 4))
    shown = {"output_type": "display_data", "metadata": {},
             "data": {"text/html": TRAINER_TABLE.format(rows=rows), "text/plain": "<IPython.core.display.HTML object>"}}
    result = {"output_type": "execute_result", "execution_count": 7, "metadata": {},
              "data": {"text/plain": "TrainOutput(global_step=1500, training_loss=0.21, metrics={'train_runtime': 151.2})"}}
    (run,) = curvedoc.load(write_notebook(tmp_path / "finetune.ipynb", [code_cell("trainer.train()", shown, result)]))
    assert run.roles["Validation_Loss"] == Role.VAL_LOSS and run.series("Validation_Loss")["step"].tolist() == [1, 2, 3]
    assert run.series("Training_Loss")["step"].tolist() == [2, 3] and run.roles["validation_Accuracy"] == Role.VAL_ACC
    assert "training_loss" not in run.tags  # TrainOutput(…): the closing summary, no point


def test_a_notebook_without_a_training_log_is_passed_over_in_a_folder_and_refused_when_named(tmp_path):
    analysis = write_notebook(tmp_path / "runs" / "analysis.ipynb", [
        code_cell("df.describe()", stream("count  60000\nmean   4.45\n")), code_cell("plot()", IMAGE)])
    empty = write_notebook(tmp_path / "runs" / "unrun.ipynb", [code_cell("model.fit(x, y)")])
    write_notebook(tmp_path / "runs" / "train.ipynb", [code_cell("model.fit(x, y)", stream(KERAS_EPOCHS))])
    assert [Path(run.path).name for run in curvedoc.load(tmp_path / "runs")] == ["train.ipynb"]
    for path in (analysis, empty):
        with pytest.raises(CurvedocError) as refused:
            curvedoc.load(path)
        assert "\n" not in str(refused.value) and path.name in str(refused.value)
    assert classify_file(empty).family == "notebook" and discover(tmp_path / "runs").sources


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_cut_or_corrupted_notebooks_only_give_curvedoc_errors(tmp_path, data):
    path = write_notebook(tmp_path / "train.ipynb", [code_cell("model.fit(x, y)", stream(KERAS_EPOCHS), IMAGE)])
    path.write_bytes(damaged(data, path.read_bytes()))
    assert_reads_or_refuses_in_one_line(notebook, path)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(document=st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                             lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                                 st.sampled_from(["cells", "outputs", "output_type", "text", "data", "text/html",
                                                  "text/plain", "worksheets", "stream", "display_data"]),
                                 inner, max_size=4), max_leaves=12))
def test_a_notebook_of_any_shape_only_gives_curvedoc_errors(tmp_path, document):
    path = tmp_path / "odd.ipynb"
    path.write_text(json.dumps(document))
    assert_reads_or_refuses_in_one_line(notebook, path)
