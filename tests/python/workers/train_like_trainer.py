"""accordion-train's MLP run, reproduced in PyTorch under the Accordion DDP hook (run by torchrun).

The same initial weights (torch.manual_seed(seed) and the trainer's construction
order; checked against accordion._core.initial_parameters), the same batches
(accordion._core.TrainingData: the trainer's own dataset reading, normalisation
and sampler), the same SGD. Rank 0 writes the trace; --out gets a JSON summary.
"""

import argparse
import json

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

import accordion._core as core
import accordion.ddp


class Mlp(torch.nn.Module):
    """accordion-train's "mlp" (trainer/models.cc): 784-256-128-10, fc1..fc3."""

    def __init__(self, inputs, classes):
        super().__init__()
        self.fc1 = torch.nn.Linear(inputs, 256)
        self.fc2 = torch.nn.Linear(256, 128)
        self.fc3 = torch.nn.Linear(128, classes)

    def forward(self, x):
        x = torch.relu(self.fc1(x.flatten(1)))
        x = torch.relu(self.fc2(x))
        return self.fc3(x)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", default="fashion-mnist")
    ap.add_argument("--data-dir", default="")
    ap.add_argument("--limit-samples", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--momentum", type=float, default=0.9)
    ap.add_argument("--weight-decay", type=float, default=1e-4)
    ap.add_argument("--scheme", default="powersgd")
    ap.add_argument("--policy", default="accordion")
    ap.add_argument("--low", type=float, default=None)
    ap.add_argument("--high", type=float, default=None)
    ap.add_argument("--eta", type=float, default=0.5)
    ap.add_argument("--interval", type=int, default=10)
    ap.add_argument("--bucket-mb", type=float, default=25.0)
    ap.add_argument("--trace-iterations", type=int, default=4)
    ap.add_argument("--trace", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()

    torch.set_num_threads(1)  # accordion-train --threads 1
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    data = core.TrainingData(dataset=a.dataset, data_dir=a.data_dir, limit_samples=a.limit_samples, seed=a.seed,
                             world_size=world, rank=rank)
    shape = data.shape

    torch.manual_seed(a.seed)  # as Trainer::State::BuildModel
    model = Mlp(shape["channels"] * shape["height"] * shape["width"], shape["classes"])
    expected = core.initial_parameters("mlp", a.seed, shape)
    named = list(model.named_parameters())
    same_init = [n for n, _ in named] == [n for n, _ in expected] and all(
        torch.equal(p.detach(), q) for (_, p), (_, q) in zip(named, expected))
    # The trainer reseeds each rank afterwards; the MLP draws nothing more, but keep the streams alike.
    torch.manual_seed(core.worker_seed(a.seed, rank))

    ddp = DDP(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=a.lr, momentum=a.momentum, weight_decay=a.weight_decay)
    kw = {k: v for k, v in (("low", a.low), ("high", a.high)) if v is not None}
    out = {"same_initial_weights": same_init, "epochs": []}
    acc = accordion.ddp.attach(ddp, scheme=a.scheme, policy=a.policy, eta=a.eta, interval=a.interval, trace=a.trace,
                               overwrite=True, bucket_mb=a.bucket_mb, seed=a.seed,
                               sample_iterations=a.trace_iterations, network_probe=False, model_name="mlp",
                               dataset=a.dataset, train_samples=data.train_samples, batch_size=a.batch_size,
                               epochs=a.epochs, **kw)
    with acc:
        for epoch in range(a.epochs):
            levels = acc.levels
            data.start_epoch(epoch, a.batch_size)
            ddp.train()
            totals = torch.zeros(3, dtype=torch.float64)  # summed loss, correct, count
            for step in range(data.steps):
                x, y = data.train_batch(step)
                logits = ddp(x)
                loss = F.cross_entropy(logits, y)
                opt.zero_grad()
                loss.backward()
                opt.step()
                with torch.no_grad():
                    totals += torch.tensor([loss.item() * y.numel(), (logits.argmax(1) == y).sum().item(),
                                            y.numel()], dtype=torch.float64)
            dist.all_reduce(totals)
            summary = acc.end_epoch(lr=a.lr, next_lr=a.lr, train_loss=(totals[0] / totals[2]).item(),
                                    train_accuracy=(totals[1] / totals[2]).item()).to_dict()
            summary["levels"] = levels
            summary["steps"] = data.steps
            out["epochs"].append(summary)
    if rank == 0:
        with open(a.out, "w") as f:
            json.dump(out, f)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
