"""A Lightning fit as Lightning users write it, with or without the Accordion
callback, for the tests (run by torchrun). Rank 0 writes what the test checks
as JSON to --out: every training step's loss, the epochs trained, the trace's
path."""

import argparse
import json
import os
import warnings

import lightning.pytorch as pl
import torch
import torch.nn.functional as F
from lightning.pytorch.callbacks import EarlyStopping, ModelCheckpoint
from lightning.pytorch.plugins.precision import MixedPrecision
from torch.utils.data import DataLoader, TensorDataset

import accordion.lightning

warnings.filterwarnings("ignore")  # Lightning's advice on workers and logging is not the point here


class Classifier(pl.LightningModule):
    def __init__(self, two_optimizers=False, lr=0.1):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64),
                                       torch.nn.ReLU(), torch.nn.Linear(64, 4))
        self.two_optimizers = two_optimizers
        self.lr = lr
        self.step_losses = []
        if two_optimizers:
            self.automatic_optimization = False

    def training_step(self, batch, _):
        x, y = batch
        loss = F.cross_entropy(self.net(x), y)
        self.step_losses.append(loss.item())
        self.log("train_loss", loss, on_epoch=True, on_step=False, sync_dist=True)
        if self.two_optimizers:
            for opt in self.optimizers():
                opt.zero_grad()
            self.manual_backward(loss)
            for opt in self.optimizers():
                opt.step()
        return loss

    def validation_step(self, batch, _):
        x, y = batch
        logits = self.net(x)
        self.log("val_loss", F.cross_entropy(logits, y), sync_dist=True)
        self.log("val_acc", (logits.argmax(1) == y).float().mean(), sync_dist=True)

    def configure_optimizers(self):
        if self.two_optimizers:
            return [torch.optim.SGD(self.net[0].parameters(), lr=self.lr),
                    torch.optim.SGD(self.net[2:].parameters(), lr=self.lr)]
        opt = torch.optim.SGD(self.parameters(), lr=self.lr, momentum=0.9)
        return [opt], [torch.optim.lr_scheduler.StepLR(opt, step_size=4, gamma=0.5)]


def data(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 32, generator=g)
    return TensorDataset(x, x[:, :4].argmax(1))  # a learnable rule


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scheme", default=None, help="the callback's scheme; none: no callback")
    ap.add_argument("--low", type=float, default=None)
    ap.add_argument("--high", type=float, default=None)
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--val", action="store_true", help="a validation loader and validation_step")
    ap.add_argument("--val-check-interval", type=float, default=1.0)
    ap.add_argument("--limit-train-batches", type=float, default=1.0)
    ap.add_argument("--accumulate", type=int, default=1)
    ap.add_argument("--precision", default="32-true", help="32-true, bf16-mixed, or 16-mixed (fp16 + GradScaler)")
    ap.add_argument("--init-scale", type=float, default=2.0 ** 16)
    ap.add_argument("--early-stop", action="store_true", help="EarlyStopping on val_loss, stopping at once")
    ap.add_argument("--ckpt-dir", default=None, help="ModelCheckpoint every epoch into this folder")
    ap.add_argument("--resume", default=None, help="ckpt_path= for fit")
    ap.add_argument("--two-optimizers", action="store_true")
    ap.add_argument("--trace", default=None)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()

    pl.seed_everything(0, verbose=False)
    callbacks = []
    if a.scheme is not None:
        kw = {k: v for k, v in (("low", a.low), ("high", a.high)) if v is not None}
        if a.scheme != "dense":
            kw.setdefault("interval", 1)
        callbacks.append(accordion.lightning.AccordionCallback(scheme=a.scheme, trace=a.trace, network_probe=False,
                                                               dataset="random", **kw))
    if a.early_stop:
        # A threshold every epoch meets: Lightning stops after the first validation.
        callbacks.append(EarlyStopping(monitor="val_loss", stopping_threshold=1e9, mode="min"))
    if a.ckpt_dir:
        callbacks.append(ModelCheckpoint(dirpath=a.ckpt_dir, save_top_k=-1, every_n_epochs=1))
    plugins = []
    precision = a.precision
    if a.precision == "16-mixed":
        # Lightning turns 16-mixed into bf16 on a CPU; fp16 with its scaler as on a GPU:
        plugins.append(MixedPrecision("16-mixed", "cpu", scaler=torch.amp.GradScaler("cpu", init_scale=a.init_scale)))
        precision = None
    trainer = pl.Trainer(accelerator="cpu", devices=2, strategy="ddp", max_epochs=a.epochs, callbacks=callbacks,
                         logger=False, enable_checkpointing=bool(a.ckpt_dir), enable_progress_bar=False,
                         enable_model_summary=False, val_check_interval=a.val_check_interval,
                         limit_train_batches=a.limit_train_batches, accumulate_grad_batches=a.accumulate,
                         plugins=plugins or None, **({"precision": precision} if precision else {}))
    module = Classifier(two_optimizers=a.two_optimizers)
    val = DataLoader(data(128, 1), batch_size=32) if a.val else None
    trainer.fit(module, DataLoader(data(512, 0), batch_size=32, shuffle=False), val, ckpt_path=a.resume)

    if trainer.global_rank == 0:
        with open(a.out, "w") as f:
            json.dump({"losses": module.step_losses, "epochs_trained": trainer.current_epoch,
                       "trace": a.trace, "global_step": trainer.global_step}, f)
    # Lightning leaves the process group to the interpreter's exit, where
    # Gloo's threads sometimes abort it ("terminate called without an active
    # exception", seen without the callback too): end it here.
    if torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
