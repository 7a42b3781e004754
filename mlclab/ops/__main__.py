"""``python -m mlclab.ops > docs/operators.md``: the operator reference, from the table."""
from . import reference_markdown

print(reference_markdown(), end="")
