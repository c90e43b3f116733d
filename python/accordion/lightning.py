"""Accordion for PyTorch Lightning: a callback that attaches the hook to the
strategy's ``DistributedDataParallel`` model and ends each epoch with it.

    import accordion.lightning
    trainer = lightning.Trainer(strategy="ddp", max_epochs=30, callbacks=[
        accordion.lightning.AccordionCallback(scheme="powersgd", low=2, high=1, trace="run.trace")])

Every keyword of :func:`accordion.ddp.attach` is accepted; ``epochs`` defaults to
the trainer's ``max_epochs``; ``batch_size`` to the global batch one optimizer
step sees (the loader's batch times the world size times
``accumulate_grad_batches``) and ``train_samples`` to the samples one epoch
trains (``limit_train_batches`` counted); ``grad_scaler`` to the precision
plugin's GradScaler under ``precision="16-mixed"``. ``trace`` is written by
rank 0 (give it everywhere or on rank 0 only). The epoch's learning rate is
the optimizer's first group (``next_lr`` what the LR schedulers set for the
next one: an epoch is ended at the next one's start, once Lightning has
stepped them); ``train_loss`` and ``test_accuracy`` are taken from the logged
metrics named by ``loss_metric`` and ``accuracy_metric`` when the module logs
them (else not recorded: "—").

Validation loops (and the sanity check), ``val_check_interval``, early
stopping and mixed precision need nothing more. A module with more than one
optimizer is refused, and so is a fit resumed with ``ckpt_path=`` while a
trace is being recorded: the callback's state in the checkpoint says which
trace recorded the first part (its epochs stay readable); resume without
``trace`` to train on.
"""

from __future__ import annotations

import math
from typing import Any, Dict, Optional

import torch
from torch.nn.parallel import DistributedDataParallel

try:
    import lightning.pytorch as pl
except ImportError:  # the older package name
    import pytorch_lightning as pl  # type: ignore[no-redef]

from . import ddp


class AccordionCallback(pl.Callback):
    """Records and compresses a Lightning DDP run with Accordion (see the module's text)."""

    def __init__(self, *, loss_metric: str = "train_loss", accuracy_metric: str = "val_acc", **attach_kwargs: Any):
        super().__init__()
        self._kwargs: Dict[str, Any] = dict(attach_kwargs)
        self._loss_metric = loss_metric
        self._accuracy_metric = accuracy_metric
        self.hook: Optional[ddp.AccordionHook] = None
        self._lr = 0.0
        self._epoch_open = False
        self._epochs_ended = 0
        self._resumed_from: Optional[Dict[str, Any]] = None

    def on_train_start(self, trainer: "pl.Trainer", pl_module: "pl.LightningModule") -> None:
        model = trainer.strategy.model
        if not isinstance(model, DistributedDataParallel):
            raise ValueError("AccordionCallback needs Lightning's DDP strategy (strategy='ddp'), which wraps the "
                             f"module in DistributedDataParallel; this trainer's model is {type(model).__name__}")
        if len(trainer.optimizers) > 1:
            raise ValueError(f"AccordionCallback takes a module with one optimizer; this one configures "
                             f"{len(trainer.optimizers)} (one optimizer step is one Accordion step)")
        kwargs = dict(self._kwargs)
        if self._resumed_from is not None and kwargs.get("trace") is not None:
            raise ValueError(f"AccordionCallback cannot continue a trace in a fit resumed from a checkpoint: trace "
                             f"{self._resumed_from.get('trace')!r} recorded the first "
                             f"{self._resumed_from.get('epochs_ended')} epoch(s) and keeps them; resume without "
                             "trace= to train on")
        if trainer.max_epochs is not None and trainer.max_epochs > 0:
            kwargs.setdefault("epochs", trainer.max_epochs)
        kwargs.setdefault("model_name", type(pl_module).__name__)
        loader = trainer.train_dataloader
        per_rank = getattr(loader, "batch_size", None)
        if getattr(loader, "dataset", None) is not None and per_rank:
            accumulate = max(1, int(trainer.accumulate_grad_batches))
            kwargs.setdefault("batch_size", per_rank * trainer.world_size * accumulate)
            batches = trainer.num_training_batches
            if isinstance(batches, int) or (isinstance(batches, float) and math.isfinite(batches)):
                kwargs.setdefault("train_samples", int(batches) * per_rank * trainer.world_size)
            else:
                kwargs.setdefault("train_samples", len(loader.dataset))
        scaler = getattr(trainer.precision_plugin, "scaler", None)
        if scaler is not None:
            kwargs.setdefault("grad_scaler", scaler)
        self.hook = ddp.attach(model, **kwargs)
        self._epoch_open = False

    # An epoch is ended at the next one's start: Lightning steps epoch-wise LR
    # schedulers after on_train_epoch_end, so only then is the next epoch's LR
    # known (a decay holds every layer critical, as in the paper), and the
    # epoch's validation metrics are logged by then too.
    def on_train_epoch_start(self, trainer: "pl.Trainer", pl_module: "pl.LightningModule") -> None:
        lr = _first_lr(trainer)
        self._end_open_epoch(trainer, next_lr=lr)
        self._lr = lr
        self._epoch_open = True

    def on_train_end(self, trainer: "pl.Trainer", pl_module: "pl.LightningModule") -> None:
        self._end_open_epoch(trainer, next_lr=self._lr)
        if self.hook is not None:
            self.hook.close()

    def on_exception(self, trainer: "pl.Trainer", pl_module: "pl.LightningModule", exception: BaseException) -> None:
        if self.hook is not None:
            self.hook.close(complete=False)

    def state_dict(self) -> Dict[str, Any]:
        return {"trace": self._kwargs.get("trace"), "epochs_ended": self._epochs_ended}

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        self._resumed_from = dict(state_dict)

    def _end_open_epoch(self, trainer: "pl.Trainer", next_lr: float) -> None:
        if self.hook is None or not self._epoch_open:
            return
        self._epoch_open = False
        metrics = trainer.callback_metrics
        self.hook.end_epoch(lr=self._lr, next_lr=next_lr, train_loss=_metric(metrics, self._loss_metric),
                            test_accuracy=_metric(metrics, self._accuracy_metric))
        self._epochs_ended += 1


def _first_lr(trainer: "pl.Trainer") -> float:
    if not trainer.optimizers:
        return 0.0
    return float(trainer.optimizers[0].param_groups[0]["lr"])


def _metric(metrics: Dict[str, Any], name: str) -> Optional[float]:
    value = metrics.get(name)
    if value is None:
        return None
    if isinstance(value, torch.Tensor):
        value = value.item()
    return float(value)
