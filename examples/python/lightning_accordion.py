"""A PyTorch Lightning run under Accordion: the callback does what the DDP script does by hand.

Scenario: a team trains with Lightning's DDP strategy and wants Accordion's
PowerSGD schedule and a trace without touching the LightningModule. One
callback attaches the hook once Lightning has wrapped the module in
DistributedDataParallel, ends each epoch with the LR the scheduler set (a
StepLR decay here, which holds every layer critical) and closes the trace
when fit ends. The module validates every epoch, as nearly every Lightning
script does (Lightning's validation loop leaves the DDP wrapper in eval mode:
the hook follows DDP, which reduces whenever grad mode is on), and the
validation accuracy goes into the trace. The trace is then what
accordion-analyze reads.

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

    def validation_step(self, batch, _):
        x, y = batch
        self.log("val_acc", (self.net(x).argmax(1) == y).float().mean(), sync_dist=True)

    def configure_optimizers(self):
        opt = torch.optim.SGD(self.parameters(), lr=0.1, momentum=0.9)
        return [opt], [torch.optim.lr_scheduler.StepLR(opt, step_size=4, gamma=0.1)]


out_dir = sys.argv[1]
trace = os.path.join(out_dir, "lightning.trace")
g = torch.Generator().manual_seed(0)
x = torch.randn(640, 32, generator=g)
data = TensorDataset(x[:512], (x[:512, :4].argmax(1)))  # a learnable rule
held_out = TensorDataset(x[512:], (x[512:, :4].argmax(1)))

pl.seed_everything(0, verbose=False)
callback = accordion.lightning.AccordionCallback(scheme="powersgd", low=2, high=1, interval=1, trace=trace,
                                                 network_probe=False, dataset="random")
trainer = pl.Trainer(accelerator="cpu", devices=2, strategy="ddp", max_epochs=6, callbacks=[callback],
                     logger=False, enable_checkpointing=False, enable_progress_bar=False,
                     enable_model_summary=False)
trainer.fit(Classifier(), DataLoader(data, batch_size=32, shuffle=False), DataLoader(held_out, batch_size=32))

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
        (first_loss, first_acc), (last_loss, last_acc) = db.execute(
            "SELECT train_loss, test_acc FROM epochs WHERE epoch IN (0, 5) ORDER BY epoch").fetchall()
        iterations = db.execute("SELECT MIN(iterations) FROM epochs").fetchone()[0]
    print(f"every epoch trained through the hook: at least {iterations} steps each")
    print(f"it learns: training loss {first_loss:.2f} -> {last_loss:.2f}, "
          f"validation accuracy {100 * first_acc:.0f} % -> {100 * last_acc:.0f} %")

# Lightning leaves the process group to the interpreter's exit, where Gloo's
# threads sometimes abort the process (with or without Accordion): end it here.
if torch.distributed.is_initialized():
    torch.distributed.destroy_process_group()
