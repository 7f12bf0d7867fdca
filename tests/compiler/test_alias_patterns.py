"""Array patterns that an alias analysis must accept (issue 23): module constants in
tuples and lists, in-place operators on argument arrays, double buffering, views
rebound and written, writes around calls.  Each in both paths, against finite
differences; the refusals that remain name what makes the write unsafe."""

import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad.testing import check_grads

PATHS = pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])

# -- module constants in tuples and lists ----------------------------------------------

LAYER_GAINS = (0.5, 1.5)
STAGE_WEIGHTS = [1.0, 2.0, -0.5]


def gated_response(signal):
    return np.sum(np.tanh(signal * LAYER_GAINS[0]) * LAYER_GAINS[1])


def staged_energy(position):
    energy = 0.0
    for k in range(len(STAGE_WEIGHTS)):
        energy = energy + STAGE_WEIGHTS[k] * np.sin(position * (k + 1.0))
    return energy


def weighted_powers(rate):
    total = 0.0
    power = rate
    for weight in STAGE_WEIGHTS:
        total = total + weight * power
        power = power * rate
    return total


@pytest.mark.parametrize("f, args", [
    (gated_response, (np.array([0.3, -1.2, 0.8]),)),
    (staged_energy, (0.7,)),
    (weighted_powers, (1.3,)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_module_tuples_and_lists_of_numbers_are_read(f, args):
    check_grads(f, *args, seed=3)


@PATHS
def test_rebinding_a_module_tuple_or_list_between_calls_is_seen(jit):
    global LAYER_GAINS, STAGE_WEIGHTS
    saved = LAYER_GAINS, STAGE_WEIGHTS
    signal = np.array([0.3, -1.2, 0.8])
    try:
        grad_g = ad.gradient(ad.differentiable(gated_response, jit=jit))
        grad_s = ad.gradient(ad.differentiable(staged_energy, jit=jit))
        grad_g(signal)
        grad_s(0.7)
        LAYER_GAINS = (2.0, -1.0)  # new values
        STAGE_WEIGHTS = [0.25, 4.0]  # a new length
        np.testing.assert_allclose(grad_g(signal), -2.0 / np.cosh(2.0 * signal) ** 2)
        assert grad_s(0.7) == pytest.approx(0.25 * np.cos(0.7) + 8.0 * np.cos(1.4))
        STAGE_WEIGHTS[1] = 1.0  # changed in place
        assert grad_s(0.7) == pytest.approx(0.25 * np.cos(0.7) + 2.0 * np.cos(1.4))
    finally:
        LAYER_GAINS, STAGE_WEIGHTS = saved


MIXED = (1.0, np.ones(2))


def reads_a_mixed_tuple(x):
    return x * MIXED[0]


def test_a_module_tuple_of_arrays_is_refused_where_it_is_read():
    with pytest.raises(ad.NonDifferentiableError, match="a tuple cannot be used as a value"):
        ad.gradient(reads_a_mixed_tuple)(1.0)


# -- in-place operators on argument arrays ---------------------------------------------

def damped_velocity(velocity, damping):
    velocity *= damping
    return np.sum(velocity * velocity)


def relaxed_field(field, source, rate):
    for _ in range(3):
        field += rate * source
        field -= 0.1 * field
        field /= 1.0 + rate
    return np.sum(np.sin(field))


def rescaled_rows(weights, scale):
    weights[0, 1] = weights[1, 0] * scale
    weights *= scale
    return np.sum(weights ** 2)


def step_size(step, factor):
    step *= factor  # a number: rebinds it
    step += 0.5
    return step * step


def uses_a_number_helper(position, factor):
    return step_size(position[0], factor) + np.sum(position)


IN_PLACE = [
    (damped_velocity, (np.array([0.4, -1.1, 2.0]), 0.8)),
    (relaxed_field, (np.array([[0.2, 0.5], [-0.3, 1.0]]), np.array([1.0, -0.5]), 0.3)),
    (rescaled_rows, (np.array([[0.2, 0.5], [-0.3, 1.0]]), 1.7)),
    (step_size, (0.9, 1.3)),
    (uses_a_number_helper, (np.array([0.4, -1.1]), 1.3)),
]


@pytest.mark.parametrize("f, args", IN_PLACE, ids=lambda v: getattr(v, "__name__", ""))
def test_in_place_operators_on_arguments_differentiate(f, args):
    check_grads(f, *args, seed=7)


@PATHS
@pytest.mark.parametrize("f, args", IN_PLACE[:3], ids=lambda v: getattr(v, "__name__", ""))
def test_in_place_operators_change_the_callers_array_as_numpy_does(f, args, jit):
    expected = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]
    expected_value = f(*expected)
    mine = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]
    value, pullback = ad.value_with_pullback(ad.differentiable(f, jit=jit), *mine)
    assert value == pytest.approx(expected_value, rel=1e-12)
    pullback(1.0)
    for got, want in zip(mine, expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def scaled_then_rebound(velocity, damping):
    velocity *= damping
    velocity = velocity + 1.0
    return np.sum(velocity)


def test_an_in_place_operator_on_a_rebound_argument_is_refused_at_its_line():
    with pytest.raises(ad.NonDifferentiableError,
                       match=r"alias_patterns.py:\d+:5: .*in-place operator on the argument "
                             r"array 'velocity'"):
        ad.gradient(scaled_then_rebound)(np.array([0.5, 1.0]), 0.3)


# -- double buffering, views rebound and written, writes around calls -------------------

def rnn_hidden_state(recurrent, inputs):
    hidden = recurrent.shape[0]
    prev = np.zeros(hidden)
    for t in range(inputs.shape[0]):
        cur = np.zeros(hidden)
        for i in range(hidden):
            cur[i] = np.tanh(np.dot(recurrent[i], prev) + inputs[t, i])
        prev = cur
    return np.sum(prev * prev)


def heat_time_stepper(temperature, diffusivity):
    n = temperature.shape[0]
    old = temperature * 1.0
    for _step in range(3):
        new = np.zeros(n)
        new[0] = old[0]
        new[n - 1] = old[n - 1]
        for i in range(1, n - 1):
            new[i] = old[i] + diffusivity * (old[i - 1] - 2.0 * old[i] + old[i + 1])
        old = new
    return np.sum(old ** 3)


def grid_double_buffer(field, rate):
    rows, cols = field.shape
    prev = field * 1.0
    for _sweep in range(2):
        nxt = np.zeros((rows, cols))
        for r in range(rows):
            nxt[r, :] = np.sin(prev[r, :] * rate) + prev[(r + 1) % rows, :]
        prev = nxt
        if np.sum(prev) > 100.0:
            return np.sum(prev)
    return np.sum(prev * field)


def mirrored_kernel(weights, bias):
    kernel = np.outer(weights, weights) + bias
    kernel = kernel[:, ::-1]
    kernel[0, 0] = kernel[1, 1] * bias
    return np.sum(kernel * kernel)


def mirrored_rows_in_a_loop(image, gain):
    canvas = image * gain
    canvas = canvas[::-1]
    for r in range(canvas.shape[0]):
        canvas[r, 0] = np.tanh(canvas[r, 1])
    return np.sum(canvas ** 2)


def normalized_profile(profile):
    total = np.sum(profile * profile)
    return profile / total


def written_then_normalized(samples, scale):
    buffer = np.zeros(samples.shape[0])
    for k in range(samples.shape[0]):
        buffer[k] = samples[k] * scale
    shape = normalized_profile(buffer)  # the call may return its argument's memory
    return np.sum(shape * samples)


def head_read_before_the_write(samples):
    window = np.zeros(4)
    window[1] = samples[0] * samples[1]
    head = window[:2]
    early = np.sum(np.sin(head))  # the only read of the view, before the write
    window[0] = samples[2] ** 2
    return np.sum(window * window) + early


def written_in_a_loop_then_viewed(samples):
    acc = 0.0
    for k in range(samples.shape[0] - 1):
        pair = np.zeros(2)
        pair[0] = samples[k]
        pair[1] = samples[k + 1] * pair[0]
        flipped = pair[::-1]
        acc = acc + np.sum(np.exp(flipped)) * flipped[0]
    return acc


PATTERNS = [
    (rnn_hidden_state, (np.array([[0.5, -0.2, 0.1], [0.3, 0.4, -0.6], [0.0, 0.2, 0.7]]),
                        np.array([[0.3, -0.1, 0.5], [0.2, 0.8, -0.4], [-0.6, 0.1, 0.9]]))),
    (heat_time_stepper, (np.array([0.2, 0.9, -0.4, 0.6, 1.1]), 0.2)),
    (grid_double_buffer, (np.array([[0.2, 0.9, -0.4], [0.6, 1.1, 0.3]]), 0.7)),
    (mirrored_kernel, (np.array([0.4, -0.7, 1.2]), 0.3)),
    (mirrored_rows_in_a_loop, (np.array([[0.2, 0.9, -0.4], [0.6, 1.1, 0.3]]), 1.4)),
    (written_then_normalized, (np.array([0.4, -0.7, 1.2]), 0.6)),
    (head_read_before_the_write, (np.array([0.4, -0.7, 1.2]),)),
    (written_in_a_loop_then_viewed, (np.array([0.4, -0.7, 1.2, 0.1]),)),
]


@pytest.mark.parametrize("f, args", PATTERNS, ids=lambda v: getattr(v, "__name__", ""))
def test_array_patterns_differentiate(f, args):
    check_grads(f, *args, seed=13)


def test_a_rewritten_view_restores_the_forward_values_on_every_pullback():
    weights, bias = np.array([0.4, -0.7, 1.2]), 0.3
    for jit in (False, True):
        _, pullback = ad.value_with_pullback(ad.differentiable(mirrored_kernel, jit=jit),
                                             weights, bias)
        first = pullback(1.0)
        second = pullback(1.0)
        for a, b in zip(first, second, strict=True):
            np.testing.assert_array_equal(a, b)


# -- siblings: other names, 2-D, loops, branches, early returns --------------------------

def layer_stack(activations, gains):
    below = activations * 1.0
    for layer in range(gains.shape[0]):
        above = below * gains[layer]  # a new array each layer, then written
        above[0, :] = np.tanh(above[1, :] + below[0, :])
        below = above
    return np.sum(below ** 2)


def branch_buffer(samples, threshold):
    acc = 0.0
    for k in range(samples.shape[0] - 1):
        if samples[k] > threshold:
            pair = np.zeros(2)
            pair[0] = samples[k] * samples[k + 1]
            head = pair[:1]
            acc = acc + np.sum(np.sin(head))  # read before the next write: saved as a copy
            pair[1] = np.cos(acc)
        else:
            pair = np.ones(2)
        acc = acc + np.sum(pair * pair)
    return acc


def early_exit_mirror(board, rate):
    board = board * rate
    board = board.T
    board[0, 1] = board[1, 0] ** 2
    if np.sum(board) > 50.0:
        return np.sum(board)
    return np.sum(np.exp(board))


def ping_pong(state, coupling):
    front = state * 1.0
    back = np.zeros(state.shape[0])
    for _sweep in range(4):
        back = np.zeros(state.shape[0])
        for i in range(state.shape[0]):
            back[i] = front[i] + coupling * front[(i + 1) % state.shape[0]] ** 2
        front, back = back, front
    return np.sum(front * state)


def scratch_view_saved_in_a_branch(signal, flag):
    total = 0.0
    if flag > 0.0:
        buf = np.zeros(3)
        buf[0:2] = signal[0:2]
        buf[0:2] = np.sin(buf[0:2])  # the view's value, saved for cos, is then overwritten
        total = np.sum(buf * buf)
    else:
        buf = np.ones(3)
        total = np.sum(buf)
    return total


def column_written_after_the_base_is_read(samples):
    grid = np.outer(samples, samples)
    first = np.sum(np.sin(grid))  # the base, read before the write only
    column = grid[:, 1]
    column[0] = np.exp(samples[0])
    return first + np.sum(np.cos(column))


SIBLINGS = [
    (scratch_view_saved_in_a_branch, (np.array([0.3, 0.9, 0.2]), 1.0)),
    (column_written_after_the_base_is_read, (np.array([0.3, 0.9, 0.2]),)),
    (layer_stack, (np.array([[0.2, -0.5], [0.7, 0.1]]), np.array([1.1, 0.8]))),
    (branch_buffer, (np.array([0.4, -0.7, 1.2, 0.9]), 0.0)),
    (early_exit_mirror, (np.array([[0.2, -0.5], [0.7, 0.1]]), 1.3)),
    (ping_pong, (np.array([0.4, -0.7, 1.2]), 0.3)),
]


@pytest.mark.parametrize("f, args", SIBLINGS, ids=lambda v: getattr(v, "__name__", ""))
def test_sibling_patterns_differentiate(f, args):
    check_grads(f, *args, seed=17)


# -- the refusals that remain -----------------------------------------------------------

def view_read_after_the_write(signal):
    window = np.zeros(3)
    row = window[:2]
    window[0] = signal[0] * signal[1]
    return np.sum(row * signal[:2])  # 'row' sees the write


def scratch_alias_read_after_the_write(signal):
    acc = 0.0
    for k in range(2):
        cur = np.zeros(3)
        last = cur
        cur[k] = signal[k] ** 2
        acc = acc + np.sum(last)  # 'last' sees the write
    return acc


def mirrored_argument(grid):
    grid = grid[:, ::-1]  # a view of the caller's array
    grid[0, 0] = 1.0
    return np.sum(grid * grid)


def rebound_in_a_loop(signal):
    out = signal * 1.0
    for k in range(2):
        out[k] = out[k + 1] * 2.0
        out = out[::-1]  # a view each time: the pullback cannot tell which to restore
    return np.sum(out * out)


def in_place_on_a_view(signal):
    acc = np.zeros(3)
    part = acc[:2]
    part *= signal[0]
    return np.sum(acc)


REFUSED = [
    (view_read_after_the_write, "'row' is read after the write, which changes it"),
    (scratch_alias_read_after_the_write, "'last' is read after the write"),
    (mirrored_argument, "may share memory with 'grid' \\(an argument or a global\\), would "
                        "change the caller's array"),
    (rebound_in_a_loop, "which is assigned more than once \\(in a loop or a branch\\)"),
    (in_place_on_a_view, "in-place operator on 'part', which shares memory"),
]


@PATHS
@pytest.mark.parametrize("f, message", REFUSED, ids=lambda v: getattr(v, "__name__", ""))
def test_writes_that_cannot_be_proved_safe_are_refused_with_the_reason(f, message, jit):
    with pytest.raises(ad.NonDifferentiableError,
                       match=r"test_alias_patterns.py:\d+:\d+: error: .*" + message):
        ad.gradient(ad.differentiable(f, jit=jit))(np.array([0.5, -0.3, 0.8]))
