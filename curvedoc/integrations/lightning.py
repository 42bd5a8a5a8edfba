"""``CurvedocCallback`` for Lightning: the rules on what the LightningModule logs (``self.log``), a warning per
certain finding (the ``curvedoc`` logger, a text summary in the run's TensorBoard, a W&B alert), and, when asked,
training stopped at a finding of a chosen severity.

    trainer = L.Trainer(..., callbacks=[CurvedocCallback(stop_on="error")])

Train values are read at the Trainer's logging interval (``log_every_n_steps``), validation values at the end of
each validation; the class count comes from the module's hyperparameters (``num_classes``, ``vocab_size`` …).
"""

from __future__ import annotations

from lightning.pytorch.callbacks import Callback

from curvedoc.config import Config
from curvedoc.integrations import LiveRun, Reporting


def tensorboard_writers(trainer) -> list:
    """The SummaryWriters of the run's TensorBoard loggers (``TensorBoardLogger.experiment``). Told by the logger's
    class, not by asking each logger for its experiment: a W&B logger's ``experiment`` starts a W&B run."""
    return [logger.experiment for logger in trainer.loggers
            if type(logger).__name__ == "TensorBoardLogger" and hasattr(logger.experiment, "add_text")]


class CurvedocCallback(Callback, Reporting):
    def __init__(self, stop_on: str | None = None, config: Config | None = None):
        """``stop_on``: "error", "warning" or "info" to stop training at a finding that severe; None never."""
        self._setup(stop_on, config)

    def on_train_start(self, trainer, pl_module):
        planned = trainer.max_steps if trainer.max_steps and trainer.max_steps > 0 else None
        hparams = dict(getattr(pl_module, "hparams", {}) or {})
        self.live = LiveRun(trainer.default_root_dir, self.config, hparams, planned_end=planned)

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        if trainer.global_step % max(1, trainer.log_every_n_steps) == 0:
            self._log(trainer, {name: value for name, value in trainer.logged_metrics.items()
                                if not name.startswith("val")})

    def on_validation_end(self, trainer, pl_module):
        if not trainer.sanity_checking:
            self._log(trainer, {name: value for name, value in trainer.callback_metrics.items()
                                if name.startswith("val")})

    def _log(self, trainer, metrics) -> None:
        if self.live is None:
            return  # before training starts: values would be converted for nothing
        values = {name: float(value) for name, value in metrics.items() if getattr(value, "numel", lambda: 1)() == 1}
        if self._report(trainer.global_step, values, lambda: tensorboard_writers(trainer)):
            trainer.should_stop = True
