"""The Accordion communication hook for ``torch.nn.parallel.DistributedDataParallel``.

``attach(ddp_model, ...)`` registers the hook (``register_comm_hook``) and two
forward hooks that time the step. Each gradient DDP hands over goes into the
C++ exchange, which buckets, compresses (at the level the controller chose for
the layer) and all-reduces exactly as ``accordion-train`` does; once DDP's last
bucket is in, the exchange finishes the step and every bucket gets the average
over ranks. ``end_epoch`` runs the Accordion controller on the epoch's
accumulated gradient norms, writes the epoch into the trace (rank 0) and sets
the next epoch's levels.

The ranks must agree: ``attach`` compares the settings every rank must share
and, before each step, each ``end_epoch`` and ``close``, the ranks compare
where they are. A difference raises one ``ValueError`` on every rank instead
of a hang. ``trace`` is needed on rank 0 only (``trace=path if rank == 0 else
None``).
"""

from __future__ import annotations

import atexit
import json
import math
import os
import warnings
import weakref
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

import torch
import torch.distributed as dist
from torch.optim.optimizer import register_optimizer_step_post_hook
from torch.nn.parallel import DistributedDataParallel

from . import _core

HookOptions = _core.HookOptions
EpochSummary = _core.EpochSummary
# Schemes, policies and the settings' table come from the C++ core, which
# accordion-train reads too (traces/scheme_description.h, policy_description.h,
# analysis/run_settings.h): nothing about them is restated here.
_SCHEMES: Dict[str, Dict[str, Any]] = {row["name"]: row for row in _core.schemes()}
_POLICIES: Dict[str, Dict[str, Any]] = {row["name"]: row for row in _core.policies()}
SCHEMES: Tuple[str, ...] = tuple(_SCHEMES)
POLICIES: Tuple[str, ...] = tuple(_POLICIES)
Number = Union[int, float]
PathLike = Union[str, "os.PathLike[str]"]

# The DDP models an AccordionHook is attached to: DDP takes one comm hook.
_attached: "weakref.WeakSet[DistributedDataParallel]" = weakref.WeakSet()


def attach(ddp_model: DistributedDataParallel, *, scheme: str = "powersgd", policy: Optional[str] = None,
           low: Optional[Number] = None, high: Optional[Number] = None, level: Optional[Number] = None,
           eta: Optional[float] = None, interval: Optional[int] = None, msdr_factor: Optional[float] = None,
           trace: Optional[PathLike] = None,
           overwrite: bool = False, bucket_mb: Optional[float] = None, seed: Optional[int] = None,
           sample_iterations: Optional[int] = None, network_probe: Optional[bool] = None,
           topk_dense_vectors: Optional[bool] = None, topk_error_feedback: Optional[bool] = None,
           model_name: Optional[str] = None, dataset: str = "custom", train_samples: int = 0, batch_size: int = 0,
           epochs: Optional[int] = None, config: Optional[Mapping[str, Any]] = None,
           grad_scaler: Optional["torch.amp.GradScaler"] = None) -> "AccordionHook":
    """Registers the Accordion hook on ``ddp_model`` and returns its :class:`AccordionHook`.

    Collective: every rank calls it. An option left ``None`` takes the C++ core's
    default (:class:`HookOptions`, the same as ``accordion-train``'s flags).

    Args:
        ddp_model: a ``DistributedDataParallel`` model; ``torch.distributed`` must be
            initialised (Gloo on CPU, NCCL on GPU).
        scheme: ``"dense"``, ``"powersgd"`` (level = rank), ``"topk"`` (level = fraction
            kept) or ``"batch"`` (level = global batch; use :attr:`AccordionHook.batch_size`).
        policy: ``"accordion"`` (the controller switches between ``low`` and ``high``),
            ``"static"`` (one ``level``), ``"adaqs"`` (PowerSGD, TopK: from ``high``, the
            compression halves each time the gradients' mean-to-std ratio falls by
            ``msdr_factor``, up to ``low``; Guo et al. 2020) or ``"smith"`` (batch: the batch
            grows by the LR's decay factor where ``next_lr`` decays, from ``low`` up to
            ``high``; Smith et al. 2017). Default: ``"accordion"`` for a compressing
            scheme unless ``level`` is given, else ``"static"``.
        low, high: the levels inside and outside critical regimes (default: the paper's,
            PowerSGD rank 2 and 1, TopK 0.99 and 0.1).
        level: the one level of a static run (default: ``low``'s default).
        eta, interval: Accordion's threshold and check interval, in epochs (0.5, 10);
            AdaQS checks every ``interval`` epochs too.
        msdr_factor: AdaQS's factor (2); only with ``policy="adaqs"``.
        trace: the trace to write. Rank 0 writes it; it may be given on rank 0 only
            (``trace=path if rank == 0 else None``). ``None`` everywhere records nothing.
        overwrite: replace an existing trace at ``trace`` (never one being written).
        bucket_mb: the exchange's gradient bucket size (25; its buckets, not DDP's,
            decide what travels together, so traces match ``accordion-train``'s).
        seed: PowerSGD's shared seed for its random Q (1, as ``accordion-train --seed``).
        sample_iterations: steps per epoch whose timings go into the trace (4, as
            ``accordion-train --trace-iterations``).
        network_probe: time the network before the first step when recording (a couple
            of seconds; default ``True``).
        topk_dense_vectors, topk_error_feedback: TopK's choices, as ``accordion-train``'s flags.
        train_samples, batch_size, epochs: needed with ``trace``: samples in one epoch
            (``len(dataset)``), the global batch (all ranks together) and the epochs the run
            trains; the simulator derives time to train from them.
        model_name, dataset, config: what the trace's run row says about the training
            (``config``: a JSON-serialisable dict, kept beside the hook's own settings).
        grad_scaler: the ``torch.amp.GradScaler`` of a mixed-precision (fp16) run. The hook
            reads its scale before each step, so the gradient norms Accordion compares are
            the unscaled ones and a change of scale is never a critical regime. With or
            without it, a step whose gradients are not finite on any rank reaches the
            scaler as without the hook (non-finite on every rank, so it skips the step)
            and leaves error feedback and the norms untouched.

    Settings every rank must share: scheme, policy, levels, eta, interval, bucket_mb,
    seed, network_probe, TopK's choices and the model's parameters (names and shapes).
    Those only the writer needs (trace, overwrite, the run's metadata, epochs,
    sample_iterations) are rank 0's.

    Raises:
        ValueError: a bad argument on any rank, or settings that differ between ranks,
            in one line, on every rank; nothing is written.
        OSError: the trace could not be written (a full disk), in one line; the epochs
            committed before stay readable.
    """
    if not isinstance(ddp_model, DistributedDataParallel):
        raise ValueError(f"attach needs a DistributedDataParallel model, not {type(ddp_model).__name__}")
    if not dist.is_available() or not dist.is_initialized():
        raise ValueError("torch.distributed is not initialised: call dist.init_process_group first")
    # A problem found here travels to every rank with the options (the core's
    # first collective), so that no rank waits for one that raised alone.
    problem = ""
    try:
        if grad_scaler is not None and not callable(getattr(grad_scaler, "get_scale", None)):
            raise ValueError(f"grad_scaler must be a torch.amp.GradScaler, not {type(grad_scaler).__name__}")
        options = _options(ddp_model, scheme=scheme, policy=policy, low=low, high=high, level=level, eta=eta,
                           interval=interval, msdr_factor=msdr_factor, trace=trace, overwrite=overwrite, bucket_mb=bucket_mb, seed=seed,
                           sample_iterations=sample_iterations, network_probe=network_probe,
                           topk_dense_vectors=topk_dense_vectors, topk_error_feedback=topk_error_feedback,
                           model_name=model_name, dataset=dataset, train_samples=train_samples,
                           batch_size=batch_size, epochs=epochs, config=config)
        if ddp_model in _attached:
            raise ValueError("this model already has an Accordion hook (DDP takes one communication hook): "
                             "wrap the module in a new DistributedDataParallel to attach again")
    except ValueError as e:
        problem = str(e) or type(e).__name__
        options = HookOptions()
    return AccordionHook(ddp_model, options, problem, grad_scaler=grad_scaler)


def _set(options: HookOptions, name: str, value: Any) -> None:
    """Sets one run setting unless ``value`` is None; the core checks its kind and bounds
    (a ValueError naming the keyword, in the words accordion-train's flag uses)."""
    if value is not None:
        setattr(options, name, value)


def _options(ddp_model: DistributedDataParallel, *, scheme: str, policy: Optional[str], low: Optional[Number],
             high: Optional[Number], level: Optional[Number], eta: Optional[float], interval: Optional[int],
             msdr_factor: Optional[float], trace: Optional[PathLike], overwrite: bool, bucket_mb: Optional[float],
             seed: Optional[int], sample_iterations: Optional[int], network_probe: Optional[bool],
             topk_dense_vectors: Optional[bool], topk_error_feedback: Optional[bool], model_name: Optional[str],
             dataset: str, train_samples: int, batch_size: int, epochs: Optional[int],
             config: Optional[Mapping[str, Any]]) -> HookOptions:
    if scheme not in SCHEMES:
        raise ValueError(f"unknown scheme {scheme!r} (schemes: {', '.join(SCHEMES)})")
    if policy is None:
        policy = "static" if not _SCHEMES[scheme]["has_levels"] or level is not None else "accordion"
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r} (policies: {', '.join(POLICIES)})")
    described = _POLICIES[policy]
    if not isinstance(batch_size, int) or isinstance(batch_size, bool):
        raise ValueError(f"batch_size must be a whole number, not {batch_size!r}")
    default_low, default_high = _core.default_levels(scheme, max(batch_size, 0))
    if described["one_level"]:
        if low is not None or high is not None:
            raise ValueError(f"low and high belong to the adaptive policies; a {policy} run takes level")
        low = high = default_low if level is None else level
    else:
        if level is not None:
            one = ", ".join(name for name, row in _POLICIES.items() if row["one_level"])
            raise ValueError(f"level belongs to policy {one}; {policy} takes low and high")
        low = default_low if low is None else low
        high = default_high if high is None else high
    if msdr_factor is not None and not described["reads_moments"]:
        reading = ", ".join(name for name, row in _POLICIES.items() if row["reads_moments"])
        raise ValueError(f"msdr_factor belongs to policy {reading}")
    o = HookOptions()
    for name, value in (("scheme", scheme), ("policy", policy), ("low", low), ("high", high), ("eta", eta),
                        ("msdr_factor", msdr_factor), ("bucket_mb", bucket_mb), ("interval", interval),
                        ("seed", seed), ("sample_iterations", sample_iterations), ("network_probe", network_probe),
                        ("topk_dense_vectors", topk_dense_vectors), ("topk_error_feedback", topk_error_feedback)):
        _set(o, name, value)
    if trace is not None:
        if not isinstance(trace, (str, os.PathLike)):
            raise ValueError(f"trace must be a path (str or os.PathLike), not {trace!r}")
        trace = os.fspath(trace)
        if os.path.isdir(trace):
            raise ValueError(f"trace {trace!r} is a directory; give a file path")
        # The simulator derives steps per epoch (and so time to train) from these.
        if not isinstance(train_samples, int) or train_samples < 1 or batch_size < 1:
            raise ValueError("a trace needs train_samples (training samples in one epoch, e.g. len(dataset)) "
                             "and batch_size (the global batch, every rank's together), both 1 or more")
        if epochs is None or not isinstance(epochs, int) or isinstance(epochs, bool) or epochs < 1:
            raise ValueError("a trace needs epochs: the number of epochs the run trains, 1 or more")
        o.trace = trace
    if not isinstance(overwrite, bool):  # "no" is a string, and truthy: a bool only
        raise ValueError(f"overwrite must be a boolean, not {overwrite!r}")
    o.overwrite = overwrite
    _set(o, "epochs", epochs)
    if isinstance(train_samples, bool) or not isinstance(train_samples, int) or not 0 <= train_samples < 2**63:
        raise ValueError(f"train_samples must be a whole number from 0 to 2**63-1, not {train_samples!r}")
    o.train_samples = train_samples
    _set(o, "batch_size", batch_size)
    try:
        # allow_nan=False: NaN is no JSON, and the trace keeps the config as JSON.
        o.config_json = json.dumps(dict(config) if config is not None else {}, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise ValueError(f"config is not JSON-serialisable: {e}") from None
    for name, value in (("model_name", model_name), ("dataset", dataset)):
        if value is not None and not isinstance(value, str):
            raise ValueError(f"{name} must be a string, not {value!r}")
    o.model = model_name or type(ddp_model.module).__name__
    o.dataset = dataset
    o.ranks_per_node = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
    return o


def _metric(value: Optional[float], name: str) -> float:
    """A metric the trace records; None (not measured) travels as NaN and shows as "—"."""
    if value is None:
        return math.nan
    if isinstance(value, torch.Tensor):
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number or None, not {value!r}")
    return float(value)


def _refuse_training_after_close(module, inputs):
    # A forward in training mode is refused in one line; any other gradient
    # that still reaches the closed hook is refused there (_communicate).
    if module.training and torch.is_grad_enabled():
        raise ValueError("a training step after close(): this model's AccordionHook is closed, and DDP takes one "
                         "communication hook; wrap the module in a new DistributedDataParallel to train on")


class AccordionHook:
    """The hook's state on one rank; returned by :func:`attach`.

    Call :meth:`end_epoch` on every rank after each epoch's last optimizer step and
    :meth:`close` at the end (or use it as a context manager: an exception marks the
    trace interrupted, keeping its finished epochs). A script that ends without
    closing leaves its trace marked interrupted.
    """

    def __init__(self, ddp_model: DistributedDataParallel, options: HookOptions, problem: str = "",
                 grad_scaler: Optional["torch.amp.GradScaler"] = None) -> None:
        named = [(n, p) for n, p in ddp_model.module.named_parameters() if p.requires_grad]
        self._layer_of = {p.data_ptr(): i for i, (_, p) in enumerate(named)}
        self._options = options
        self._closed = False
        self._core = None
        self._core = _core.Core([p.detach() for _, p in named], [n for n, _ in named], options, problem)
        self._pending = []
        self._scaler = grad_scaler
        self._scale = 1.0
        self._warned_unscaled = False
        # The optimizer steps taken on this model's parameters in the running
        # epoch: an epoch whose optimizer stepped while no gradient went
        # through the hook is an error, never a trace marked complete.
        self._optimizer_steps = 0
        self._optimizes = weakref.WeakKeyDictionary()  # optimizer -> whether it steps our parameters
        self._parameters = {id(p) for _, p in named}
        me_ = weakref.ref(self)
        self._step_hook = register_optimizer_step_post_hook(
            lambda opt, args, kwargs: me_() is not None and me_()._count_optimizer_step(opt))
        ddp_model.register_comm_hook(self, AccordionHook._communicate)
        _attached.add(ddp_model)
        self._model = weakref.ref(ddp_model)
        self._handles = [ddp_model.register_forward_pre_hook(self._forward_starts),
                         ddp_model.register_forward_hook(self._forward_ends)]
        # Closed (as interrupted) at interpreter exit if the script never did.
        me = weakref.ref(self)
        self._at_exit = lambda: (me() is not None and me().close(complete=False))
        atexit.register(self._at_exit)

    # -- DDP's side ---------------------------------------------------------

    # A step is what DDP reduces: a forward with grad mode on, whatever the
    # wrapper's .training says (Lightning's validation loop leaves the DDP
    # wrapper in eval mode and restores only the LightningModule).
    def _forward_starts(self, module, inputs):
        if not torch.is_grad_enabled() or self._core is None:
            return
        join = getattr(module, "_join_config", None)
        if join is not None and join.enable:
            raise ValueError("DDP's join() for uneven inputs is not supported by the Accordion hook: give every "
                             "rank the same number of steps per epoch (DistributedSampler(..., drop_last=True))")
        if not self._core.in_step:
            self._read_scale()
        self._core.begin_step()

    def _forward_ends(self, module, inputs, output):
        if torch.is_grad_enabled() and self._core is not None:
            self._core.end_forward()

    def _read_scale(self) -> None:
        # The scale this step's loss is multiplied by: GradScaler changes it
        # only in update(), after the optimizer step.
        if self._scaler is None or not getattr(self._scaler, "is_enabled", lambda: True)():
            return
        scale = float(self._scaler.get_scale())
        if not (math.isfinite(scale) and scale > 0):
            raise FloatingPointError(f"training diverged: the GradScaler's scale is {scale} (every step since it "
                                     "last grew had gradients that were not finite)")
        if scale != self._scale:
            self._core.set_gradient_scale(scale)
            self._scale = scale

    def _count_optimizer_step(self, optimizer) -> None:
        steps_ours = self._optimizes.get(optimizer)
        if steps_ours is None:
            steps_ours = any(id(p) in self._parameters for g in optimizer.param_groups for p in g["params"])
            self._optimizes[optimizer] = steps_ours
        if steps_ours:
            self._optimizer_steps += 1

    def _communicate(self, bucket):
        core = self._core
        if core is None:
            raise ValueError("a training step after close(): this AccordionHook is closed, but DDP still calls "
                             "it; train with a new DistributedDataParallel")
        layers = []
        for p in bucket.parameters():
            layer = self._layer_of.get(p.data_ptr())
            if layer is None:
                raise ValueError("a parameter's storage changed after attach (the model was moved or a "
                                 "parameter replaced): attach after moving the model to its device")
            layers.append(layer)
        if not core.in_step:  # a step no forward hook saw begin: the core begins it with this gradient
            self._read_scale()
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

    def end_epoch(self, *, lr: float, next_lr: Optional[float] = None, train_loss: Optional[float] = None,
                  train_accuracy: Optional[float] = None, test_loss: Optional[float] = None,
                  test_accuracy: Optional[float] = None) -> EpochSummary:
        """Ends the epoch on every rank: the controller decides the next epoch's levels
        from the epoch's gradient norms and rank 0 writes the epoch into the trace.

        Args:
            lr: the epoch's learning rate as the schedule gives it - before the batch
                scheme's :attr:`AccordionHook.lr_scale`; next_lr: the next epoch's (default
                ``lr``). A decay holds every layer critical for an interval, as in the paper;
                under ``policy="smith"`` it grows the batch instead. Every rank must pass the
                same values. The trace records ``lr`` (``schedule_lr``) and ``lr`` times the
                scale (``lr``).
            train_loss, train_accuracy, test_loss, test_accuracy: what the trace records
                for the epoch (accuracies as fractions, 0 to 1); ``None``: not measured
                (the tools show "—").

        Returns:
            An :class:`EpochSummary`: ``epoch``, ``grad_norms``, ``next_levels``,
            ``next_critical``, ``floats_sent`` (one worker, this epoch), ``next_batch_size``,
            ``skipped_steps`` (steps whose gradients were not finite, which GradScaler skips:
            sent and timed like any step, left out of the norms and error feedback). Its
            fields also read by name (``summary["floats_sent"]``), as when it was a dict.

        Raises:
            ValueError: a bad argument, or ranks that disagree (another number of steps,
                another lr), on every rank in one line; or an epoch the hook did not serve
                (the optimizer stepped but no gradient went through the hook, or the
                averages it handed back were all zero while the gradients were not): the
                trace is then marked failed.
            FloatingPointError: a layer's accumulated gradient is not finite (training
                diverged); the trace keeps the finished epochs and is marked failed.
        """
        self._check_open()
        next_lr = lr if next_lr is None else next_lr
        if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in (lr, next_lr)):
            raise ValueError(f"lr and next_lr must be numbers, not {lr!r} and {next_lr!r}")
        optimizer_steps, self._optimizer_steps = self._optimizer_steps, 0
        summary = self._core.end_epoch(float(lr), float(next_lr), _metric(train_loss, "train_loss"),
                                       _metric(train_accuracy, "train_accuracy"), _metric(test_loss, "test_loss"),
                                       _metric(test_accuracy, "test_accuracy"), optimizer_steps=optimizer_steps)
        if summary.skipped_steps and self._scaler is None and not self._warned_unscaled:
            self._warned_unscaled = True
            warnings.warn(f"{summary.skipped_steps} step(s) of epoch {summary.epoch} had gradients that were "
                          "not finite (a loss scale that overflowed?): if this run uses torch.amp.GradScaler, "
                          "pass it to attach(grad_scaler=...) so that Accordion compares unscaled gradient norms",
                          RuntimeWarning, stacklevel=2)
        return summary

    def close(self, complete: bool = True) -> None:
        """Marks the trace finished (``complete=False``: interrupted) and releases the
        C++ state. Call it on every rank before ``dist.destroy_process_group()``;
        ``complete=True`` is collective (the ranks check that all closed after the
        same epoch). Closed with ``complete=True`` before the ``epochs`` given to
        ``attach`` (early stopping), the trace is marked ``stopped_early`` with its
        finished epochs, which every tool reads."""
        if self._closed:
            return
        self._closed = True
        atexit.unregister(self._at_exit)
        self._step_hook.remove()
        for h in self._handles:
            h.remove()
        # DDP keeps calling its comm hook, whose errors it wraps in a
        # traceback: a training forward is refused first, in one line.
        model = self._model()
        self._handles = [model.register_forward_pre_hook(_refuse_training_after_close)] if model is not None else []
        core, self._core = self._core, None
        try:
            core.finish(bool(complete))
        finally:
            del core

    def __enter__(self) -> "AccordionHook":
        return self

    def __exit__(self, kind, value, tb) -> bool:
        self.close(complete=kind is None)
        return False

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError("this AccordionHook is closed")

    @property
    def options(self) -> HookOptions:
        """The options this rank was attached with (:class:`HookOptions`)."""
        return self._options

    @property
    def levels(self) -> List[float]:
        """Each layer's level in the running epoch (PowerSGD rank, TopK fraction, batch)."""
        self._check_open()
        return list(self._core.levels)

    @property
    def layers(self) -> List[Dict[str, Any]]:
        """The layers as the trace records them: name, shape, floats per step at each level."""
        self._check_open()
        return list(self._core.layers)

    @property
    def epoch(self) -> int:
        """The running epoch, from 0."""
        self._check_open()
        return self._core.epoch

    @property
    def batch_size(self) -> int:
        """The batch scheme: the global batch the controller chose for the running epoch."""
        self._check_open()
        if not _SCHEMES[self._options.scheme]["batch_levels"]:
            return self._options.batch_size
        return int(self._core.levels[0])

    @property
    def lr_scale(self) -> float:
        """The batch scheme: the LR factor for the running epoch (batch over the low batch)."""
        if not _SCHEMES[self._options.scheme]["batch_levels"]:
            return 1.0
        return self.batch_size / self._options.low
