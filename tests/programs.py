"""DSL programs several test files share: the lessons' two classic examples."""

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
