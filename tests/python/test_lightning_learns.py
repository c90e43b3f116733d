"""Lightning as Lightning users write it, with and without AccordionCallback:
a validation loop (and its sanity check), val_check_interval below one epoch,
limit_train_batches and gradient accumulation. The callback must leave
learning as it was (dense: the same loss at every step) and record what ran.
Real Lightning DDP over torchrun ranks."""

import sqlite3
import subprocess

import pytest

from conftest import load_json, tool, torchrun


def fit(tmp_path, name, *args, timeout=300):
    out = tmp_path / f"{name}.json"
    run = torchrun("lightning_fit.py", *args, "--out", out, timeout=timeout)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-4000:]
    return load_json(out)


def rows(path, sql):
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return db.execute(sql).fetchall()


def check_trace(trace, epochs, steps_per_epoch, batch):
    """Every epoch trained through the hook: steps and traffic recorded, and the tools read it."""
    assert rows(trace, "SELECT status, batch_size, epochs_planned FROM run") == [("complete", batch, epochs)]
    recorded = rows(trace, "SELECT epoch, iterations, floats_sent, model_grad_norm FROM epochs ORDER BY epoch")
    assert [r[0] for r in recorded] == list(range(epochs))
    for epoch, iterations, floats, norm in recorded:
        assert iterations == steps_per_epoch, recorded
        assert floats > 0 and norm > 0, recorded
    validate = subprocess.run([tool("accordion-analyze"), "validate", str(trace)], capture_output=True, text=True)
    assert validate.returncode == 0, validate.stdout + validate.stderr
    replay = subprocess.run([tool("accordion-sim"), "replay", str(trace)], capture_output=True, text=True)
    assert replay.returncode == 0, replay.stdout + replay.stderr


def mean(values):
    return sum(values) / len(values)


def test_with_a_validation_loop_the_dense_callback_trains_exactly_as_without_it(tmp_path):
    plain = fit(tmp_path, "plain", "--val")
    trace = tmp_path / "dense.trace"
    hooked = fit(tmp_path, "dense", "--val", "--scheme", "dense", "--trace", trace)
    assert len(hooked["losses"]) == len(plain["losses"]) == 4 * 8
    assert hooked["losses"] == pytest.approx(plain["losses"], rel=1e-5, abs=1e-6)
    assert mean(plain["losses"][-8:]) < 0.6 * mean(plain["losses"][:8]), "the task is learnable"
    # 512 samples, 32 per rank and step, 2 ranks: 8 steps of 64.
    check_trace(trace, epochs=4, steps_per_epoch=8, batch=64)


@pytest.mark.parametrize("scheme,extra", [
    ("powersgd", ["--low", "2", "--high", "1", "--val-check-interval", "0.5"]),
    ("topk", ["--low", "0.5", "--high", "0.1"]),
])
def test_with_a_validation_loop_compressed_schemes_learn_as_without_the_callback(tmp_path, scheme, extra):
    plain = fit(tmp_path, "plain", "--val", *extra[4:])
    trace = tmp_path / f"{scheme}.trace"
    hooked = fit(tmp_path, scheme, "--val", "--scheme", scheme, "--trace", trace, *extra)
    first, last = mean(hooked["losses"][:8]), mean(hooked["losses"][-8:])
    assert last < 0.7 * first, hooked["losses"]
    assert last < 1.5 * mean(plain["losses"][-8:]), (hooked["losses"], plain["losses"])
    check_trace(trace, epochs=4, steps_per_epoch=8, batch=64)
    # Accordion ran: levels of both ends were recorded.
    levels = {r[0] for r in rows(trace, "SELECT DISTINCT level FROM epoch_layers")}
    assert len(levels) >= 1


def test_accumulate_grad_batches_records_the_batch_an_optimizer_step_sees(tmp_path):
    plain = fit(tmp_path, "plain", "--val", "--accumulate", "2")
    trace = tmp_path / "accumulate.trace"
    hooked = fit(tmp_path, "dense", "--val", "--accumulate", "2", "--scheme", "dense", "--trace", trace)
    assert hooked["losses"] == pytest.approx(plain["losses"], rel=1e-5, abs=1e-6)
    assert hooked["global_step"] == 4 * 4
    # 32 per rank x 2 ranks x 2 micro-batches: each optimizer step sees 128 samples, 4 steps per epoch.
    check_trace(trace, epochs=4, steps_per_epoch=4, batch=128)
    assert rows(trace, "SELECT train_samples FROM run") == [(512,)]


def test_limit_train_batches_records_the_samples_an_epoch_trains(tmp_path):
    trace = tmp_path / "limited.trace"
    hooked = fit(tmp_path, "limited", "--val", "--limit-train-batches", "0.5", "--scheme", "powersgd",
                 "--low", "2", "--high", "1", "--trace", trace)
    assert hooked["global_step"] == 4 * 4
    check_trace(trace, epochs=4, steps_per_epoch=4, batch=64)
    assert rows(trace, "SELECT train_samples FROM run") == [(256,)]
