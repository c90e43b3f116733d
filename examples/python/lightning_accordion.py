"""A PyTorch Lightning run under Accordion: the callback does what the DDP script does by hand.

Scenario: a team trains with Lightning's DDP strategy and wants Accordion's
PowerSGD schedule and a trace without touching the LightningModule. One
callback attaches the hook once Lightning has wrapped the module in
DistributedDataParallel, ends each epoch with the LR the scheduler set (a
StepLR decay here, which holds every layer critical) and closes the trace
when fit ends. The trace is then what accordion-analyze reads.

Run:  torchrun --nproc_per_node 2 lightning_accordion.py OUT_DIR
"""

import os
import sqlite3
import sys
import warnings

import lightning.pytorch as pl
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

import accordion.lightning

warnings.filterwarnings("ignore")  # Lightning's advice on workers and logging is not the point here


class Classifier(pl.LightningModule):
    """The user's own module: unchanged by Accordion."""

    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64),
                                       torch.nn.ReLU(), torch.nn.Linear(64, 4))

    def training_step(self, batch, _):
        x, y = batch
        loss = F.cross_entropy(self.net(x), y)
        self.log("train_loss", loss, on_epoch=True, on_step=False, sync_dist=True)
        return loss

    def configure_optimizers(self):
        opt = torch.optim.SGD(self.parameters(), lr=0.1)
        return [opt], [torch.optim.lr_scheduler.StepLR(opt, step_size=4, gamma=0.1)]


out_dir = sys.argv[1]
trace = os.path.join(out_dir, "lightning.trace")
g = torch.Generator().manual_seed(0)
x = torch.randn(512, 32, generator=g)
data = TensorDataset(x, (x[:, :4].argmax(1)))  # a learnable rule

pl.seed_everything(0, verbose=False)
callback = accordion.lightning.AccordionCallback(scheme="powersgd", low=2, high=1, interval=1, trace=trace,
                                                 network_probe=False, dataset="random")
trainer = pl.Trainer(accelerator="cpu", devices=2, strategy="ddp", max_epochs=6, callbacks=[callback],
                     logger=False, enable_checkpointing=False, enable_progress_bar=False,
                     enable_model_summary=False)
trainer.fit(Classifier(), DataLoader(data, batch_size=32, shuffle=False))

if trainer.global_rank == 0:
    with sqlite3.connect(f"file:{trace}?mode=ro", uri=True) as db:
        status, writer, epochs, batch = db.execute(
            "SELECT status, writer, epochs_planned, batch_size FROM run").fetchone()
        print(f"trace: {status}, written by {writer}, {epochs} epochs planned, global batch {batch}")
        for epoch, lr, critical, levels in db.execute(
                "SELECT e.epoch, e.lr, e.critical, GROUP_CONCAT(l.level, ' ') FROM epochs e "
                "JOIN epoch_layers l ON l.epoch = e.epoch GROUP BY e.epoch ORDER BY e.epoch"):
            ranks = " ".join(str(int(float(v))) for v in levels.split())
            print(f"epoch {epoch}: lr {lr:g}, {'critical' if critical else 'not critical'}, PowerSGD ranks {ranks}")
