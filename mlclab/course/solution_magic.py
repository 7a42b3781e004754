"""``%%solution``: a solution cell that does not run, so Run All checks the student's own answer.

The lesson tests put each solution's body in place of its exercise cell (as a student would) and
run the notebook again; there every check must pass.
"""
from __future__ import annotations

from IPython.core.magic import Magics, cell_magic, magics_class

NOTICE = ("This is a solution: it does not run here, so that Run All checks your own answer. "
          "To use it, copy it into your exercise cell (without the %%solution line).")


@magics_class
class SolutionMagics(Magics):
    @cell_magic
    def solution(self, line: str, cell: str) -> None:
        print(NOTICE)


def load_ipython_extension(ipython) -> None:
    ipython.register_magics(SolutionMagics)
