"""``import_torchvision()``: torchvision's models, importable whatever torch build is installed.

torchvision's wheel carries compiled operators (``nms``, ``roi_align``...) built against one
torch build. With another build beside it -- PyPI's torchvision next to torch's CPU-only wheel,
which is what a CPU machine and Binder install -- the operators fail to load, which torchvision
tolerates, and then ``import torchvision`` itself raises ("operator torchvision::nms does not
exist") while registering shape functions for those missing operators. mlclab needs only
torchvision's models, which are plain PyTorch modules, so when that happens it imports
torchvision without the shape-function module. The detection ops stay unavailable and say so
when called; the models, transforms and datasets work.
"""
from __future__ import annotations

import sys
import types

_SHAPE_FUNCTIONS = "torchvision._meta_registrations"


def import_torchvision():
    """The ``torchvision`` module (a clear ``ImportError`` when it is not installed)."""
    if "torchvision" in sys.modules:
        return sys.modules["torchvision"]
    try:
        import torchvision
        return torchvision
    except ModuleNotFoundError as exc:
        if exc.name != "torchvision":
            raise
        raise ImportError("torchvision is not installed: pip install 'mlclab[torch]' "
                          "(or pip install torchvision)") from None
    except RuntimeError as exc:
        if "torchvision::" not in str(exc):
            raise
    # The failed import left half-made modules behind; start again without the shape functions.
    for name in [n for n in sys.modules if n == "torchvision" or n.startswith("torchvision.")]:
        del sys.modules[name]
    sys.modules[_SHAPE_FUNCTIONS] = types.ModuleType(_SHAPE_FUNCTIONS)
    import torchvision
    return torchvision
