"""The Accordion communication hook for ``torch.nn.parallel.DistributedDataParallel``.

``attach(ddp_model, ...)`` registers the hook (``register_comm_hook``) and two
forward hooks that time the step. Each gradient DDP hands over goes into the
C++ exchange, which buckets, compresses (at the level the controller chose for
the layer) and all-reduces exactly as ``accordion-train`` does; once DDP's last
bucket is in, the exchange finishes the step and every bucket gets the average
over ranks. ``end_epoch`` runs the Accordion controller on the epoch's
accumulated gradient norms, writes the epoch into the trace (rank 0) and sets
the next epoch's levels.
"""

import json
import math
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from . import _core

SCHEMES = ("dense", "powersgd", "topk", "batch")
POLICIES = ("static", "accordion")


def attach(ddp_model, *, scheme="powersgd", policy=None, low=None, high=None, level=None, eta=0.5,
           interval=10, trace=None, overwrite=False, bucket_mb=25.0, seed=0, sample_iterations=20,
           network_probe=True, topk_dense_vectors=False, topk_error_feedback=True, model_name=None,
           dataset="custom", train_samples=0, batch_size=0, epochs=None, config=None):
    """Registers the Accordion hook on ``ddp_model`` and returns its :class:`AccordionHook`.

    Args:
        ddp_model: a ``DistributedDataParallel`` model; ``torch.distributed`` must be
            initialised (Gloo on CPU, NCCL on GPU).
        scheme: ``"dense"``, ``"powersgd"`` (level = rank), ``"topk"`` (level = fraction
            kept) or ``"batch"`` (level = global batch; use :attr:`AccordionHook.batch_size`).
        policy: ``"accordion"`` (the controller switches between ``low`` and ``high``) or
            ``"static"`` (one ``level``). Default: ``"accordion"`` for a compressing
            scheme unless ``level`` is given, else ``"static"``.
        low, high: the levels inside and outside critical regimes (default: the paper's,
            PowerSGD rank 2 and 1, TopK 0.99 and 0.1).
        level: the one level of a static run (default: ``low``'s default).
        eta, interval: Accordion's threshold and check interval, in epochs.
        trace: the trace to write (rank 0 writes it); ``None`` records nothing.
        overwrite: replace an existing trace at ``trace`` (never one being written).
        bucket_mb: the exchange's gradient bucket size (its buckets, not DDP's, decide
            what travels together, so traces match ``accordion-train``'s).
        seed: PowerSGD's shared seed for its random Q.
        sample_iterations: steps per epoch whose timings go into the trace.
        network_probe: time the network before the first step (a couple of seconds).
        topk_dense_vectors, topk_error_feedback: TopK's choices, as ``accordion-train``'s flags.
        train_samples, batch_size, epochs: needed with ``trace``: samples in one epoch
            (``len(dataset)``), the global batch (all ranks together) and the epochs the run
            trains; the simulator derives time to train from them.
        model_name, dataset, config: what the trace's run row says about the training
            (``config``: a JSON-serialisable dict).

    The layers are the model's parameters as they are when ``attach`` runs: attach after
    moving the model to its device. ``seed`` defaults to 0 (``accordion-train``'s ``--seed``
    defaults to 1; give the same value for the same PowerSGD draws).

    Raises:
        ValueError: a bad argument, in one line; nothing is written.
        OSError: the trace could not be written (a full disk), in one line; the epochs
            committed before stay readable.
    """
    if not isinstance(ddp_model, DistributedDataParallel):
        raise ValueError(f"attach needs a DistributedDataParallel model, not {type(ddp_model).__name__}")
    if not dist.is_available() or not dist.is_initialized():
        raise ValueError("torch.distributed is not initialised: call dist.init_process_group first")
    if scheme not in SCHEMES:
        raise ValueError(f"unknown scheme {scheme!r} (schemes: {', '.join(SCHEMES)})")
    if policy is None:
        policy = "static" if scheme == "dense" or level is not None else "accordion"
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r} (policies: {', '.join(POLICIES)})")
    default_low, default_high = _core.default_levels(scheme, int(batch_size))
    if policy == "static":
        if low is not None or high is not None:
            raise ValueError("low and high belong to policy 'accordion'; a static run takes level")
        low = high = default_low if level is None else level
    else:
        if level is not None:
            raise ValueError("level belongs to policy 'static'; accordion takes low and high")
        low = default_low if low is None else low
        high = default_high if high is None else high
    for name, value in (("low", low), ("high", high), ("eta", eta), ("bucket_mb", bucket_mb)):
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
            raise ValueError(f"{name} must be a finite number, not {value!r}")
    if trace is not None:
        trace = os.fspath(trace)
        if os.path.isdir(trace):
            raise ValueError(f"trace {trace!r} is a directory; give a file path")
        # The simulator derives steps per epoch (and so time to train) from these.
        if not isinstance(train_samples, int) or train_samples < 1 or not isinstance(batch_size, int) \
                or batch_size < 1:
            raise ValueError("a trace needs train_samples (training samples in one epoch, e.g. len(dataset)) "
                             "and batch_size (the global batch, every rank's together), both 1 or more")
        if epochs is None or not isinstance(epochs, int) or epochs < 1:
            raise ValueError("a trace needs epochs: the number of epochs the run trains, 1 or more")
    try:
        config_json = json.dumps(config if config is not None else {})
    except (TypeError, ValueError) as e:
        raise ValueError(f"config is not JSON-serialisable: {e}") from None
    options = {
        "scheme": scheme, "policy": policy, "low": float(low), "high": float(high), "eta": float(eta),
        "interval": int(interval), "bucket_bytes": int(round(bucket_mb * 1024 * 1024)), "seed": int(seed),
        "trace": trace or "", "overwrite": bool(overwrite), "sample_iterations": int(sample_iterations),
        "network_probe": bool(network_probe), "topk_dense_vectors": bool(topk_dense_vectors),
        "topk_error_feedback": bool(topk_error_feedback),
        "model": model_name or type(ddp_model.module).__name__, "dataset": str(dataset),
        "train_samples": int(train_samples), "batch_size": int(batch_size), "epochs": int(epochs or 1),
        "config_json": config_json,
        "ranks_per_node": int(os.environ.get("LOCAL_WORLD_SIZE", "1")),
    }
    return AccordionHook(ddp_model, options)


class AccordionHook:
    """The hook's state on one rank; returned by :func:`attach`.

    Call :meth:`end_epoch` on every rank after each epoch's last optimizer step and
    :meth:`close` at the end (or use it as a context manager: an exception marks the
    trace interrupted, keeping its finished epochs).
    """

    def __init__(self, ddp_model, options):
        named = [(n, p) for n, p in ddp_model.module.named_parameters() if p.requires_grad]
        self._layer_of = {p.data_ptr(): i for i, (_, p) in enumerate(named)}
        self._options = options
        self._core = _core.Core([p.detach() for _, p in named], [n for n, _ in named], options)
        self._pending = []
        self._closed = False
        ddp_model.register_comm_hook(self, AccordionHook._communicate)
        self._handles = [ddp_model.register_forward_pre_hook(self._forward_starts),
                         ddp_model.register_forward_hook(self._forward_ends)]

    # -- DDP's side ---------------------------------------------------------

    def _forward_starts(self, module, inputs):
        if module.training and torch.is_grad_enabled() and self._core is not None:
            self._core.begin_step()

    def _forward_ends(self, module, inputs, output):
        if module.training and torch.is_grad_enabled() and self._core is not None:
            self._core.end_forward()

    def _communicate(self, bucket):
        core = self._core
        layers = [self._layer_of[p.data_ptr()] for p in bucket.parameters()]
        for layer, grad in zip(layers, bucket.gradients()):
            core.gradient_ready(layer, grad)
        future = torch.futures.Future()
        self._pending.append((bucket, layers, future))
        if bucket.is_last():
            core.finish_step()
            for b, ls, f in self._pending:
                buffer = b.buffer()
                core.copy_average_into(ls, buffer)
                f.set_result(buffer)
            self._pending = []
        return future

    # -- the user's side ----------------------------------------------------

    def end_epoch(self, *, lr, next_lr=None, train_loss=0.0, train_accuracy=0.0, test_loss=0.0,
                  test_accuracy=0.0):
        """Ends the epoch on every rank: the controller decides the next epoch's levels
        from the epoch's gradient norms and rank 0 writes the epoch into the trace.

        Args:
            lr: the epoch's learning rate; next_lr: the next epoch's (default ``lr``). A
                decay holds every layer critical for an interval, as in the paper.
            train_loss, train_accuracy, test_loss, test_accuracy: what the trace records
                for the epoch (accuracies as fractions, 0 to 1).

        Returns:
            A dict: ``epoch``, ``grad_norms``, ``next_levels``, ``next_critical``,
            ``floats_sent`` (one worker, this epoch), ``next_batch_size``.

        Raises:
            FloatingPointError: a layer's accumulated gradient is not finite (training
                diverged); the trace keeps the finished epochs and is marked failed.
        """
        self._check_open()
        return self._core.end_epoch(float(lr), float(lr if next_lr is None else next_lr), float(train_loss),
                                    float(train_accuracy), float(test_loss), float(test_accuracy))

    def close(self, complete=True):
        """Marks the trace finished (``complete=False``: interrupted) and releases the
        C++ state. Call it before ``dist.destroy_process_group()``."""
        if self._closed:
            return
        self._closed = True
        for h in self._handles:
            h.remove()
        core, self._core = self._core, None
        core.finish(bool(complete))
        del core

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        self.close(complete=kind is None)
        return False

    def _check_open(self):
        if self._closed:
            raise ValueError("this AccordionHook is closed")

    @property
    def levels(self):
        """Each layer's level in the running epoch (PowerSGD rank, TopK fraction, batch)."""
        self._check_open()
        return list(self._core.levels)

    @property
    def layers(self):
        """The layers as the trace records them: name, shape, floats per step at each level."""
        self._check_open()
        return list(self._core.layers)

    @property
    def epoch(self):
        self._check_open()
        return self._core.epoch

    @property
    def batch_size(self):
        """The batch scheme: the global batch the controller chose for the running epoch."""
        self._check_open()
        if self._options["scheme"] != "batch":
            return self._options["batch_size"]
        return int(self._core.levels[0])

    @property
    def lr_scale(self):
        """The batch scheme: the LR factor for the running epoch (batch over the low batch)."""
        if self._options["scheme"] != "batch":
            return 1.0
        return self.batch_size / self._options["low"]
