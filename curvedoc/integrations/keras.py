"""``CurvedocCallback`` for Keras 3: the rules on the loss and metrics Keras reports, a warning per certain
finding, and, when asked, training stopped at a finding of a chosen severity.

    model.fit(..., callbacks=[CurvedocCallback(stop_on="error")])

Keras reports each batch's running mean over the epoch so far (``on_train_batch_end``) and the validation
metrics at each epoch's end; the step is the number of batches trained.
"""

from __future__ import annotations

import keras

from curvedoc.config import Config
from curvedoc.integrations import LiveRun, Reporting


class CurvedocCallback(keras.callbacks.Callback, Reporting):
    def __init__(self, stop_on: str | None = None, config: Config | None = None, num_classes: int | None = None):
        """``stop_on``: "error", "warning" or "info" to stop training at a finding that severe; None never.
        ``num_classes``: the class count (a Keras model does not record it)."""
        super().__init__()
        self.num_classes = num_classes
        self.step = 0
        self._setup(stop_on, config)

    def on_train_begin(self, logs=None):
        epochs, steps = self.params.get("epochs"), self.params.get("steps")
        planned = epochs * steps if epochs and steps else None
        self.live = LiveRun("keras", self.config, {"num_classes": self.num_classes} if self.num_classes else {},
                            planned_end=planned)

    def on_train_batch_end(self, batch, logs=None):
        self.step += 1
        self._log(logs)

    def on_epoch_end(self, epoch, logs=None):
        self._log({name: value for name, value in (logs or {}).items() if name.startswith("val_")})

    def _log(self, logs) -> None:
        if logs and self._report(self.step, {name: float(value) for name, value in logs.items()}):
            self.model.stop_training = True
