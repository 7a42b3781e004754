import pytest


@pytest.fixture(scope="session")
def ipython_shell():
    """IPython's one global test shell: started by the first test module that asks, shared after
    (``start_ipython`` returns None on a second call)."""
    from IPython.testing import globalipapp

    return globalipapp.start_ipython() or globalipapp.get_ipython()
