"""The same MLP, seed and data order trained by accordion-train and by a PyTorch
script under the Accordion DDP hook (workers/train_like_trainer.py) record the
same trace: epoch-0 per-layer gradient norms agree to float tolerance, levels
and floats are identical, epoch by epoch and layer by layer.

Both runs are real processes: accordion-train --nproc 2 and torchrun with 2
Gloo ranks, one compute thread each. The script gets accordion-train's batches
from accordion._core.TrainingData (the trainer's own dataset reading,
normalisation and sampler) and checks its initial weights against
accordion._core.initial_parameters (the trainer's own model construction).
"""

import json
import os
import sqlite3
import subprocess

import pytest

from conftest import load_json, tool, torchrun

DATA_DIR = os.environ.get("ACCORDION_FASHION_MNIST", "/usr/share/datasets/fashion-mnist")

# One run's settings, given alike to both: 3 epochs with --interval 1, so the
# controller moves layers from the low to the high level in epoch 2; a bucket
# size that cuts the MLP into 3 of the exchange's buckets (DDP keeps its one).
COMMON = {"limit-samples": 2048, "batch-size": 64, "epochs": 3, "lr": 0.1, "momentum": 0.9, "weight-decay": 1e-4,
          "policy": "accordion", "eta": 0.5, "interval": 1, "bucket-mb": 0.002, "trace-iterations": 4}
SCHEMES = {"powersgd": {"scheme": "powersgd", "low": 2, "high": 1, "seed": 3},
           "topk": {"scheme": "topk", "low": 0.5, "high": 0.1, "seed": 5}}
EPOCH0_RTOL = 1e-6  # measured: 0 (bitwise equal) on Debian 12's LibTorch / torch 1.13
LATER_RTOL = 1e-4


def flags(run):
    out = []
    for name, value in run.items():
        out += [f"--{name}", str(value)]
    return out


@pytest.fixture(scope="module", params=sorted(SCHEMES))
def runs(request, core, tmp_path_factory):
    run = dict(COMMON, **SCHEMES[request.param])
    train = tool("accordion-train")
    if not os.path.isdir(DATA_DIR):
        pytest.skip(f"Fashion-MNIST not found in {DATA_DIR} (apt-get install dataset-fashion-mnist)")
    tmp = tmp_path_factory.mktemp(f"matches_trainer_{request.param}")
    cpp_trace, py_trace, py_out = tmp / "trainer.trace", tmp / "hook.trace", tmp / "hook.json"
    env = dict(os.environ, OMP_NUM_THREADS="1")
    cpp = subprocess.run([train, "--nproc", "2", "--threads", "1", "--data-dir", DATA_DIR, "--no-network-probe",
                          "--trace", str(cpp_trace), *flags(run)],
                         env=env, capture_output=True, text=True, timeout=300)
    assert cpp.returncode == 0, cpp.stdout + cpp.stderr
    py = torchrun("train_like_trainer.py", "--data-dir", DATA_DIR, "--trace", py_trace, "--out", py_out,
                  *flags(run), timeout=300)
    assert py.returncode == 0, py.stdout + py.stderr
    assert "terminate called" not in py.stdout + py.stderr
    return {"cpp": str(cpp_trace), "py": str(py_trace), "summary": load_json(py_out), "run": run}


def rows(path, sql):
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return db.execute(sql).fetchall()


def epoch_layers(path):
    return {(e, l): (norm, level, floats, critical) for e, l, norm, level, floats, critical in rows(
        path, "SELECT epoch, layer_id, grad_norm, level, floats_sent, critical FROM epoch_layers")}


def relative(a, b):
    return abs(a - b) / max(abs(a), abs(b), 1e-30)


def test_python_mlp_starts_from_the_trainers_weights(runs):
    assert runs["summary"]["same_initial_weights"]


def test_the_run_records_the_same_versions(runs):
    cpp, py = (json.loads(rows(runs[k], "SELECT versions_json FROM run")[0][0]) for k in ("cpp", "py"))
    version = subprocess.run([tool("accordion-train"), "--version"], capture_output=True, text=True).stdout
    expected = ["compiler", "libtorch", "sqlite", "toolkit"]
    if "NCCL communicator linked" in version:
        expected.insert(2, "nccl_communicator")
        assert cpp["nccl_communicator"].startswith("NCCL ")
    assert sorted(cpp) == expected
    assert cpp["libtorch"] in version
    assert py == cpp


def test_layers_are_the_same(runs):
    sql = "SELECT layer_id, name, shape, numel, compressible, floats_dense, floats_low, floats_high FROM layers " \
          "ORDER BY layer_id"
    cpp = rows(runs["cpp"], sql)
    assert [r[1] for r in cpp] == ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "fc3.weight", "fc3.bias"]
    assert rows(runs["py"], sql) == cpp


def test_epoch0_layer_norms_agree(runs):
    cpp, py = epoch_layers(runs["cpp"]), epoch_layers(runs["py"])
    layers = sorted(l for e, l in cpp if e == 0)
    assert layers == sorted(l for e, l in py if e == 0) and len(layers) == 6
    worst = max(relative(cpp[0, l][0], py[0, l][0]) for l in layers)
    print(f"{runs['run']['scheme']} epoch 0: largest relative difference of a layer's norm {worst:.3g}")
    for l in layers:
        assert cpp[0, l][0] > 0
        assert py[0, l][0] == pytest.approx(cpp[0, l][0], rel=EPOCH0_RTOL, abs=0), f"layer {l}"


def test_levels_and_floats_identical_every_epoch(runs):
    cpp, py = epoch_layers(runs["cpp"]), epoch_layers(runs["py"])
    assert sorted(cpp) == sorted(py)
    assert {e for e, _ in cpp} == set(range(runs["run"]["epochs"]))
    for key in sorted(cpp):
        assert py[key][1:] == cpp[key][1:], f"epoch {key[0]} layer {key[1]}: (level, floats, critical)"
    # The run exercises a switch: low rank while critical, then the high one.
    levels = {cpp[key][1] for key in cpp}
    assert levels == {float(runs["run"]["low"]), float(runs["run"]["high"])}
    sql = "SELECT epoch, lr, batch_size, iterations, critical, floats_sent FROM epochs ORDER BY epoch"
    assert rows(runs["py"], sql) == rows(runs["cpp"], sql)


def test_later_epochs_and_losses_agree(runs):
    cpp, py = epoch_layers(runs["cpp"]), epoch_layers(runs["py"])
    for key in sorted(cpp):
        assert py[key][0] == pytest.approx(cpp[key][0], rel=LATER_RTOL), f"epoch {key[0]} layer {key[1]}"
    sql = "SELECT epoch, model_grad_norm, train_loss, train_acc FROM epochs ORDER BY epoch"
    for c, p in zip(rows(runs["cpp"], sql), rows(runs["py"], sql), strict=True):
        assert p[0] == c[0]
        assert p[1:] == pytest.approx(c[1:], rel=LATER_RTOL), f"epoch {c[0]}"


def test_same_collectives(runs):
    sql = "SELECT epoch, iteration, rank, seq, op, bucket, tag, bytes FROM collectives " \
          "ORDER BY epoch, iteration, rank, seq"
    cpp = rows(runs["cpp"], sql)
    assert cpp
    assert rows(runs["py"], sql) == cpp


def test_sampler_binding_splits_each_step_over_the_ranks(core):
    n, batch, world, seed = 1000, 64, 2, 3
    samplers = [core.DistributedSampler(n, batch, world, r, seed) for r in range(world)]
    for epoch in (0, 1):
        per_rank = [s.epoch_batches(epoch) for s in samplers]
        assert len(per_rank[0]) == samplers[0].steps_per_epoch == (n + batch - 1) // batch
        seen = [i for steps in zip(*per_rank) for ids in steps for i in ids]
        assert sorted(seen) == list(range(n))  # 1000 splits evenly: no padding
    assert samplers[0].epoch_batches(0) != samplers[0].epoch_batches(1)
    with pytest.raises(ValueError):
        core.DistributedSampler(n, 63, world, 0, seed)
