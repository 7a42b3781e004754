"""A part the suite needs (node, npm's WebAssembly Graphviz, Graphviz's dot, the console
script) is required, not optional: when it is missing a test fails saying what, never skips
(./dev.sh setup installs every one). ``@pytest.mark.needs(present, what)`` (tests/conftest.py)
or ``need(present, what)`` inside a test."""
import pytest


def need(present, what: str) -> None:
    if not present:
        pytest.fail(f"needs {what}, which is missing (./dev.sh setup installs it)", pytrace=False)
