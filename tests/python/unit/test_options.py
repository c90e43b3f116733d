"""accordion.ddp's options without a process group: what attach makes of its keywords, all of
it from the core's tables (schemes, policies, run settings), in the same words as accordion-train."""

import subprocess
import types

import pytest
import torch

import accordion._core as core
from accordion import ddp
from conftest import BIN_DIR


def options(**overrides):
    """What attach would hand the core, for a stand-in DDP model (no process group needed)."""
    kwargs = dict(scheme="powersgd", policy=None, low=None, high=None, level=None, eta=None, interval=None,
                  msdr_factor=None, trace=None, overwrite=False, bucket_mb=None, seed=None, sample_iterations=None,
                  network_probe=None, topk_dense_vectors=None, topk_error_feedback=None, model_name=None,
                  dataset="custom", train_samples=0, batch_size=0, epochs=None, config=None)
    kwargs.update(overrides)
    return ddp._options(types.SimpleNamespace(module=torch.nn.Linear(2, 2)), **kwargs)


def test_the_names_come_from_the_core():
    assert ddp.SCHEMES == tuple(row["name"] for row in core.schemes())
    assert ddp.POLICIES == tuple(row["name"] for row in core.policies())
    assert "dense" in ddp.SCHEMES and "accordion" in ddp.POLICIES


def test_the_defaults_are_the_tables():
    o = core.HookOptions()
    for row in core.run_settings():
        assert getattr(o, row["keyword"]) == row["default"], row["keyword"]
    assert (o.seed, o.sample_iterations, o.eta, o.interval, o.bucket_mb, o.network_probe) == (1, 4, 0.5, 10, 25.0,
                                                                                              True)


def test_a_scheme_without_levels_defaults_to_a_fixed_level_and_one_with_levels_to_accordion():
    no_levels = [row["name"] for row in core.schemes() if not row["has_levels"]]
    with_levels = [row["name"] for row in core.schemes() if row["has_levels"] and not row["batch_levels"]]
    assert options(scheme=no_levels[0]).policy == "static"
    o = options(scheme=with_levels[0])
    assert o.policy == "accordion"
    assert (o.low, o.high) == core.default_levels(with_levels[0])


def test_one_level_policies_take_level_and_the_others_low_and_high():
    one = [row["name"] for row in core.policies() if row["one_level"]]
    assert one, "a policy that keeps one level"
    o = options(policy=one[0], level=4)
    assert o.low == o.high == 4
    with pytest.raises(ValueError, match="low and high belong to the adaptive policies"):
        options(policy=one[0], low=2)
    with pytest.raises(ValueError, match="level belongs to policy"):
        options(policy="accordion", level=2)


def test_msdr_factor_belongs_to_the_policies_that_read_moments():
    reading = [row for row in core.policies() if row["reads_moments"]]
    fits = reading[0]["fits"][0]
    assert options(scheme=fits, policy=reading[0]["name"], msdr_factor=3).msdr_factor == 3
    with pytest.raises(ValueError, match="msdr_factor belongs to policy " + reading[0]["name"]):
        options(policy="accordion", msdr_factor=3)


@pytest.mark.parametrize("keyword,value,words", [
    ("interval", 0, "interval must be from 1 to 2147483647 epochs, not 0"),
    ("interval", 2.5, "interval must be a whole number, not 2.5"),
    ("eta", float("inf"), "eta must be a finite number, not inf"),
    ("bucket_mb", -1, "bucket_mb must be above 0"),
    ("network_probe", "no", "network_probe must be a boolean, not 'no'"),
    ("seed", 2**64, "seed must be a whole number, not 18446744073709551616"),
    ("scheme", "gzip", "unknown scheme 'gzip'"),
])
def test_a_value_the_table_refuses_is_one_value_error(keyword, value, words):
    o = core.HookOptions()
    with pytest.raises(ValueError) as e:
        setattr(o, keyword, value)
    assert str(e.value).startswith(words), str(e.value)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("flag,keyword,value", [("--interval", "interval", 0), ("--eta", "eta", -1),
                                                ("--msdr-factor", "msdr_factor", 1)])
def test_accordion_train_says_the_same_as_the_keyword(flag, keyword, value):
    # One rule, one wording: only the name differs (the flag there, the keyword here).
    train = subprocess.run([f"{BIN_DIR}/accordion-train", "--dataset", "synthetic", "--scheme", "powersgd",
                            "--policy", "adaqs" if keyword == "msdr_factor" else "accordion", flag, str(value)],
                           capture_output=True, text=True, timeout=60)
    assert train.returncode == 2, train.stderr
    said = train.stderr.strip().split("error: ", 1)[1]
    with pytest.raises(ValueError) as e:
        setattr(core.HookOptions(), keyword, value)
    assert str(e.value) == said.replace(flag, keyword, 1)
