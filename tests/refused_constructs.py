"""One small function per construct that s2s_ad refuses (SPEC section 1).

Each offending line carries the comment ``# <- here``; tests/api/test_errors.py
finds it to know which line (and, through a marker substring, which column)
the error must point at.  Nothing here is meant to run: these functions exist
to be handed to the compiler.
"""

import math

COUNTER = 0.0


def add2(a, b):
    return a + b


def uses_try(x):
    try:  # <- here
        y = x * 2.0
    except ValueError:
        y = x
    return y


def uses_try_finally(x):
    y = x
    try:  # <- here
        y = x * 2.0
    finally:
        y = y + 1.0
    return y


def uses_with(x, lock):
    with lock:  # <- here
        y = x * 2.0
    return y


def uses_yield(x):
    yield x * 2.0  # <- here


def uses_yield_from(x):
    yield from (x, x)  # <- here


def uses_global_write(x):
    global COUNTER  # <- here
    COUNTER = x
    return x * 2.0


def uses_nonlocal(x):
    total = 0.0

    def add(v):
        nonlocal total  # <- here
        total = total + v

    add(x)
    return total


def uses_nested_async_def(x):
    async def twice(v):  # <- here
        return v * 2.0

    return x


def uses_await(x):
    y = x * 2.0

    async def later(v):  # <- here
        return await v

    return y


def uses_class(x):
    class Box:  # <- here
        pass

    return x * 2.0


def uses_del(x):
    y = x * 2.0
    z = y + 1.0
    del y  # <- here
    return z


def uses_match(x, n):
    match n:  # <- here
        case 0:
            y = x
        case _:
            y = x * 2.0
    return y


def uses_starred_call(x):
    pair = (x, x)
    return add2(*pair)  # <- here


def uses_starred_assignment(x):
    a, *b = (x, x, x)  # <- here
    return a * b[0]


def uses_double_star_call(x, options):
    return add2(x, **options)  # <- here


def uses_import(x):
    import cmath  # <- here

    return x * cmath.pi.real


def uses_import_from(x):
    from math import sin  # <- here

    return sin(x)


def uses_list_pop(x):
    v = [x * k for k in range(3)]
    return v.pop()  # <- here


def uses_set_comprehension(x):
    return len({x * k for k in range(3)})  # <- here


def uses_dict_comprehension(x):
    return len({k: x for k in range(3)})  # <- here


def uses_list_item_write(x):
    v = [x * k for k in range(3)]
    v[0] = x  # <- here
    return sum(v)


def uses_walrus(x):
    if (y := x * 2.0) > 1.0:  # <- here
        return y
    return x


def uses_dict_literal(x):
    d = {1: x}  # <- here
    return x * 2.0 + len(d)


def uses_set_literal(x):
    s = {x}  # <- here
    return x * 2.0 + len(s)


def uses_list_returned(x):
    v = [x, x]
    v.append(x)
    return v  # <- here


def uses_for_else(x, n):
    s = x
    for i in range(n):  # <- here
        s = s * x + i
    else:
        s = s + 1.0
    return s


def uses_while_else(x):
    s = x
    while s < 10.0:  # <- here
        s = s * 2.0
    else:
        s = s + 1.0
    return s


def uses_decorated_nested_def(x):
    @staticmethod
    def twice(v):  # <- here
        return v * 2.0

    return twice(x)


def uses_variadic_params(*args):  # <- here
    return args[0] * 2.0


def uses_keyword_arguments_dict(x, **options):  # <- here
    return x * 2.0


def uses_c_function_without_rule(x):
    return math.gamma(x) * 2.0  # <- here


def uses_c_function_as_the_result(x):
    return math.gamma(x)  # <- here


def uses_c_function_in_an_assignment(x):
    y = math.gamma(x)  # <- here
    return y * 2.0


def uses_c_function_inside_an_expression(x):
    y = 1.0 + x * math.gamma(x + 1.0)  # <- here
    return y


def fact(x, n):
    return x if n == 0 else x * fact(x, n - 1)  # <- here


def calls_a_function_with_try(x):
    return 2.0 * uses_try(x)


def ping(x, n):
    return x if n == 0 else pong(x, n - 1)


def pong(x, n):
    return ping(x, n) * 2.0  # <- here


dict_in_a_lambda = lambda x: {0: x}[0] * 2.0  # <- here


def uses_undefined_name(x):
    return x * undefined_function(x)  # noqa: F821  # <- here


def returns_a_number_or_an_array(x, values):
    if x < 0.0:
        return 0.0
    return values * x  # <- here


def writes_into_a_nested_list(x):
    # found by the HVP fuzzer (seed 72001121): a raw AttributeError, not a located error
    rows = [[-2.0, x * x], 0.5]
    first = rows[0]
    first[-1] = math.sin(x)  # <- here
    (a, b), c = rows
    return a + b * c
