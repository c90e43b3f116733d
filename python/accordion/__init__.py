"""Accordion for PyTorch scripts: train and record any DistributedDataParallel model.

The package is glue over the Accordion Toolkit's C++ core (``accordion._core``):
the Accordion controller, the PowerSGD and TopK compressors, the accounting and
the trace writer are the ones ``accordion-train`` runs, so a trace written here
is read by ``accordion-analyze``, ``accordion-sim``, ``accordion-report`` and
``accordion-gui`` unchanged.

Quick start (inside a script started by ``torchrun``)::

    import accordion.ddp
    model = torch.nn.parallel.DistributedDataParallel(net)
    acc = accordion.ddp.attach(model, scheme="powersgd", low=2, high=1, trace="run.trace")
    for epoch in range(epochs):
        for x, y in loader:
            ...  # forward, backward, optimizer step, as before
        acc.end_epoch(lr=lr, next_lr=next_lr, train_loss=loss, test_accuracy=acc1)
    acc.close()
"""

# torch first: it loads the LibTorch libraries _core links against (an
# installed _core carries no path to them, as torch's own extensions do not).
import torch  # noqa: F401

from . import _core
from .ddp import AccordionHook, HookOptions, attach

__version__ = _core.__version__
__all__ = ["AccordionHook", "HookOptions", "attach", "__version__"]
