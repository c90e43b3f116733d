"""Accordion for PyTorch Lightning: a callback that attaches the hook to the
strategy's ``DistributedDataParallel`` model and ends each epoch with it.

    import accordion.lightning
    trainer = lightning.Trainer(strategy="ddp", max_epochs=30, callbacks=[
        accordion.lightning.AccordionCallback(scheme="powersgd", low=2, high=1, trace="run.trace")])

Every keyword of :func:`accordion.ddp.attach` is accepted; ``epochs`` defaults to
the trainer's ``max_epochs``, ``train_samples`` and ``batch_size`` to what the
training data loader says (its batch times the world size). ``trace`` is written by rank 0 (give it everywhere or
on rank 0 only). The epoch's learning rate is the first optimizer's first group
(``next_lr`` what the LR schedulers set for the next one: an epoch is ended
at the next one's start, once Lightning has stepped them); ``train_loss`` and
``test_accuracy`` are taken from the logged metrics named by ``loss_metric`` and
``accuracy_metric`` when the module logs them (else not recorded: "—").
"""

from __future__ import annotations

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

    def on_train_start(self, trainer: "pl.Trainer", pl_module: "pl.LightningModule") -> None:
        model = trainer.strategy.model
        if not isinstance(model, DistributedDataParallel):
            raise ValueError("AccordionCallback needs Lightning's DDP strategy (strategy='ddp'), which wraps the "
                             f"module in DistributedDataParallel; this trainer's model is {type(model).__name__}")
        kwargs = dict(self._kwargs)
        if trainer.max_epochs is not None and trainer.max_epochs > 0:
            kwargs.setdefault("epochs", trainer.max_epochs)
        kwargs.setdefault("model_name", type(pl_module).__name__)
        loader = trainer.train_dataloader
        if getattr(loader, "dataset", None) is not None and getattr(loader, "batch_size", None):
            kwargs.setdefault("train_samples", len(loader.dataset))
            kwargs.setdefault("batch_size", loader.batch_size * trainer.world_size)
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

    def _end_open_epoch(self, trainer: "pl.Trainer", next_lr: float) -> None:
        if self.hook is None or not self._epoch_open:
            return
        self._epoch_open = False
        metrics = trainer.callback_metrics
        self.hook.end_epoch(lr=self._lr, next_lr=next_lr, train_loss=_metric(metrics, self._loss_metric),
                            test_accuracy=_metric(metrics, self._accuracy_metric))


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
