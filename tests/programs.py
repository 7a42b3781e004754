"""What several test files share: the lessons' two classic examples, random arrays."""
import numpy as np


# A value used twice: one node in graph binding, recomputed in a naive tree walk.
LOG_TWICE = '''\
def f(x: Tensor[(8,), f32]):
    y = log(x)
    return y + y
'''

# An if/else on a bool scalar: the let view's nested scopes.
BRANCHY = '''\
def {name}(x: Tensor[(4,), f32]):
    s = sum(x)
    if s > 0.0:
        y = relu(x * 2.0)
    else:
        y = -x
    return y
'''


def random_array(rng, shape, dtype="float32", low=-2.0, high=2.0):
    """Random test data of any dtype: uniform floats, fair bools, small ints of both signs."""
    if np.dtype(dtype).kind == "f":
        return rng.uniform(low, high, size=shape).astype(dtype)
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    return rng.integers(-9, 10, size=shape).astype(dtype)

# Issue 19's line-link case: two functions binding the same name, one calling the other.
SAME_NAME_CALLS = '''def g(a: Tensor[(4,), f32]):
    y = log(a)
    return y

def main(x: Tensor[(4,), f32]):
    y = exp(x)
    return g(y)
'''
