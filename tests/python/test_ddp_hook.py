"""The Accordion DDP hook against the real thing: real torchrun ranks over Gloo,
the toolkit's own readers and tools, and PyTorch's own PowerSGD hook."""

import json
import os
import sqlite3
import subprocess

import pytest

from conftest import load_json, tool, torchrun


def rows(path, sql):
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return db.execute(sql).fetchall()


def check_clean_exit(run):
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-4000:]
    # Debian's torch 1.13 with Gloo can abort at exit ("terminate called
    # without an active exception"); the hook's teardown must not.
    assert "terminate called" not in run.stderr


@pytest.mark.parametrize("scheme,args", [
    ("powersgd", ["--policy", "accordion", "--low", "2", "--high", "1"]),
    ("topk", ["--policy", "accordion", "--low", "0.5", "--high", "0.1"]),
    ("dense", []),
])
def test_a_trace_validates_and_every_step_sends_what_the_accounting_says(tmp_path, core, scheme, args):
    trace = tmp_path / "run.trace"
    run = torchrun("train_small.py", "--scheme", scheme, *args, "--epochs", "3", "--trace", trace,
                   "--out", tmp_path / "out.json")
    check_clean_exit(run)
    validate = subprocess.run([tool("accordion-analyze"), "validate", str(trace)], capture_output=True, text=True)
    assert validate.returncode == 0, validate.stdout + validate.stderr
    assert rows(trace, "SELECT writer, world_size, scheme FROM run") == [("accordion.ddp", 2, scheme)]
    layers = {i: [int(d) for d in shape.split(",")] for i, shape in rows(trace, "SELECT layer_id, shape FROM layers")}
    levels = {}
    for epoch, layer, level, floats in rows(trace, "SELECT epoch, layer_id, level, floats_sent FROM epoch_layers"):
        levels[(epoch, layer)] = level
    for epoch, iterations, floats_sent in rows(trace, "SELECT epoch, iterations, floats_sent FROM epochs"):
        per_step = sum(core.floats_per_step(scheme, layers[l], levels[(epoch, l)]) for l in layers)
        assert floats_sent == per_step * iterations
        # What the exchange really sent in each sampled step: its collectives' payloads.
        sent = rows(trace, f"SELECT rank, iteration, SUM(bytes) FROM collectives WHERE epoch = {epoch} "
                           "GROUP BY rank, iteration")
        assert sent, "no sampled step"
        for rank, iteration, payload in sent:
            assert payload == 4 * per_step, (epoch, rank, iteration)
    if scheme != "dense":
        # interval 1 and two levels: the controller's levels are what the epochs ran.
        out = load_json(tmp_path / "out.json")
        for e, summary in enumerate(out["epochs"]):
            assert [levels[(e, l)] for l in sorted(layers)] == summary["levels"]


@pytest.mark.parametrize("evaluate", ["none", "no_grad", "inference_mode", "grad"])
def test_the_dense_hook_trains_exactly_like_plain_ddp(tmp_path, evaluate):
    # With an evaluation before each epoch, in eval mode, as scripts validate:
    # under no_grad, inference_mode, or with grad on and no backward.
    run = torchrun("train_small.py", "--scheme", "dense", "--against-plain-ddp", "--epochs", "2",
                   "--evaluate", evaluate, "--out", tmp_path / "out.json")
    check_clean_exit(run)
    out = load_json(tmp_path / "out.json")
    assert out["max_param_difference"] < 1e-6
    assert out["losses"]["hook"] == pytest.approx(out["losses"]["plain"], rel=1e-6, abs=1e-7)


@pytest.mark.parametrize("cast", ["fp16", "bf16"])
def test_a_16_bit_cast_trains_exactly_like_pytorchs_own_hook_at_half_the_traffic(tmp_path, core, cast):
    # scheme fp16 / bf16 is PyTorch's fp16_compress_hook / bf16_compress_hook, bit for bit, with the
    # trace recording 2 bytes per entry: the baseline a PyTorch user tries first, recorded alike.
    trace = tmp_path / "run.trace"
    run = torchrun("train_small.py", "--scheme", cast, "--against-plain-ddp", "--reference-hook", cast,
                   "--epochs", "2", "--trace", trace, "--out", tmp_path / "out.json")
    check_clean_exit(run)
    out = load_json(tmp_path / "out.json")
    assert out["max_param_difference"] < 1e-6
    assert out["losses"]["hook"] == pytest.approx(out["losses"]["plain"], rel=1e-6, abs=1e-7)
    layers = [[int(d) for d in shape.split(",")] for (shape,) in rows(trace, "SELECT shape FROM layers")]
    entries = sum(core.floats_per_step("dense", shape, 0) for shape in layers)
    for epoch, iterations, floats_sent in rows(trace, "SELECT epoch, iterations, floats_sent FROM epochs"):
        assert floats_sent == entries / 2 * iterations, epoch
    for (tag, payload) in rows(trace, "SELECT tag, SUM(bytes) FROM collectives WHERE epoch = 0 AND rank = 0 "
                                      "AND iteration = 0 GROUP BY tag"):
        assert (tag, payload) == ("cast16", 2 * entries)
    validate = subprocess.run([tool("accordion-analyze"), "validate", str(trace)], capture_output=True, text=True)
    assert validate.returncode == 0, validate.stdout + validate.stderr


def test_gradient_accumulation_under_no_sync_trains_like_plain_ddp(tmp_path):
    trace = tmp_path / "run.trace"
    run = torchrun("train_small.py", "--scheme", "dense", "--against-plain-ddp", "--accumulate", "2",
                   "--epochs", "2", "--trace", trace, "--out", tmp_path / "out.json")
    check_clean_exit(run)
    assert load_json(tmp_path / "out.json")["max_param_difference"] < 1e-6
    # One communicating step per optimizer step, whatever the micro-batches.
    assert rows(trace, "SELECT epoch, iterations FROM epochs") == [(0, 4), (1, 4)]


def test_powersgd_sends_as_many_floats_as_pytorchs_own_hook(tmp_path):
    run = torchrun("count_floats.py", "--rank", "2", "--out", tmp_path / "out.json")
    check_clean_exit(run)
    out = load_json(tmp_path / "out.json")
    assert out["compressed"], "the CNN must have matrices PowerSGD compresses"
    # PyTorch's hook all-reduces plainly while its step count is below
    # start_powerSGD_iter (2: steps 0 and 1); from then on it compresses what
    # ours does, with the same P and Q sizes.
    compressing = out["pytorch_per_step"][2:]
    assert len(compressing) >= 2 and out["pytorch_per_step"][0] > out["accordion_per_step"]
    assert all(n == out["accordion_per_step"] for n in compressing), out


def test_an_interrupted_run_keeps_its_finished_epochs(tmp_path):
    trace = tmp_path / "run.trace"
    run = torchrun("train_small.py", "--raise-in-epoch", "1", "--epochs", "3", "--trace", trace,
                   "--out", tmp_path / "out.json")
    assert run.returncode != 0
    assert "stopped on purpose" in run.stdout + run.stderr
    assert rows(trace, "SELECT status FROM run") == [("interrupted",)]
    assert rows(trace, "SELECT epoch FROM epochs") == [(0,)]
    validate = subprocess.run([tool("accordion-analyze"), "validate", str(trace)], capture_output=True, text=True)
    assert validate.returncode == 0, validate.stdout + validate.stderr


def test_an_early_stopped_run_is_recorded_as_such_and_every_tool_reads_it(tmp_path):
    trace = tmp_path / "run.trace"
    check_clean_exit(torchrun("train_small.py", "--stop-after", "2", "--epochs", "3", "--policy", "accordion",
                              "--trace", trace, "--out", tmp_path / "out.json"))
    assert rows(trace, "SELECT status, epochs_planned FROM run") == [("stopped_early", 3)]
    assert rows(trace, "SELECT epoch FROM epochs") == [(0,), (1,)]
    for cmd in (["accordion-analyze", "validate", str(trace)],
                ["accordion-analyze", "schedule", str(trace)],
                ["accordion-sim", "replay", str(trace)]):
        done = subprocess.run([tool(cmd[0])] + cmd[1:], capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
        if cmd[1] == "validate":
            assert "run stopped early: 2 of 3 epochs" in done.stdout + done.stderr


def test_a_diverged_run_says_so_and_keeps_its_finished_epochs(tmp_path):
    trace = tmp_path / "run.trace"
    run = torchrun("train_small.py", "--nan-in-epoch", "1", "--epochs", "3", "--trace", trace,
                   "--out", tmp_path / "out.json")
    assert run.returncode != 0
    assert "FloatingPointError: training diverged in epoch 1" in run.stdout + run.stderr
    assert rows(trace, "SELECT status FROM run") == [("failed",)]
    assert rows(trace, "SELECT epoch FROM epochs") == [(0,)]


def test_the_toolkit_reads_a_hook_trace_unchanged(tmp_path):
    trace = tmp_path / "run.trace"
    check_clean_exit(torchrun("train_small.py", "--policy", "accordion", "--epochs", "3", "--trace", trace,
                              "--out", tmp_path / "out.json"))
    for cmd in (["accordion-analyze", "schedule", str(trace), "--scheme", "topk"],
                ["accordion-sim", "replay", str(trace), "--workers", "64"]):
        done = subprocess.run([tool(cmd[0])] + cmd[1:], capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
    replay = subprocess.run([tool("accordion-sim"), "replay", str(trace)], capture_output=True, text=True)
    assert "anchored" not in replay.stdout  # recorded with network_probe=False: nothing to anchor on
    assert "check:" in replay.stdout


def schedule_levels(trace, policy):
    run = subprocess.run([tool("accordion-analyze"), "schedule", str(trace), "--policy", policy, "--format", "json"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    return [epoch["levels"] for epoch in json.loads(run.stdout)["epochs"]]


def test_adaqs_under_the_hook_is_re_derived_offline_and_profiles_its_errors(tmp_path):
    trace = tmp_path / "adaqs.trace"
    # A tiny factor checked every epoch: the run switches where its MSDR falls at all.
    run = torchrun("train_small.py", "--scheme", "powersgd", "--policy", "adaqs", "--low", "4", "--high", "1",
                   "--msdr-factor", "1.0001", "--epochs", "4", "--trace", trace, "--out", tmp_path / "out.json")
    check_clean_exit(run)
    validate = subprocess.run([tool("accordion-analyze"), "validate", str(trace)], capture_output=True, text=True)
    assert validate.returncode == 0, validate.stdout + validate.stderr
    assert rows(trace, "SELECT policy, msdr_factor FROM run") == [("adaqs", 1.0001)]
    recorded = {}
    for epoch, layer, level in rows(trace, "SELECT epoch, layer_id, level FROM epoch_layers"):
        recorded.setdefault(epoch, []).append(level)
    assert schedule_levels(trace, "adaqs") == [recorded[e] for e in sorted(recorded)]
    # The moments AdaQS read, in every row, and the errors at every check (interval 1).
    assert rows(trace, "SELECT COUNT(*) FROM epoch_layers WHERE grad_mean_norm IS NULL OR grad_std IS NULL") == [(0,)]
    layers = rows(trace, "SELECT COUNT(*) FROM layers")[0][0]
    assert rows(trace, "SELECT COUNT(*) FROM error_profile") == [(4 * layers * 4,)]
    assert rows(trace, "SELECT COUNT(*) FROM error_profile WHERE rel_error < 0 OR rel_error > 1") == [(0,)]


def test_smith_under_the_hook_grows_the_batch_where_the_lr_would_decay(tmp_path):
    trace = tmp_path / "smith.trace"
    run = torchrun("train_small.py", "--scheme", "batch", "--policy", "smith", "--low", "32", "--high", "128",
                   "--decay-at", "2", "--epochs", "4", "--trace", trace, "--out", tmp_path / "out.json")
    check_clean_exit(run)
    validate = subprocess.run([tool("accordion-analyze"), "validate", str(trace)], capture_output=True, text=True)
    assert validate.returncode == 0, validate.stdout + validate.stderr
    # The schedule halves the LR from epoch 2: the batch doubles there instead,
    # and the LR the epochs ran (schedule x lr_scale) stays.
    assert rows(trace, "SELECT batch_size, schedule_lr, lr FROM epochs ORDER BY epoch") == [
        (32, 0.05, 0.05), (32, 0.05, 0.05), (64, 0.025, 0.05), (64, 0.025, 0.05)]
    assert [levels[0] for levels in schedule_levels(trace, "smith")] == [32, 32, 64, 64]


def test_an_epoch_the_hook_did_not_serve_fails_on_every_rank_and_is_never_complete(tmp_path):
    # Epoch 1 trains through model.module: the optimizer steps, DDP and the hook see nothing.
    trace = tmp_path / "run.trace"
    run = torchrun("train_small.py", "--bypass-ddp-in-epoch", "1", "--epochs", "3", "--trace", trace,
                   "--out", tmp_path / "out.json")
    assert run.returncode != 0
    said = run.stdout + run.stderr
    assert said.count("no gradient went through the Accordion hook") >= 2, said[-3000:]
    assert rows(trace, "SELECT status FROM run") == [("failed",)]
    assert rows(trace, "SELECT epoch FROM epochs") == [(0,)]
