"""``CurvedocCallback`` for the Hugging Face ``Trainer``: the rules on every log event, a warning per certain
finding (the ``curvedoc`` logger, and a W&B alert when the run logs to W&B), and, when asked, training stopped at
a finding of a chosen severity.

    trainer = Trainer(..., callbacks=[CurvedocCallback(stop_on="error")])

The class count (``num_labels``) or vocabulary size (``vocab_size``) comes from the model's config. The loss the
Trainer logs is already its NaN filter's output (``logging_nan_inf_filter``): a NaN shows in ``grad_norm``, which
CD101 reads.
"""

from __future__ import annotations

from transformers import TrainerCallback

from curvedoc.config import Config
from curvedoc.integrations import LiveRun, Reporting


class CurvedocCallback(TrainerCallback, Reporting):
    def __init__(self, stop_on: str | None = None, config: Config | None = None):
        """``stop_on``: "error", "warning" or "info" to stop training at a finding that severe; None never."""
        self._setup(stop_on, config)

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        model_config = model.config.to_dict() if model is not None and hasattr(model, "config") else {}
        self.live = LiveRun(args.output_dir, self.config, model_config, planned_end=state.max_steps or None)

    def on_log(self, args, state, control, logs=None, model=None, **kwargs):
        if logs and self._report(state.global_step, logs):
            control.should_training_stop = True
