"""AccordionCallback with the rest of what Lightning users reach for: mixed
precision (bf16-mixed, and fp16 with its GradScaler), EarlyStopping,
ModelCheckpoint with ckpt_path= resume, and more than one optimizer. Real
Lightning DDP over torchrun ranks."""

import glob
import sqlite3
import subprocess

import pytest

from conftest import load_json, tool, torchrun


def fit(tmp_path, name, *args, expect_ok=True, timeout=300):
    out = tmp_path / f"{name}.json"
    run = torchrun("lightning_fit.py", *args, "--out", out, timeout=timeout)
    if expect_ok:
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-4000:]
        return load_json(out), run
    return None, run


def rows(path, sql):
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return db.execute(sql).fetchall()


def mean(values):
    return sum(values) / len(values)


def validates(trace):
    run = subprocess.run([tool("accordion-analyze"), "validate", str(trace)], capture_output=True, text=True)
    return run.returncode == 0, run.stdout + run.stderr


@pytest.mark.parametrize("precision,scheme", [("bf16-mixed", "dense"), ("bf16-mixed", "powersgd"),
                                              ("16-mixed", "powersgd")])
def test_mixed_precision_learns_as_without_the_callback(tmp_path, precision, scheme):
    args = ["--val", "--precision", precision, "--init-scale", str(2.0 ** 24)]
    plain, _ = fit(tmp_path, "plain", *args)
    trace = tmp_path / "amp.trace"
    hooked, _ = fit(tmp_path, "hooked", *args, "--scheme", scheme, "--trace", trace)
    if scheme == "dense":
        assert hooked["losses"] == pytest.approx(plain["losses"], rel=1e-4, abs=1e-5)
    assert mean(hooked["losses"][-8:]) < 0.7 * mean(hooked["losses"][:8]), hooked["losses"]
    assert mean(hooked["losses"][-8:]) < 1.5 * mean(plain["losses"][-8:]), (hooked["losses"], plain["losses"])
    ok, said = validates(trace)
    assert ok, said
    assert rows(trace, "SELECT status FROM run") == [("complete",)]
    assert all(i == 8 and f > 0 for i, f in rows(trace, "SELECT iterations, floats_sent FROM epochs"))


def test_early_stopping_records_the_run_as_stopped_early(tmp_path):
    trace = tmp_path / "early.trace"
    out, _ = fit(tmp_path, "early", "--val", "--early-stop", "--scheme", "powersgd", "--trace", trace)
    assert out["epochs_trained"] < 4
    assert rows(trace, "SELECT status FROM run") == [("stopped_early",)]
    assert len(rows(trace, "SELECT epoch FROM epochs")) == out["epochs_trained"]
    ok, said = validates(trace)
    assert ok, said


def test_a_resumed_fit_refuses_to_continue_a_trace_and_trains_on_without_one(tmp_path):
    ckpt = tmp_path / "ckpt"
    first = tmp_path / "first.trace"
    before, _ = fit(tmp_path, "first", "--val", "--epochs", "2", "--ckpt-dir", ckpt, "--scheme", "powersgd",
                    "--trace", first)
    assert rows(first, "SELECT status, COUNT(*) FROM run, epochs") == [("complete", 2)]
    last = sorted(glob.glob(str(ckpt / "*.ckpt")))[-1]
    _, refused = fit(tmp_path, "refused", "--val", "--epochs", "4", "--resume", last, "--scheme", "powersgd",
                     "--trace", tmp_path / "second.trace", expect_ok=False)
    assert refused.returncode != 0
    said = refused.stdout + refused.stderr
    assert "cannot continue a trace in a fit resumed from a checkpoint" in said
    assert "first.trace" in said, said[-3000:]
    assert rows(first, "SELECT status, COUNT(*) FROM run, epochs") == [("complete", 2)], "the first trace is kept"
    resumed, _ = fit(tmp_path, "resumed", "--val", "--epochs", "4", "--resume", last, "--scheme", "powersgd")
    assert resumed["epochs_trained"] == 4
    assert len(resumed["losses"]) == 2 * 8, "epochs 2 and 3 only: the fit went on from its checkpoint"
    assert mean(resumed["losses"][-8:]) < 0.7 * mean(before["losses"][:8]), resumed["losses"]


def test_two_optimizers_are_refused_in_one_line(tmp_path):
    _, run = fit(tmp_path, "two", "--two-optimizers", "--scheme", "powersgd", expect_ok=False)
    assert run.returncode != 0
    assert "AccordionCallback takes a module with one optimizer; this one configures 2" in run.stdout + run.stderr
