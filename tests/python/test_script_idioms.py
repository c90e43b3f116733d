"""The hook as PyTorch users write scripts, on a model of their own: the trace on
rank 0 only, and ranks that disagree. Real torchrun ranks over Gloo."""

import sqlite3
import subprocess
import time

import pytest

from conftest import load_json, tool, torchrun


def rank_results(out, world=2):
    return [load_json(f"{out}.rank{r}.json") for r in range(world)]


def run_status(trace):
    with sqlite3.connect(f"file:{trace}?mode=ro", uri=True) as db:
        return db.execute("SELECT status FROM run").fetchone()[0]


@pytest.mark.parametrize("scheme", ["dense", "powersgd", "topk", "batch"])
def test_a_trace_on_rank_0_only_records_the_whole_run(tmp_path, scheme):
    trace, out = tmp_path / "run.trace", tmp_path / "out"
    run = torchrun("train_idioms.py", "--scheme", scheme, "--trace", trace, "--trace-on", "rank0", "--out", out,
                   timeout=120)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-4000:]
    results = rank_results(out)
    assert [r["status"] for r in results] == ["ok", "ok"]
    # The frozen parameter is left out; the weight used twice is one layer.
    assert results[0]["layers"] == ["embed.weight", "embed.bias", "norm.weight", "norm.bias", "gate.weight",
                                    "gate.bias", "value.weight", "value.bias", "head.weight", "head.bias"]
    validate = subprocess.run([tool("accordion-analyze"), "validate", str(trace)], capture_output=True, text=True)
    assert validate.returncode == 0, validate.stdout + validate.stderr
    assert run_status(trace) == "complete"
    with sqlite3.connect(f"file:{trace}?mode=ro", uri=True) as db:
        assert db.execute("SELECT COUNT(*) FROM epochs").fetchone()[0] == 3
        # Both ranks' sampled steps reached rank 0's trace.
        assert db.execute("SELECT COUNT(DISTINCT rank) FROM iterations").fetchone()[0] == 2
        # The network probe ran on every rank (it is on by default).
        assert db.execute("SELECT COUNT(*) FROM network_probe").fetchone()[0] > 0
    replay = subprocess.run([tool("accordion-sim"), "replay", str(trace)], capture_output=True, text=True)
    assert replay.returncode == 0, replay.stdout + replay.stderr


def expect_disagreement(tmp_path, disagree, words, scheme="powersgd", trace_made=True):
    trace, out = tmp_path / "run.trace", tmp_path / "out"
    start = time.monotonic()
    run = torchrun("train_idioms.py", "--scheme", scheme, "--trace", trace, "--disagree", disagree, "--out", out,
                   timeout=120)
    elapsed = time.monotonic() - start
    assert run.returncode != 0
    assert "terminate called" not in run.stderr and "EnforceNotMet" not in run.stderr, run.stderr[-3000:]
    results = rank_results(out)
    for r in results:
        # Every rank raises the same one-line ValueError, long before Gloo's 20 s timeout.
        assert r["status"] == "ValueError", r
        assert "\n" not in r["error"]
        for w in words:
            assert w in r["error"], r["error"]
        assert r["seconds"] < 15, r
    assert results[0]["error"] == results[1]["error"]
    assert elapsed < 90
    if trace_made:
        assert run_status(trace) in ("failed", "interrupted")
    else:
        assert not trace.exists()
    return results[0]["error"]


@pytest.mark.parametrize("setting,words", [
    ("scheme", ["scheme is powersgd on rank 0 but topk on rank 1"]),
    ("low", ["low is 2 on rank 0 but 4 on rank 1"]),
    ("eta", ["eta is 0.5 on rank 0 but 0.3 on rank 1"]),
    ("interval", ["interval is 1 on rank 0 but 2 on rank 1"]),
    ("bucket_mb", ["bucket_mb is 25 on rank 0 but 1 on rank 1"]),
    ("network_probe", ["network_probe is true on rank 0 but false on rank 1"]),
    ("seed", ["seed is 1 on rank 0 but 7 on rank 1"]),
    ("renamed_layer", ["the models differ (parameter 8 is 'head.weight [4, 32]' on rank 0 but 'out.weight [4, 32]' "
                       "on rank 1)"]),
    ("bad_value", ["rank 1: eta must be a finite number, not nan"]),
])
def test_settings_that_differ_are_named_on_every_rank_before_anything_is_written(tmp_path, setting, words):
    said = expect_disagreement(tmp_path, setting, words, trace_made=False)
    if setting != "bad_value":
        assert said.startswith("the ranks were attached with settings that must be the same on every rank: ")


@pytest.mark.parametrize("behaviour,words", [
    ("one_step_fewer", ["rank 0 starts a step after 3 step(s) of epoch 1", "rank 1 ends epoch 1 after 3 step(s)",
                        "drop_last=True"]),
    ("one_step_more", ["rank 0 ends epoch 1 after 4 step(s)", "rank 1 starts a step after 4 step(s) of epoch 1"]),
    ("end_epoch_skipped", ["rank 0 ends epoch 1 after 4 step(s)", "rank 1 starts a step"]),
    ("close_early", ["rank 1 closes the hook after 1 epoch(s) and 4 step(s)", "close() at the same point"]),
    ("lr", ["lr is 0.05 on rank 0 but 0.01 on rank 1"]),
    ("join", ["join() for uneven inputs is not supported"]),
])
def test_ranks_that_take_different_steps_fail_on_every_rank_at_once(tmp_path, behaviour, words):
    expect_disagreement(tmp_path, behaviour, words)


def test_every_tool_reads_a_hook_trace_with_the_settings_it_ran(tmp_path):
    # A hook run at eta 0.3 with a check every 2 epochs: each reader states
    # those, and the schedule it re-derives is the one the run trained with.
    import json
    trace, out = tmp_path / "run.trace", tmp_path / "out"
    run = torchrun("train_idioms.py", "--scheme", "powersgd", "--epochs", "6", "--eta", "0.3", "--interval", "2",
                   "--trace", trace, "--out", out, timeout=120)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-4000:]
    schedule = subprocess.run([tool("accordion-analyze"), "schedule", str(trace), "--format", "json"],
                              capture_output=True, text=True)
    assert schedule.returncode == 0, schedule.stderr
    derived = json.loads(schedule.stdout)
    assert (derived["eta"], derived["interval"]) == (0.3, 2)
    with sqlite3.connect(f"file:{trace}?mode=ro", uri=True) as db:
        recorded = {}
        for epoch, layer, level in db.execute("SELECT epoch, layer_id, level FROM epoch_layers"):
            recorded.setdefault(epoch, {})[layer] = level
        config = json.loads(db.execute("SELECT config_json FROM run").fetchone()[0])
    assert (config["eta"], config["interval"], config["trace_iterations"], config["seed"]) == (0.3, 2, 4, 1)
    assert len(derived["epochs"]) == 6
    for e in derived["epochs"]:
        assert e["levels"] == [recorded[e["epoch"]][layer] for layer in sorted(recorded[e["epoch"]])], e["epoch"]
    # The run switched levels at least once, so the comparison can tell schedules apart.
    assert len({tuple(e["levels"]) for e in derived["epochs"]}) > 1
    for args in (["accordion-analyze", "regimes", str(trace)], ["accordion-sim", "replay", str(trace)]):
        said = subprocess.run([tool(args[0])] + args[1:], capture_output=True, text=True)
        assert said.returncode == 0, said.stderr
        assert "0.3" in said.stdout and "interval 2" in said.stdout.replace("every 2 epochs", "interval 2"), \
            said.stdout
