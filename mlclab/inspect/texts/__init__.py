"""The program as text, one module per style, each registered in ``registry``.

Built in: ``relax`` (TVMScript), ``relay`` (Relay's graph binding), ``let`` (Relay's A-normal
form) and ``tir`` (the lowered TensorIR). Importing this package registers them, in this order.
"""
from . import relax  # noqa: F401,I001  (each import registers its style)
from . import relay  # noqa: F401
from . import let  # noqa: F401
from . import tir  # noqa: F401
from .registry import (IRText, TextStyle, register_style, style_names, text_style, text_styles,
                       unregister_style)

__all__ = ["IRText", "TextStyle", "register_style", "unregister_style", "style_names",
           "text_style", "text_styles"]
