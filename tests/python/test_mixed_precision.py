"""Mixed precision as PyTorch users run it, under the hook and without it: fp16
autocast with torch.amp.GradScaler (its first steps overflow, and one rank's
step overflows alone) and bf16 autocast. Real torchrun ranks over Gloo."""

import math

import pytest

from conftest import load_json, torchrun


def train(tmp_path, *args, name="out.json"):
    out = tmp_path / name
    run = torchrun("train_small.py", "--model", "mlp", "--task", "rule", "--lr", "0.2", "--epochs", "4",
                   "--steps", "8", *args, "--out", out)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-4000:]
    return load_json(out), run


def finite(values):
    return [v for v in values if math.isfinite(v)]


@pytest.mark.parametrize("scheme,args", [
    ("dense", []),
    ("powersgd", ["--policy", "accordion", "--low", "2", "--high", "1"]),
    ("topk", ["--policy", "accordion", "--low", "0.5", "--high", "0.1"]),
])
def test_fp16_with_overflowing_steps_trains_as_without_the_hook(tmp_path, scheme, args):
    # 2**18: the scaler's first steps overflow fp16 and are skipped while it
    # backs off; step 12 overflows on rank 1 alone.
    out, _ = train(tmp_path, "--scheme", scheme, *args, "--amp", "fp16", "--init-scale", str(2.0 ** 18),
                   "--inf-on-rank-1-at", "12", "--against-plain-ddp")
    hook, plain = out["losses"]["hook"], out["losses"]["plain"]
    skipped = [e["skipped_steps"] for e in out["epochs"]]
    assert sum(skipped) >= 2, skipped  # the first overflows and rank 1's
    assert skipped[1] >= 1, "step 12 (epoch 1) overflowed on rank 1: every rank skips it"
    assert out["final_scale"] < 2.0 ** 18, "the scaler saw the overflows and backed off"
    assert out["ranks_agree"] and out["finite"], "every rank skipped the same steps and kept a finite model"
    if scheme == "dense":
        # The hook is transparent: the same steps skipped, the same losses.
        assert out["max_param_difference"] < 1e-5
        assert len(hook) == len(plain)
        for a, b in zip(hook, plain):
            assert (a == b) or abs(a - b) <= 1e-4 * max(1.0, abs(b)), (hook, plain)
    # It learns: the last epoch's loss well below the first ones, and - compression
    # learns slower than dense - as the same scheme learns in fp32.
    h = finite(hook)
    assert sum(h[-8:]) / 8 < 0.6 * sum(h[:4]) / 4, hook
    if scheme == "dense":
        assert sum(h[-8:]) / 8 < 1.5 * sum(finite(plain)[-8:]) / 8, (hook, plain)
    else:
        fp32, _ = train(tmp_path, "--scheme", scheme, *args, name="fp32.json")
        reference = fp32["losses"]["hook"]
        assert sum(h[-8:]) / 8 < 1.5 * sum(reference[-8:]) / 8, (hook, reference)
    # Gradient norms stay finite and come from the unscaled gradients.
    assert all(math.isfinite(n) for e in out["epochs"] for n in e["grad_norms"])


def test_the_norms_accordion_compares_are_unscaled(tmp_path):
    common = ["--scheme", "powersgd", "--policy", "accordion", "--low", "2", "--high", "1"]
    fp32, _ = train(tmp_path, *common, name="fp32.json")
    told, _ = train(tmp_path, *common, "--amp", "fp16", "--init-scale", "1024", name="told.json")
    untold, run = train(tmp_path, *common, "--amp", "fp16", "--init-scale", "1024", "--no-scaler-to-hook",
                        name="untold.json")

    def model_norm(out, epoch):
        return math.sqrt(sum(n * n for n in out["epochs"][epoch]["grad_norms"]))

    for epoch in range(4):
        ratio = model_norm(told, epoch) / model_norm(fp32, epoch)
        assert 0.67 < ratio < 1.5, (epoch, ratio)
        # Without the scaler the hook sees the scaled gradients (1024x or more).
        assert model_norm(untold, epoch) / model_norm(fp32, epoch) > 100
    # Accordion's decisions follow the unscaled norms: the same regimes as fp32.
    assert [e["next_critical"] for e in told["epochs"]] == [e["next_critical"] for e in fp32["epochs"]]


def test_a_run_without_its_scaler_given_is_warned_about_skipped_steps(tmp_path):
    out, run = train(tmp_path, "--scheme", "powersgd", "--amp", "fp16", "--init-scale", str(2.0 ** 24),
                     "--no-scaler-to-hook", "--epochs", "2", "--against-plain-ddp")
    assert sum(e["skipped_steps"] for e in out["epochs"]) >= 1
    assert "pass it to attach(grad_scaler=...)" in run.stdout + run.stderr
    assert out["ranks_agree"] and out["finite"]


@pytest.mark.parametrize("scheme,args", [
    ("dense", []),
    ("powersgd", ["--policy", "accordion", "--low", "2", "--high", "1"]),
])
def test_bf16_autocast_trains_as_without_the_hook(tmp_path, scheme, args):
    out, _ = train(tmp_path, "--scheme", scheme, *args, "--amp", "bf16", "--against-plain-ddp")
    hook, plain = out["losses"]["hook"], out["losses"]["plain"]
    assert all(e["skipped_steps"] == 0 for e in out["epochs"])
    if scheme == "dense":
        assert out["max_param_difference"] < 1e-5
        assert hook == pytest.approx(plain, rel=1e-4, abs=1e-5)
    assert sum(hook[-8:]) / 8 < 0.6 * sum(hook[:4]) / 4, hook
    if scheme == "dense":
        assert sum(hook[-8:]) / 8 < 1.5 * sum(plain[-8:]) / 8, (hook, plain)
