"""Bad arguments to accordion.ddp.attach: a ValueError in one line, nothing written.

One real Gloo rank in this process (world size 1) is enough: every check runs
before any collective."""

import os

import pytest
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from conftest import free_port


@pytest.fixture(scope="module")
def ddp(core):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{free_port()}", rank=0, world_size=1)
    yield DDP(torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2)))
    dist.destroy_process_group()


def refused(ddp_model, tmp_path, **kwargs):
    import accordion.ddp
    trace = tmp_path / "run.trace"
    kwargs.setdefault("trace", trace)
    kwargs.setdefault("train_samples", 64)
    kwargs.setdefault("batch_size", 8)
    kwargs.setdefault("epochs", 2)
    with pytest.raises(ValueError) as e:
        accordion.ddp.attach(ddp_model, network_probe=False, **kwargs)
    message = str(e.value)
    assert "\n" not in message and message
    assert not trace.exists(), "nothing may be written"
    return message


def test_powersgd_low_below_high(ddp, tmp_path):
    assert "low" in refused(ddp, tmp_path, scheme="powersgd", low=1, high=2)


def test_topk_low_below_high(ddp, tmp_path):
    assert "low" in refused(ddp, tmp_path, scheme="topk", low=0.1, high=0.5)


def test_a_rank_that_is_not_a_whole_number(ddp, tmp_path):
    assert "high" in refused(ddp, tmp_path, scheme="powersgd", low=2, high=1.5)


def test_a_trace_without_its_epoch_size(ddp, tmp_path):
    assert "train_samples" in refused(ddp, tmp_path, train_samples=0)


def test_a_trace_without_its_epochs(ddp, tmp_path):
    assert "epochs" in refused(ddp, tmp_path, epochs=None)


def fresh_ddp():
    return DDP(torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2)))


def test_an_epoch_beyond_the_planned_ones_is_refused_before_any_collective(ddp, tmp_path):
    import accordion.ddp
    trace = tmp_path / "run.trace"
    model = fresh_ddp()
    with accordion.ddp.attach(model, trace=trace, network_probe=False, train_samples=64, batch_size=8,
                              epochs=1) as acc:
        model(torch.randn(4, 8)).sum().backward()
        acc.end_epoch(lr=0.1)
        with pytest.raises(ValueError, match="epochs=1"):
            acc.end_epoch(lr=0.1)
    assert trace.exists()


def test_an_end_epoch_before_any_step_is_refused_and_records_nothing(ddp, tmp_path):
    import sqlite3
    import accordion.ddp
    trace = tmp_path / "run.trace"
    model = fresh_ddp()
    with accordion.ddp.attach(model, trace=trace, network_probe=False, train_samples=64, batch_size=8,
                              epochs=2) as acc:
        with pytest.raises(ValueError, match="end_epoch before any step of epoch 0"):
            acc.end_epoch(lr=0.1)
        model(torch.randn(4, 8)).sum().backward()
        acc.end_epoch(lr=0.1)  # the epoch goes on: one step, then its end
    with sqlite3.connect(f"file:{trace}?mode=ro", uri=True) as db:
        assert db.execute("SELECT epoch, iterations FROM epochs").fetchall() == [(0, 1)]


def test_an_unknown_scheme(ddp, tmp_path):
    assert "unknown scheme 'fp8'" in refused(ddp, tmp_path, scheme="fp8")


def test_a_model_that_is_not_ddp(ddp, tmp_path):
    assert "DistributedDataParallel" in refused(ddp.module, tmp_path)


def test_a_trace_path_that_is_a_directory(ddp, tmp_path):
    assert "directory" in refused(ddp, tmp_path, trace=tmp_path)


def test_level_and_low_together(ddp, tmp_path):
    assert "level" in refused(ddp, tmp_path, scheme="powersgd", level=2, low=2, policy="accordion")


def test_accordion_on_dense(ddp, tmp_path):
    assert "policy accordion chooses levels" in refused(ddp, tmp_path, scheme="dense", policy="accordion")


def test_not_a_number(ddp, tmp_path):
    assert "eta" in refused(ddp, tmp_path, eta=float("nan"))


def test_an_existing_trace_is_kept_without_overwrite(ddp, tmp_path):
    import accordion.ddp
    trace = tmp_path / "mine.trace"
    trace.write_bytes(b"the user's file")
    with pytest.raises(ValueError) as e:
        accordion.ddp.attach(ddp, trace=trace, network_probe=False, train_samples=64, batch_size=8, epochs=2)
    assert "exists" in str(e.value) and "\n" not in str(e.value)
    assert trace.read_bytes() == b"the user's file"


@pytest.mark.parametrize("keyword,value,words", [
    ("seed", 2**64, "seed must be a whole number, not 18446744073709551616"),
    ("interval", 10**12, "interval must be from 1 to 2147483647 epochs, not 1000000000000"),
    ("sample_iterations", 10**10, "sample_iterations must be from 0 to 2147483647 steps"),
    ("eta", "0.5", "eta must be a finite number, not '0.5'"),
    ("bucket_mb", 0, "bucket_mb must be above 0"),
    ("topk_error_feedback", "yes", "topk_error_feedback must be a boolean"),
    ("config", {"x": float("nan")}, "config is not JSON-serialisable"),
])
def test_values_the_core_cannot_hold_are_a_value_error(ddp, tmp_path, keyword, value, words):
    assert words in refused(ddp, tmp_path, **{keyword: value})


def test_the_defaults_are_accordion_trains(core):
    # One set of defaults, in C++: seed and sampled steps as accordion-train's
    # --seed and --trace-iterations, the paper's eta and interval.
    o = core.HookOptions()
    assert (o.seed, o.sample_iterations, o.eta, o.interval, o.bucket_mb, o.network_probe) == (1, 4, 0.5, 10, 25.0,
                                                                                              True)


def test_a_second_attach_and_a_step_after_close_are_refused(ddp, tmp_path):
    import accordion.ddp
    model = fresh_ddp()
    acc = accordion.ddp.attach(model, network_probe=False)
    assert "already has an Accordion hook" in refused(model, tmp_path)
    acc.close()
    with pytest.raises(ValueError, match="after close"):
        model(torch.randn(4, 8)).sum().backward()
    model.eval()
    assert model(torch.randn(4, 8)).shape == (4, 2)  # evaluation goes on


def test_metrics_a_run_did_not_record_show_as_a_dash(ddp, tmp_path):
    import subprocess
    import accordion.ddp
    from conftest import tool
    model, trace = fresh_ddp(), tmp_path / "run.trace"
    with accordion.ddp.attach(model, trace=trace, network_probe=False, train_samples=8, batch_size=4,
                              epochs=1) as acc:
        for _ in range(2):
            model(torch.randn(4, 8)).sum().backward()
        acc.end_epoch(lr=0.1, train_loss=0.5)
    info = subprocess.run([tool("accordion-analyze"), "info", str(trace)], capture_output=True, text=True)
    assert info.returncode == 0, info.stderr
    assert "test accuracy —" in info.stdout and "0.00 %" not in info.stdout, info.stdout


@pytest.mark.parametrize("value", ["no", "yes", 1, 0.0])
def test_overwrite_takes_a_bool_only(ddp, tmp_path, value):
    # "no" is a non-empty string, truthy: it once overwrote.
    (tmp_path / "run.trace").write_bytes(b"someone's file")
    import accordion.ddp
    with pytest.raises(ValueError) as e:
        accordion.ddp.attach(fresh_ddp(), network_probe=False, trace=tmp_path / "run.trace", train_samples=64,
                             batch_size=8, epochs=2, overwrite=value)
    assert "overwrite must be a boolean" in str(e.value)
    assert (tmp_path / "run.trace").read_bytes() == b"someone's file"


def test_grad_scaler_must_be_a_scaler(ddp, tmp_path):
    assert "grad_scaler must be a torch.amp.GradScaler" in refused(ddp, tmp_path, grad_scaler=2.0)


def test_a_hook_dropped_without_close_leaves_its_trace_interrupted(ddp, tmp_path):
    import gc
    import sqlite3
    import accordion.ddp
    trace = tmp_path / "dropped.trace"
    model = fresh_ddp()
    acc = accordion.ddp.attach(model, scheme="dense", trace=trace, network_probe=False, train_samples=8,
                               batch_size=4, epochs=2)
    model(torch.randn(4, 8)).sum().backward()
    acc.end_epoch(lr=0.1)
    del acc, model
    gc.collect()
    with sqlite3.connect(f"file:{trace}?mode=ro", uri=True) as db:
        assert db.execute("SELECT status FROM run").fetchall() == [("interrupted",)]
        assert db.execute("SELECT COUNT(*) FROM epochs").fetchall() == [(1,)]
    assert not os.path.exists(str(trace) + "-wal") or os.path.getsize(str(trace) + "-wal") == 0


@pytest.mark.parametrize("keyword,value", [("model_name", 5), ("dataset", ["mnist"]), ("trace", 7)])
def test_a_keyword_of_the_wrong_type_is_named(ddp, tmp_path, keyword, value):
    kwargs = {keyword: value}
    if keyword == "trace":
        import accordion.ddp
        with pytest.raises(ValueError) as e:
            accordion.ddp.attach(fresh_ddp(), network_probe=False, train_samples=64, batch_size=8, epochs=2, **kwargs)
        message = str(e.value)
    else:
        message = refused(ddp, tmp_path, **kwargs)
    assert message.startswith(keyword + " must be"), message
