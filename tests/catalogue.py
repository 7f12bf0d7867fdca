"""A shared catalogue of small scalar functions that every derivative path must get right.

Each function is plain, undecorated Python at module level so that the compiler
reads it through its own source. Every `Case` pairs a function with arguments
chosen inside the function's math domain and away from points where it is not
smooth (branch boundaries, the kink of `abs`, jumps of `floor` and of `%`, a
change of a data-dependent trip count), so that central finite differences are
a valid reference there. `float32_ok` marks cases that are well conditioned
enough to be evaluated in float32 as well.

Floats are differentiated; int and bool parameters are not (they steer loops
and branches).
"""

import math
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Case:
    """One function and one argument tuple at which to check its derivative."""

    name: str
    fn: Callable
    args: tuple
    float32_ok: bool = False


# --- straight-line code -------------------------------------------------------------------


def polynomial(x, y):
    return x**3 - 2.0 * x * y + y**2 - 7.0


def rational(x, y):
    return (x + 1.0) / (y * y + 1.0) - x / y


def unary_minus(x, y):
    return -x * -y + -((x - y) ** 2) - (-x)


def constants_only_scale(x, y):
    c = 3.0
    c = c * 2.0
    return c * x + y / c


def reassigned_parameters(x, y):
    x = x * 2.0
    y = y + x
    x = x * y
    return x + y


def augmented_assignment(x, y):
    s = x
    s += y
    s *= x
    s -= 1.5
    s /= y
    s **= 2
    return s


def tuple_swap(x, y):
    a, b = x, y
    a, b = b, a * 2.0
    a, b = b - a, a
    return a * b + a


def tuple_unpacking(x, y):
    s, p = x + y, x * y
    d, q = s - p, s / p
    return d * q


def variable_reused_after_overwrite(x, y):
    t = x * y
    u = t + x
    t = t * t
    return u * t - t


def modulo(x, y):
    # (x % 1.5) has slope 1 in x; (y % x) = y - floor(y / x) * x has slope -floor(y / x) in x.
    return (x % 1.5) * y + (y % x)


def floor_division(x, y):
    q = x // y
    return q * x + y * y + x / y


def float_power(x, y):
    return x**y + y**1.5


def int_power(x, n):
    return x**n + n * x


def negative_int_power(x):
    return x**-2 + 3.0 * x**-1


def constant_base_power(x):
    return 2.0**x + 10.0 ** (-x)


def int_parameter_arithmetic(x, n, m):
    return (x * n + m) ** 2 / (n - m * x)


def float_of_int(x, n):
    return float(n) * x + float(n * n) / x


def alias_of_reassigned_parameter(x, y):
    z = x
    x = x * y
    x = -x
    return z * x + z


def negative_base_constant_exponent(x):
    # Only the base is active, so no log(base) may be taken for the exponent's derivative.
    return x**2.0 + x**3 + math.pow(x, 2.0)


def int_over_float(x, n):
    return n / x + float(n) ** x - (n // 2) * x


def print_straight_line(x, y):
    print("inputs", x, y)
    return x * y + x


# --- math rules: one function per rule, each through the chain rule -------------------------


def math_sin(x, y):
    return math.sin(x * y) + x


def math_cos(x, y):
    return math.cos(x * x + y)


def math_tan(x, y):
    return math.tan(x) * y


def math_asin(x, y):
    return math.asin(x * y)


def math_acos(x, y):
    return math.acos(x - y)


def math_atan(x, y):
    return math.atan(x / y)


def math_atan2(x, y):
    return math.atan2(y, x)


def math_sinh(x, y):
    return math.sinh(x) * y


def math_cosh(x, y):
    return math.cosh(x - y)


def math_tanh(x, y):
    return math.tanh(x * y)


def math_asinh(x, y):
    return math.asinh(x * y) - x


def math_acosh(x, y):
    return math.acosh(x + y)


def math_atanh(x, y):
    return math.atanh(x * y)


def math_exp(x, y):
    return math.exp(x * y) - x


def math_expm1(x, y):
    return math.expm1(x) / y


def math_exp2(x, y):
    return math.exp2(x) * y


def math_log(x, y):
    return math.log(x * y)


def math_log_base(x, y):
    return math.log(x, y)


def math_log1p(x, y):
    return math.log1p(x * y)


def math_log2(x, y):
    return math.log2(x + y)


def math_log10(x, y):
    return math.log10(x * y)


def math_sqrt(x, y):
    return math.sqrt(x * x + y)


def math_pow(x, y):
    return math.pow(x, y)


def math_hypot(x, y):
    return math.hypot(x, y)


def math_erf(x, y):
    return math.erf(x * y)


def math_erfc(x, y):
    return math.erfc(x - y)


def math_fabs(x, y):
    return math.fabs(x - y) * x


def math_copysign(x, y):
    # The magnitude comes from x; y only contributes its sign (slope 0) and the added y.
    return math.copysign(x * x, y) + y


def math_cbrt(x, y):
    return math.cbrt(x * y)


def math_degrees(x, y):
    return math.degrees(x) * y


def math_radians(x, y):
    return math.radians(x * y)


def math_fmod(x, y):
    return math.fmod(x, y) * x


def builtin_abs(x, y):
    return abs(x - y) + abs(x * y)


def builtin_min(x, y):
    return min(x, y) * 2.0 + min(x * x, y * y)


def builtin_max(x, y):
    return max(x * y, x + y) + max(x, 0.5)


def builtin_min_max_three_arguments(x, y):
    return max(x, y, 1.5) * x + min(x * y, y, 2.0)


def builtin_float(x, y):
    return float(x) * y + float(y)


def builtin_pow(x, y):
    return pow(x, y) + pow(x, 2)


def math_floor(x, y):
    return math.floor(x) * y + x


def math_ceil(x, y):
    return math.ceil(x * y) * x + y


def math_trunc(x, y):
    return math.trunc(-x * y) * y + x


def builtin_round(x, y):
    return round(x) * y + x


def builtin_int(x, y):
    return int(x * 3.0) * y + x * y


# --- branches -----------------------------------------------------------------------------


def if_else(x, y):
    if x > y:
        r = x * y
    else:
        r = x + y
    return r * r


def if_elif_else(x):
    if x < -1.0:
        r = -x * x
    elif x < 1.0:
        r = math.sin(x) * 3.0
    else:
        r = math.log(x) + x
    return r


def if_without_else(x, y):
    r = x
    if y > 0.0:
        r = r * y
    return r + y


def conditional_expression(x, y):
    r = x * y if x > 0.0 else -x * y
    return r + (y if y > x else x * x)


def and_short_circuit(x, y):
    if x > 0.0 and y > 0.0:
        return x * y
    return x - y


def or_short_circuit(x, y):
    if x < 0.0 or y > 1.0:
        r = x * x * y
    else:
        r = x + y
    return r


def not_condition(x):
    if not x > 1.0:
        return x**3
    return 2.0 * x


def chained_comparison(x, y):
    if 0.0 < x < y:
        return x * y
    return x + y


def comparison_stored_in_variable(x, y):
    big = x > 1.0 and y > 1.0
    if big:
        return x * y * y
    return x + y


def nested_if(x, y):
    if x > 0.0:
        if y > 0.0:
            r = x * y
        else:
            r = x - y * y
    else:
        r = math.exp(x) * y
    return r


def branch_on_int(x, n):
    if n % 2 == 0:
        return x**n
    return -x * n


def branch_on_bool(x, y, flag):
    return x * y if flag else x / y


def branch_defines_variables(x, y):
    if x > y:
        a = math.sin(x)
        b = y
    else:
        a = y
        b = math.cos(x)
    return a * b


def early_return_in_branch(x, y):
    if x > 1.0:
        return x * x * y
    r = x * y
    if r > 0.5:
        return r + y
    return r - y


# --- for loops over range -----------------------------------------------------------------


def horner(x, n):
    s = 0.0
    for i in range(n):
        s = s * x + (i + 1)
    return s


def range_start_stop_step(x, y):
    s = 0.0
    for i in range(1, 10, 3):
        s += x**i * y
    return s


def range_negative_step(x, n):
    s = 0.0
    for i in range(n, 0, -1):
        s = s * x + 1.0 / i
    return s


def range_negative_step_by_two(x, y):
    s = 0.0
    for i in range(9, -3, -2):
        s += math.sin(i * x) * y
    return s


def empty_range(x, y):
    s = x * y
    for _ in range(0):
        s = s * 100.0
    for _ in range(5, 2):
        s += x
    return s + x


def empty_range_int_bounds(x, n, m):
    s = x
    for i in range(n, m):
        s = s * x * i
    return s * 2.0


def accumulator_starts_as_int(x, n):
    s = 0
    for i in range(n):
        s += x * i
    return s


def loop_product(x, n):
    p = 1.0
    for i in range(n):
        p *= x + i
    return p


def loop_reassigns_parameter(x, n):
    for _ in range(n):
        x = math.sin(x) + 0.5 * x
    return x


def loop_carried_pair(x, y, n):
    a, b = x, y
    for _ in range(n):
        a, b = b, a + b * 0.5
    return a * b


def loop_index_as_float(x):
    s = 0.0
    for k in range(1, 6):
        s += math.cos(k * x) / k
    return s


def loop_with_data_branch(x, n):
    s = 0.0
    for _ in range(n):
        if s < 2.0:
            s += x * x
        else:
            s -= 0.1 * x
    return s


def long_loop(x, n):
    s = 0.0
    for _ in range(n):
        s = math.sin(s + x)
    return s


def loop_bound_from_float(x):
    # int(x) fixes the trip count (not differentiated); the body is differentiated.
    s = x
    for i in range(int(x) * 2 + 1):
        s = s * 0.9 + x / (i + 1)
    return s


def loop_variable_used_after_loop(x, n):
    last = 0.0
    for i in range(n):
        last = x * i
    return last * x + i


def nested_loops(x, y, n, m):
    s = 0.0
    for i in range(n):
        for j in range(m):
            s += x**i * y**j / (i + j + 1)
    return s


def triangular_loops(x, y, n):
    s = 0.0
    for i in range(n):
        for j in range(i):
            s += x * y / (i + j + 1) + x**j
    return s


def nested_loop_inner_break(x, n):
    s = 0.0
    for i in range(n):
        t = 1.0
        for _ in range(10):
            t *= x
            if t > 2.0 + i:
                break
        s += t
    return s


def break_on_data(x, y):
    s = 0.0
    for i in range(100):
        s += x * (i + 1)
        if s > 7.0:
            break
    return s * y


def continue_on_index(x, n):
    s = 0.0
    for i in range(n):
        if i % 3 == 1:
            continue
        s = s * x + i
    return s


def continue_on_data(x, y):
    s = 0.0
    for i in range(8):
        t = math.sin(i * x)
        if t < 0.0:
            continue
        s += t * y
    return s


def break_and_continue(x, n):
    s = 1.0
    for i in range(n):
        if i == 1:
            continue
        s = s * x + 0.25
        if s > 50.0:
            break
    return s


def return_inside_loop(x, y):
    s = y
    for i in range(20):
        s = s * x + 1.0
        if s > 10.0:
            return s - i
    return -s


def return_inside_nested_loop(x, n):
    s = 0.0
    for i in range(n):
        for j in range(i + 1):
            s += x * (j + 1)
            if s > 6.0:
                return s * s
    return s


def print_in_loop(x, n):
    s = x
    for i in range(n):
        print("step", i, s)
        s = s * x + 1.0
    return s


# --- while loops --------------------------------------------------------------------------


def while_data_dependent(x, y):
    n = 0
    while x < 10.0:
        x = x * 1.7 + y
        n += 1
    return x + n


def while_counter(x, n):
    i = 0
    s = 1.0
    while i < n:
        s = s * x + 0.5
        i += 1
    return s


def while_true_break(x):
    t = x
    k = 0
    while True:
        t = t * t + 0.1
        k += 1
        if t > 5.0 or k > 50:
            break
    return t / k


def while_continue(x, y):
    i = 0
    s = 0.0
    while i < 6:
        i += 1
        if i == 3:
            continue
        s += x**i * y
    return s


def while_newton_sqrt(a):
    g = a
    while abs(g * g - a) > 1e-6 * a:
        g = 0.5 * (g + a / g)
    return g


def while_return_inside(x, y):
    s = x
    while s < 100.0:
        s = s * y
        if s > 20.0:
            return s + x
    return s


def while_never_runs(x, y):
    while x > 100.0:
        x = x * 0.5
    return x * y


def while_many_iterations(x):
    # About 700 trips: the tape for a data-dependent trip count has to grow.
    s = 0.0
    k = 0
    while s < 50.0:
        s = s + x * (1.0 + 0.01 * math.sin(s))
        k += 1
    return s - k * x


def while_inside_for(x, n):
    s = 0.0
    for i in range(n):
        t = x
        while t < i + 2.0:
            t = t * 1.5 + 0.1
        s += t
    return s


# --- calls to other functions -------------------------------------------------------------


def _square(t):
    return t * t


def _sum_of_squares(a, b):
    return _square(a) + _square(b)


def _polar_to_cartesian(r, theta):
    return r * math.cos(theta), r * math.sin(theta)


def _rotated(px, py, angle):
    c, s = math.cos(angle), math.sin(angle)
    return c * px - s * py, s * px + c * py


def _clamped_power(t, n):
    if t > 1.0:
        return t
    p = 1.0
    for _ in range(n):
        p *= t
    return p


def _softplus(t):
    return math.log1p(math.exp(t))


def _reassigns_and_returns_early(t, k):
    for i in range(k):
        t = t * 1.5
        if t > 4.0:
            return t - i
    return -t


def _from_lambda(t):
    return sq(t) + 1.0


def call_chain(x, y):
    return _sum_of_squares(x * y, x - y) + _square(y)


def call_returns_tuple(r, theta):
    px, py = _polar_to_cartesian(r, theta)
    return px * py + px


def call_tuple_through_tuple(r, theta, angle):
    px, py = _polar_to_cartesian(r, theta)
    qx, qy = _rotated(px, py, angle)
    return qx * qx - qy + py


def call_with_int_and_loop(x, n):
    return _clamped_power(x, n) + _clamped_power(x * 0.5, n + 1) + _clamped_power(x * 3.0, n)


def call_in_loop(x, n):
    s = 0.0
    for i in range(n):
        s += _square(x + i) / (i + 1)
    return s


def call_in_branch(x, y):
    if x > y:
        return _softplus(x - y)
    return _softplus(y * x)


def call_same_callee_int_and_float(x, n):
    return _square(x) * _square(n) + _square(x * n)


def call_callee_with_early_return_in_loop(x, n):
    return _reassigns_and_returns_early(x, n) + _reassigns_and_returns_early(x * 0.1, n)


def call_callee_using_lambda(x):
    return _from_lambda(x) * _from_lambda(x + 1.0)


def call_result_reused(x):
    t = _softplus(x)
    return t * t + t


# --- lambdas and nested defs --------------------------------------------------------------

sq = lambda t: t * t
scaled_sin = lambda t, k: k * math.sin(t)
gaussian_times = lambda x, y: math.exp(-x * x) * y


def call_module_lambda(x, y):
    return sq(x) + scaled_sin(y, x)


def nested_def(x, y):
    def inner(a, b):
        return a * math.sin(b)

    return inner(x, y) + inner(y, x)


def nested_def_with_loop(x, n):
    def step(s, t):
        return s * 0.5 + t * t

    s = 0.0
    for i in range(n):
        s = step(s, x + i)
    return s


def nested_def_returning_tuple(x, y):
    def split(t):
        return t * t, math.exp(-t)

    a, b = split(x)
    c, d = split(y)
    return a * d + b * c


def nested_def_closure(x, y):
    def scaled(t):
        return t * y

    return scaled(x) * x


# --- harder cases: overwrites inside iterations, zero gradients, mixed control -------------


def identity(x):
    return x


def constant_result(x):
    return 3.0


def ignores_one_parameter(x, y):
    return x * 2.0


def early_return_constant(x, y):
    if x > 5.0:
        return 1.0
    return x * y


def self_cancelling(x, y):
    return (x - x) * y + x / x + y * x / x


def deep_composition(x):
    return math.sin(math.cos(math.exp(x))) * math.sqrt(math.log1p(x * x))


def negative_base_int_exponent(x, n):
    return x**n + math.pow(x, n) + x**3


def math_log_int_base(x):
    return math.log(x, 10) + math.log(x * x, 2)


def math_hypot_three_arguments(x, y):
    return math.hypot(x, y, 2.0)


def overwrite_within_iteration(x, n):
    s = 0.0
    for i in range(n):
        t = x * (i + 1)
        s += t * t
        t = math.sin(t)
        s += t
    return s


def loop_squares_carried_value(x, n):
    s = x
    for _ in range(n):
        s = s * s * 0.5 + 0.3
    return s


def loop_branch_switches_variable(x, y, n):
    a, b = x, y
    for i in range(n):
        if i % 2 == 0:
            a = a * x + b
        else:
            b = b * 0.5 + a * y
    return a - b


def loop_swap_each_iteration(x, y, n):
    a, b = x, y
    for _ in range(n):
        a, b = b, a
        a = a * 1.1 + b
    return a * b


def loop_all_augmented_operators(x, n):
    s = x
    for i in range(n):
        s += x
        s -= 0.1 * i
        s *= 1.05
        s /= 1.0 + x
        s **= 1.1
    return s


def loop_selection_changes(x, y, n):
    s = 0.0
    for i in range(n):
        s += min(x * i, y) + max(x - i, 0.1 * y) + abs(x - i)
    return s


def loop_power_active_exponent(x, y, n):
    s = 0.0
    for i in range(1, n):
        s += x ** (y * i)
    return s


def nested_loop_break_and_continue(x, n):
    s = 0.0
    for i in range(n):
        for j in range(n):
            if j == i:
                continue
            if j > i + 2:
                break
            s += x ** (i + j) / (1.0 + j)
    return s


def negative_step_with_break(x):
    s = 1.0
    for i in range(10, 0, -1):
        s = s * x + i
        if s > 30.0:
            break
    return s


def for_with_early_return_in_while(x, n):
    s = x
    for i in range(n):
        while s < 2.0 + i:
            s = s * 1.3
            if s > 3.5:
                return s * x
    return s + x


def while_condition_counter_and_data(x, n):
    i = 0
    s = 0.0
    while i < n and s < 10.0:
        s = s + x * i
        i += 1
    return s * x


def int_parameter_reassigned(x, n):
    n = n + 2
    s = 0.0
    for i in range(n):
        s += x / (i + n)
    return s


def call_in_while(x):
    s = x
    while s < 40.0:
        s = _square(s) + 0.5
    return s


def call_tuple_in_loop(r, theta, n):
    s = 0.0
    for i in range(n):
        px, py = _polar_to_cartesian(r, theta * i)
        s += px * py
    return s


def call_repeated_composition(x):
    return _softplus(_softplus(_softplus(x)))


def call_same_argument_twice(x, y):
    return _sum_of_squares(x, x) * _sum_of_squares(y, x)


# --- the catalogue ------------------------------------------------------------------------

CATALOGUE: list[Case] = [
    # straight-line
    Case("polynomial", polynomial, (1.3, -0.7), float32_ok=True),
    Case("rational", rational, (0.8, 1.9), float32_ok=True),
    Case("unary_minus", unary_minus, (1.2, 0.4)),
    Case("constants_only_scale", constants_only_scale, (0.3, 2.2)),
    Case("reassigned_parameters", reassigned_parameters, (0.6, 1.1)),
    Case("augmented_assignment", augmented_assignment, (0.9, 1.6), float32_ok=True),
    Case("tuple_swap", tuple_swap, (1.4, -0.3)),
    Case("tuple_unpacking", tuple_unpacking, (1.2, 0.7)),
    Case("variable_reused_after_overwrite", variable_reused_after_overwrite, (0.7, 1.3)),
    Case("modulo", modulo, (2.3, 5.2)),
    Case("floor_division", floor_division, (7.3, 2.1)),
    Case("float_power", float_power, (1.7, 2.3)),
    Case("int_power", int_power, (1.3, 4)),
    Case("negative_int_power", negative_int_power, (1.6,)),
    Case("constant_base_power", constant_base_power, (0.7,)),
    Case("int_parameter_arithmetic", int_parameter_arithmetic, (0.8, 3, 2)),
    Case("float_of_int", float_of_int, (1.1, 3)),
    Case("alias_of_reassigned_parameter", alias_of_reassigned_parameter, (0.7, 1.6)),
    Case("negative_base_constant_exponent", negative_base_constant_exponent, (-1.3,)),
    Case("int_over_float", int_over_float, (1.4, 5)),
    Case("print_straight_line", print_straight_line, (0.5, 1.5)),
    # math rules
    Case("math_sin", math_sin, (0.9, 1.3), float32_ok=True),
    Case("math_cos", math_cos, (0.7, 0.4)),
    Case("math_tan", math_tan, (0.6, 1.4)),
    Case("math_asin", math_asin, (0.4, 0.9)),
    Case("math_acos", math_acos, (0.5, 0.2)),
    Case("math_atan", math_atan, (1.2, 0.7)),
    Case("math_atan2", math_atan2, (-0.8, 0.6)),
    Case("math_sinh", math_sinh, (0.8, 1.2)),
    Case("math_cosh", math_cosh, (1.1, 0.3)),
    Case("math_tanh", math_tanh, (0.6, 0.9)),
    Case("math_asinh", math_asinh, (1.5, -0.8)),
    Case("math_acosh", math_acosh, (1.3, 0.6)),
    Case("math_atanh", math_atanh, (0.5, 0.8)),
    Case("math_exp", math_exp, (0.6, 1.1), float32_ok=True),
    Case("math_expm1", math_expm1, (0.01, 1.3)),
    Case("math_exp2", math_exp2, (1.3, 0.6)),
    Case("math_log", math_log, (1.7, 0.9), float32_ok=True),
    Case("math_log_base", math_log_base, (5.0, 3.0)),
    Case("math_log1p", math_log1p, (0.3, 0.7)),
    Case("math_log2", math_log2, (1.3, 0.9)),
    Case("math_log10", math_log10, (2.5, 1.6)),
    Case("math_sqrt", math_sqrt, (1.2, 0.5), float32_ok=True),
    Case("math_pow", math_pow, (1.8, 1.3)),
    Case("math_hypot", math_hypot, (3.0, 4.0)),
    Case("math_erf", math_erf, (0.7, 0.8)),
    Case("math_erfc", math_erfc, (1.1, 0.4)),
    Case("math_fabs", math_fabs, (0.5, 1.7)),
    Case("math_copysign", math_copysign, (1.1, -0.7)),
    Case("math_cbrt", math_cbrt, (1.5, -2.0)),
    Case("math_degrees", math_degrees, (0.4, 1.3)),
    Case("math_radians", math_radians, (30.0, 1.5)),
    Case("math_fmod", math_fmod, (7.3, 2.1)),
    Case("builtin_abs", builtin_abs, (0.5, -1.2)),
    Case("builtin_min", builtin_min, (0.5, -1.2)),
    Case("builtin_max", builtin_max, (0.8, 1.9)),
    Case("builtin_min_max_three_arguments", builtin_min_max_three_arguments, (0.8, 1.9)),
    Case("builtin_float", builtin_float, (0.6, 2.4)),
    Case("builtin_pow", builtin_pow, (1.4, 2.2)),
    Case("math_floor", math_floor, (2.7, 1.3)),
    Case("math_ceil", math_ceil, (1.3, 1.9)),
    Case("math_trunc", math_trunc, (1.3, 1.9)),
    Case("builtin_round", builtin_round, (2.3, 0.8)),
    Case("builtin_int", builtin_int, (1.1, 0.7)),
    # branches (several functions are checked on every branch they have)
    Case("if_else_true", if_else, (2.0, 1.0)),
    Case("if_else_false", if_else, (0.5, 1.5)),
    Case("if_elif_else_first", if_elif_else, (-2.0,)),
    Case("if_elif_else_middle", if_elif_else, (0.3,)),
    Case("if_elif_else_last", if_elif_else, (1.7,)),
    Case("if_without_else_taken", if_without_else, (0.7, 1.3)),
    Case("if_without_else_skipped", if_without_else, (0.7, -1.3)),
    Case("conditional_expression_positive", conditional_expression, (0.7, 1.4)),
    Case("conditional_expression_negative", conditional_expression, (-0.5, -1.2)),
    Case("and_short_circuit_true", and_short_circuit, (1.2, 0.5)),
    Case("and_short_circuit_false", and_short_circuit, (1.2, -0.5)),
    Case("or_short_circuit_true", or_short_circuit, (0.4, 1.5)),
    Case("or_short_circuit_false", or_short_circuit, (0.4, 0.5)),
    Case("not_condition_taken", not_condition, (0.6,)),
    Case("not_condition_skipped", not_condition, (1.6,)),
    Case("chained_comparison_inside", chained_comparison, (0.5, 1.5)),
    Case("chained_comparison_outside", chained_comparison, (1.5, 0.5)),
    Case("comparison_stored_in_variable", comparison_stored_in_variable, (1.3, 1.6)),
    Case("nested_if_positive_positive", nested_if, (0.8, 0.6)),
    Case("nested_if_positive_negative", nested_if, (0.8, -0.6)),
    Case("nested_if_negative", nested_if, (-0.8, 0.6)),
    Case("branch_on_int_even", branch_on_int, (1.2, 4)),
    Case("branch_on_int_odd", branch_on_int, (1.2, 3)),
    Case("branch_on_bool_true", branch_on_bool, (0.9, 1.7, True)),
    Case("branch_on_bool_false", branch_on_bool, (0.9, 1.7, False)),
    Case("branch_defines_variables_then", branch_defines_variables, (1.5, 0.5)),
    Case("branch_defines_variables_else", branch_defines_variables, (0.5, 1.5)),
    Case("early_return_in_branch_first", early_return_in_branch, (1.5, 0.7)),
    Case("early_return_in_branch_second", early_return_in_branch, (0.8, 1.2)),
    Case("early_return_in_branch_fallthrough", early_return_in_branch, (0.4, 0.6)),
    # for loops
    Case("horner", horner, (0.7, 6), float32_ok=True),
    Case("range_start_stop_step", range_start_stop_step, (0.9, 1.3)),
    Case("range_negative_step", range_negative_step, (0.8, 5)),
    Case("range_negative_step_by_two", range_negative_step_by_two, (0.3, 1.2)),
    Case("empty_range", empty_range, (0.6, 1.4)),
    Case("empty_range_int_bounds", empty_range_int_bounds, (0.6, 4, 2)),
    Case("accumulator_starts_as_int", accumulator_starts_as_int, (0.6, 5)),
    Case("loop_product", loop_product, (0.4, 5)),
    Case("loop_reassigns_parameter", loop_reassigns_parameter, (0.7, 6)),
    Case("loop_carried_pair", loop_carried_pair, (0.6, 0.9, 7)),
    Case("loop_index_as_float", loop_index_as_float, (0.45,), float32_ok=True),
    Case("loop_with_data_branch", loop_with_data_branch, (0.9, 6)),
    Case("long_loop", long_loop, (0.3, 1000)),
    Case("loop_bound_from_float", loop_bound_from_float, (3.4,)),
    Case("loop_variable_used_after_loop", loop_variable_used_after_loop, (0.7, 4)),
    Case("nested_loops", nested_loops, (0.8, 1.1, 4, 3)),
    Case("triangular_loops", triangular_loops, (0.7, 1.3, 5)),
    Case("nested_loop_inner_break", nested_loop_inner_break, (1.3, 4)),
    Case("break_on_data", break_on_data, (0.45, 1.3)),
    Case("continue_on_index", continue_on_index, (0.8, 7)),
    Case("continue_on_data", continue_on_data, (0.7, 1.3)),
    Case("break_and_continue_breaks", break_and_continue, (3.1, 10)),
    Case("break_and_continue_runs_out", break_and_continue, (1.1, 6)),
    Case("return_inside_loop", return_inside_loop, (1.3, 0.5)),
    Case("return_inside_loop_fallthrough", return_inside_loop, (0.5, 0.5)),
    Case("return_inside_nested_loop", return_inside_nested_loop, (0.7, 5)),
    Case("return_inside_nested_loop_fallthrough", return_inside_nested_loop, (0.25, 4)),
    Case("print_in_loop", print_in_loop, (0.8, 3)),
    # while loops
    Case("while_data_dependent", while_data_dependent, (1.1, 0.3)),
    Case("while_counter", while_counter, (0.9, 5)),
    Case("while_true_break", while_true_break, (1.05,)),
    Case("while_continue", while_continue, (0.9, 1.2)),
    Case("while_newton_sqrt", while_newton_sqrt, (2.7,)),
    Case("while_return_inside", while_return_inside, (1.3, 1.7)),
    Case("while_never_runs", while_never_runs, (1.5, 0.4)),
    Case("while_many_iterations", while_many_iterations, (0.072,)),
    Case("while_inside_for", while_inside_for, (0.9, 4)),
    # calls
    Case("call_chain", call_chain, (0.8, 1.3)),
    Case("call_returns_tuple", call_returns_tuple, (1.5, 0.6)),
    Case("call_tuple_through_tuple", call_tuple_through_tuple, (1.2, 0.4, 0.9)),
    Case("call_with_int_and_loop", call_with_int_and_loop, (0.8, 3)),
    Case("call_in_loop", call_in_loop, (0.6, 4)),
    Case("call_in_branch_then", call_in_branch, (1.4, 0.3)),
    Case("call_in_branch_else", call_in_branch, (0.3, 1.4)),
    Case("call_same_callee_int_and_float", call_same_callee_int_and_float, (0.7, 3)),
    Case("call_callee_with_early_return_in_loop", call_callee_with_early_return_in_loop, (0.9, 6)),
    Case("call_callee_using_lambda", call_callee_using_lambda, (0.6,)),
    Case("call_result_reused", call_result_reused, (0.4,), float32_ok=True),
    # lambdas and nested defs
    Case("call_module_lambda", call_module_lambda, (0.7, 1.2)),
    Case("module_lambda_itself", gaussian_times, (0.6, 1.8)),
    Case("nested_def", nested_def, (0.7, 1.2)),
    Case("nested_def_with_loop", nested_def_with_loop, (0.3, 4)),
    Case("nested_def_returning_tuple", nested_def_returning_tuple, (0.7, 1.9)),
    Case("nested_def_closure", nested_def_closure, (0.7, 1.9)),
    # harder cases
    Case("identity", identity, (0.9,)),
    Case("constant_result", constant_result, (0.9,)),
    Case("ignores_one_parameter", ignores_one_parameter, (0.9, 1.4)),
    Case("early_return_constant_taken", early_return_constant, (6.0, 1.4)),
    Case("early_return_constant_skipped", early_return_constant, (0.6, 1.4)),
    Case("self_cancelling", self_cancelling, (0.7, 1.9)),
    Case("deep_composition", deep_composition, (0.8,)),
    Case("negative_base_int_exponent", negative_base_int_exponent, (-1.3, 3)),
    Case("math_log_int_base", math_log_int_base, (3.7,)),
    Case("math_hypot_three_arguments", math_hypot_three_arguments, (1.2, -0.8)),
    Case("overwrite_within_iteration", overwrite_within_iteration, (0.4, 5)),
    Case("loop_squares_carried_value", loop_squares_carried_value, (0.9, 6)),
    Case("loop_branch_switches_variable", loop_branch_switches_variable, (0.7, 0.6, 7)),
    Case("loop_swap_each_iteration", loop_swap_each_iteration, (0.7, 1.3, 5)),
    Case("loop_all_augmented_operators", loop_all_augmented_operators, (0.8, 4)),
    Case("loop_selection_changes", loop_selection_changes, (1.3, 1.9, 5)),
    Case("loop_power_active_exponent", loop_power_active_exponent, (1.2, 0.7, 5)),
    Case("nested_loop_break_and_continue", nested_loop_break_and_continue, (0.9, 6)),
    Case("negative_step_with_break", negative_step_with_break, (1.7,)),
    Case("for_with_early_return_in_while", for_with_early_return_in_while, (1.1, 4)),
    Case("for_with_early_return_in_while_fallthrough", for_with_early_return_in_while, (1.1, 1)),
    Case("while_condition_counter_and_data", while_condition_counter_and_data, (0.9, 8)),
    Case("while_condition_counter_and_data_by_count", while_condition_counter_and_data, (0.3, 6)),
    Case("int_parameter_reassigned", int_parameter_reassigned, (0.8, 3)),
    Case("call_in_while", call_in_while, (1.3,)),
    Case("call_tuple_in_loop", call_tuple_in_loop, (1.4, 0.3, 5)),
    Case("call_repeated_composition", call_repeated_composition, (0.2,)),
    Case("call_same_argument_twice", call_same_argument_twice, (0.7, 1.1)),
]
