"""Keep TVM's C++ log lines out of the student's output.

TVM's C++ ``LOG(WARNING)`` writes straight to file descriptor 2, past Python's ``sys.stderr``,
and has no level switch (``TVM_LOG_DEBUG`` only turns on its debug lines). Jupyter forwards
fd 2 into the cell, so ``x ** 3`` printed "Detected pow(x, y) where y >= 3 ..." four times on
every compile (TIR's ``pow`` warns about a constant exponent of 3 or more, which is exact on
CPU: the results match numpy). ``quiet()`` points fd 2 at a temporary file while TVM works,
hands TVM's log lines to the ``mlclab.tvm`` logger (debug level) and writes anything else
back to stderr.
"""
from __future__ import annotations

import contextlib
import logging
import os
import re
import sys
import tempfile
import threading

LOGGER = logging.getLogger("mlclab.tvm")
# "[14:10:12] /project/src/tirx/op/op.cc:275: Warning: ..." (also ": Error:" lines of LLVM)
_TVM_LINE = re.compile(r"^\[\d\d:\d\d:\d\d\] \S+:\d+: ")
_LOCK = threading.RLock()   # fd 2 is one per process: one redirection at a time


@contextlib.contextmanager
def quiet():
    """Run the body with TVM's C++ log lines kept from stderr (see the module's doc)."""
    with _LOCK:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        try:
            saved = os.dup(2)
        except OSError:             # no fd 2 at all (a detached process): nothing to guard
            yield
            return
        with tempfile.TemporaryFile() as tmp:
            os.dup2(tmp.fileno(), 2)
            try:
                yield
            finally:
                with contextlib.suppress(Exception):
                    sys.stderr.flush()
                os.dup2(saved, 2)
                os.close(saved)
                tmp.seek(0)
                _forward(tmp.read().decode("utf-8", errors="replace"))


def _forward(text: str) -> None:
    others = []
    for line in text.splitlines(keepends=True):
        if _TVM_LINE.match(line):
            LOGGER.debug("%s", line.rstrip("\n"))
        else:
            others.append(line)
    if others:
        sys.stderr.write("".join(others))
