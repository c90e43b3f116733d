"""Type stubs of accordion._core, the C++ core under the accordion package.

Kept honest by tests/python/unit/test_core_stub.py: every name the module
binds is here and nothing else, and HookOptions' run settings are exactly the
keywords of the core's table (analysis/run_settings.h).
"""

from typing import Any, Dict, List, Optional, Sequence, Tuple, TypedDict, Union

import torch

__version__: str

class RunSettingRow(TypedDict):
    keyword: str
    key: str
    flag: str
    unit: str
    help: str
    choices: List[str]
    same_on_every_rank: bool
    default: Union[bool, int, float, str]

class SchemeRow(TypedDict):
    name: str
    title: str
    has_levels: bool
    batch_levels: bool

class PolicyRow(TypedDict):
    name: str
    title: str
    one_level: bool
    reads_moments: bool
    fits: List[str]

class LayerRow(TypedDict):
    layer_id: int
    name: str
    shape: List[int]
    numel: int
    compressible: bool
    floats_dense: float
    floats_low: float
    floats_high: float

class HookOptions:
    """The options of accordion.ddp.attach, with the C++ core's defaults.

    A value of the wrong kind or out of bounds raises ValueError naming the keyword."""

    def __init__(self) -> None: ...
    # Run settings (analysis/run_settings.h), one per row of run_settings().
    scheme: str
    topk_dense_vectors: bool
    topk_error_feedback: bool
    policy: str
    low: float
    high: float
    eta: float
    interval: int
    msdr_factor: float
    bucket_mb: float
    seed: int
    sample_iterations: int
    network_probe: bool
    network_probe_budget_s: float
    epochs: int
    batch_size: int
    # What only the trace's writer needs.
    trace: str
    overwrite: bool
    model: str
    dataset: str
    train_samples: int
    config_json: str
    ranks_per_node: int

class EpochSummary:
    """What AccordionHook.end_epoch concluded on this rank."""

    @property
    def epoch(self) -> int: ...
    @property
    def grad_norms(self) -> List[float]: ...
    @property
    def next_levels(self) -> List[float]: ...
    @property
    def next_critical(self) -> List[bool]: ...
    @property
    def floats_sent(self) -> float: ...
    @property
    def next_batch_size(self) -> int: ...
    @property
    def skipped_steps(self) -> int: ...
    def to_dict(self) -> Dict[str, Any]: ...
    def __getitem__(self, name: str) -> Any: ...

class Core:
    """The hook's C++ state: exchange, compressors, controllers, trace recorder."""

    def __init__(self, parameters: Sequence[torch.Tensor], names: Sequence[str], options: HookOptions,
                 problem: str = ...) -> None: ...
    def begin_step(self) -> None: ...
    def end_forward(self) -> None: ...
    def gradient_ready(self, layer: int, grad: torch.Tensor) -> None: ...
    def finish_step(self) -> None: ...
    def copy_average_into(self, layers: Sequence[int], buffer: torch.Tensor) -> None: ...
    def end_epoch(self, lr: float, next_lr: float, train_loss: float, train_acc: float, test_loss: float,
                  test_acc: float, optimizer_steps: int = ...) -> EpochSummary: ...
    def set_gradient_scale(self, scale: float) -> None: ...
    def finish(self, complete: bool) -> None: ...
    @property
    def levels(self) -> List[float]: ...
    @property
    def epoch(self) -> int: ...
    @property
    def step(self) -> int: ...
    @property
    def in_step(self) -> bool: ...
    @property
    def recording(self) -> bool: ...
    @property
    def layers(self) -> List[LayerRow]: ...

class DistributedSampler:
    """accordion-train's sampler: which training samples each rank uses at each step."""

    def __init__(self, num_samples: int, global_batch: int, world_size: int, rank: int, seed: int) -> None: ...
    def set_epoch(self, epoch: int) -> None: ...
    def batch(self, step: int) -> List[int]: ...
    def epoch_batches(self, epoch: int) -> List[List[int]]: ...
    @property
    def steps_per_epoch(self) -> int: ...

class TrainingData:
    """accordion-train's data for one rank: the same files, normalisation and split."""

    def __init__(self, dataset: str = ..., data_dir: str = ..., limit_samples: int = ..., seed: int = ...,
                 world_size: int = ..., rank: int = ..., augment: bool = ..., batch_size: int = ...,
                 data_file: str = ..., valid_file: str = ..., valid_fraction: float = ..., bptt: int = ...) -> None: ...
    def start_epoch(self, epoch: int, global_batch: int) -> None: ...
    def train_batch(self, step: int) -> Tuple[torch.Tensor, torch.Tensor]: ...
    def test_batches(self) -> List[Tuple[torch.Tensor, torch.Tensor]]: ...
    def hessian_batch(self, size: int) -> Tuple[torch.Tensor, torch.Tensor]: ...
    @property
    def steps(self) -> int: ...
    @property
    def train_samples(self) -> int: ...
    @property
    def shape(self) -> Dict[str, int]: ...

def run_settings() -> List[RunSettingRow]: ...
def schemes() -> List[SchemeRow]: ...
def policies() -> List[PolicyRow]: ...
def floats_per_step(scheme: str, shape: Sequence[int], level: float, topk_dense_vectors: bool = ...) -> float: ...
def default_levels(scheme: str, batch_size: int = ...) -> Tuple[float, float]: ...
def initial_parameters(model: str, seed: int, shape: Optional[Dict[str, int]] = ..., lstm_size: int = ...,
                       dropout: float = ..., tie_weights: bool = ...) -> List[Tuple[str, torch.Tensor]]: ...
def worker_seed(seed: int, rank: int) -> int: ...
