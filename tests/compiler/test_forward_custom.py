"""Custom derivatives in forward mode and zero-tangent diagnostics (issue 24).

``@ad.derivative(of=f, mode="forward")`` registers a differential (Swift's
``differential:`` form, ``(value, differential)``), which forward mode uses on both
paths; a pullback-only function is refused in forward mode with a located error (and
noted by ``s2s-ad check``), a differential-only one in reverse mode.
``without_derivative`` gives a zero tangent; ``with_derivative`` hooks are refused in
forward mode; ``ZeroDerivativeWarning`` is emitted by ``ad.jvp`` as by reverse mode.
Jvps are checked against finite differences of the original (``s2s_ad.testing``) and,
where a pullback is registered too, against it (``<u, J v> = <J^T u, v>``).  Numba
compiles are few: one function with both forms, one with a differential only.
"""

from __future__ import annotations

import json
import math
import textwrap
import warnings

import numpy as np
import pytest
from forward_checks import check_jvp

import s2s_ad as ad
from s2s_ad.cli import main
from s2s_ad.errors import NonDifferentiableError, ZeroDerivativeWarning
from s2s_ad.testing.differences import directional_difference, relative_step


# ---- a function with both a pullback and a differential ------------------------------------
def scaled_exp(rate, scale):
    return scale * math.exp(rate)


@ad.derivative(of=scaled_exp)
def scaled_exp_vjp(rate, scale):
    e = math.exp(rate)
    return scale * e, lambda v: (v * scale * e, v * e)


@ad.derivative(of=scaled_exp, mode="forward")
def scaled_exp_jvp(rate, scale):
    e = math.exp(rate)
    return scale * e, lambda d_rate, d_scale: scale * e * d_rate + e * d_scale


def growth(rate, scale):
    return scaled_exp(rate * scale, scale) + rate


def logistic(values):
    return 1.0 / (1.0 + np.exp(-values))


@ad.derivative(of=logistic)
def logistic_vjp(values):
    s = logistic(values)
    return s, lambda g: g * s * (1.0 - s)


@ad.derivative(of=logistic, mode="forward")
def logistic_jvp(values):
    s = logistic(values)

    def differential(d_values):
        return s * (1.0 - s) * d_values

    return s, differential


def attention_score(weights, bias):
    total = 0.0
    for i in range(weights.shape[0]):
        total += bias * weights[i]
    return np.sum(logistic(weights * bias)) + total


def attention_score_compiled(weights, bias):  # its own transform: the Numba path
    return np.sum(logistic(weights * bias) * weights) + scaled_exp(bias, 0.5)


def relax_levels(levels, rate, steps):
    for _ in range(steps):  # the call's result overwrites its operand
        levels = logistic(levels * rate) + levels * 0.5
        if np.sum(levels) > 3.0:
            rate = scaled_exp(rate, 0.5)
    return levels


@pytest.mark.parametrize("fn, args", [
    (growth, (0.3, 1.2)),
    (attention_score, (np.array([0.5, -1.0, 2.0]), 0.7)),
    (relax_levels, (np.array([0.2, 3.0, -1.0]), 0.9, 4)),
])
def test_jvp_uses_the_differential_and_matches_differences_and_the_pullback(fn, args):
    status, detail = check_jvp(fn, args, False, fn.__name__)
    assert status == "pass", detail


def test_the_numba_path_compiles_the_split_differential():
    weights, bias = np.array([0.2, -0.4, 1.5, 0.1]), 0.8
    df = ad.differentiable(attention_score_compiled, jit=True)
    ad.jvp(df, (weights, bias), (np.ones(4), 1.0))
    assert df.status["attention_score_compiled_jvp"][0] == "numba"
    status, detail = check_jvp(attention_score_compiled, (weights, bias), True,
                               "attention_score_compiled")
    assert status == "pass", detail
    text = ad.source(attention_score_compiled, weights, bias, mode="forward")
    assert "logistic_jvp_split_" in text and "scaled_exp_jvp_split_" in text


def test_jacobian_forward_through_the_differential_equals_reverse_through_the_pullback():
    weights = np.array([0.5, -1.0, 2.0])
    forward = ad.jacobian(attention_score, wrt="weights", mode="forward")(weights, 0.7)
    reverse = ad.jacobian(attention_score, wrt="weights", mode="reverse")(weights, 0.7)
    np.testing.assert_allclose(forward, reverse, rtol=1e-12)


# ---- the differential wins over the source, and over the pullback in forward mode ----------
def quantize(signal):
    return float(int(signal * 100.0)) / 100.0


@ad.derivative(of=quantize)
def quantize_straight_through(signal):
    return quantize(signal), lambda v: v


@ad.derivative(of=quantize, mode="forward")
def quantize_straight_through_forward(signal):
    return quantize(signal), lambda d_signal: d_signal


def quantized_power(signal, gain):
    return quantize(signal) * gain * signal


def test_the_registered_differential_is_used_where_the_source_has_no_derivative():
    signal, gain = 0.4567, 3.0
    value, tangent = ad.jvp(quantized_power, (signal, gain), (1.0, 0.0))
    assert value == pytest.approx(0.45 * gain * signal)
    # d/ds [q(s) g s] with the straight-through dq/ds = 1: g s + q(s) g
    assert tangent == pytest.approx(gain * signal + 0.45 * gain, rel=1e-14)
    assert ad.gradient(quantized_power, wrt="signal")(signal, gain) == pytest.approx(tangent)


def test_the_top_level_function_uses_its_own_differential():
    value, tangent = ad.jvp(scaled_exp, (0.5, 2.0), (1.0, -1.0))
    assert tangent == pytest.approx(2.0 * math.exp(0.5) - math.exp(0.5), rel=1e-14)
    assert value == pytest.approx(2.0 * math.exp(0.5))


# ---- a differential only ----------------------------------------------------------------
def softplus(values):
    return np.log1p(np.exp(values))


@ad.derivative(of=softplus, mode="forward")
def softplus_jvp(values):
    slope = 1.0 / (1.0 + np.exp(-values))
    return softplus(values), lambda d_values: slope * d_values


def smooth_hinge_loss(weights):
    return np.sum(softplus(2.0 * weights - 1.0))


def smooth_hinge_loss_compiled(weights):  # its own transform: the Numba path
    return np.sum(softplus(2.0 * weights - 1.0) * weights)


def regularised_loss(weights, strength):
    return smooth_hinge_loss(weights) + strength * np.sum(weights * weights)


def _check_against_differences(fn, args, tangents, jit):
    df = ad.differentiable(fn, jit=jit)
    _, tangent = ad.jvp(df, args, tangents)
    direction = {i: t for i, t in enumerate(tangents) if t is not None}
    h = max(relative_step(args[i]) for i in direction)
    estimate, rounding = directional_difference(fn, args, direction, h)
    assert abs(tangent - estimate) <= 1e-6 * abs(estimate) + rounding + 1e-9
    return df


@pytest.mark.parametrize("fn, jit", [(smooth_hinge_loss, False),
                                     (smooth_hinge_loss_compiled, True)])
def test_a_differential_alone_serves_forward_mode_on_both_paths(fn, jit):
    weights = np.array([0.3, -0.8, 1.1])
    df = _check_against_differences(fn, (weights,), (np.array([1.0, 0.5, -2.0]),), jit)
    assert df.status[f"{fn.__name__}_jvp"][0] == ("numba" if jit else "python")
    assert df(weights) == pytest.approx(fn(weights))  # the value still runs


def test_reverse_mode_through_a_differential_alone_is_refused_where_it_is_called():
    weights = np.array([0.3, -0.8, 1.1])
    for fn in (smooth_hinge_loss, regularised_loss):  # directly, and through a helper
        args = (weights,) if fn is smooth_hinge_loss else (weights, 0.1)
        with pytest.raises(NonDifferentiableError, match="'softplus' needs a pullback") as err:
            ad.gradient(fn)(*args)
        assert err.value.location.lineno == smooth_hinge_loss.__code__.co_firstlineno + 1
        assert "@ad.derivative(of=softplus)" in str(err.value)
    _check_against_differences(regularised_loss, (weights, 0.1), (np.ones(3), 1.0), False)


def test_a_differential_called_as_it_is_runs_in_python_under_auto_jit():
    def cube(x):
        return x ** 3

    @ad.derivative(of=cube, mode="forward")
    def cube_jvp(x):
        pair = (x ** 3, lambda dx: 3.0 * x * x * dx)  # not (value, lambda): not split
        return pair

    def volume(side):
        return cube(side) * 2.0

    df = _check_against_differences(volume, (1.3,), (1.0,), "auto")
    assert df.status["volume_jvp"][0] == "python"
    assert "Numba cannot call" in df.status["volume_jvp"][1]


def announced_gain(signal):
    return signal * 2.0


@ad.derivative(of=announced_gain, mode="forward")
def announced_gain_jvp(signal):
    def differential(d_signal):
        print(f"tangent in: {d_signal}")  # Numba would print it differently
        return 2.0 * d_signal

    return announced_gain(signal), differential


def amplified(signal):
    return announced_gain(signal) * signal


def amplified_strictly(signal):
    return announced_gain(signal) + signal


def test_a_differential_numba_must_not_compile_falls_back_as_a_pullback_does(capsys):
    df = _check_against_differences(amplified, (3.0,), (1.0,), "auto")
    path, reason = df.status["amplified_jvp"]
    assert path == "python" and "announced_gain_jvp_split_differential" in reason
    assert "tangent in: 1.0" in capsys.readouterr().out
    with pytest.raises(ad.JitError, match="f-string"):
        ad.jvp(ad.differentiable(amplified_strictly, jit=True), (3.0,), (1.0,))


DRAG = 0.3  # read by the differential only


def drag(speed):
    return DRAG * speed * speed


@ad.derivative(of=drag, mode="forward")
def drag_jvp(speed):
    return drag(speed), lambda d_speed: 2.0 * DRAG * speed * d_speed


def braking_power(speed):
    return drag(speed) * speed


def test_a_differential_reading_a_global_the_caller_does_not_pass_runs_in_python():
    df = _check_against_differences(braking_power, (12.0,), (1.0,), "auto")
    assert df.status["braking_power_jvp"][0] == "python"
    assert ad.jvp(df, (12.0,), (1.0,))[1] == pytest.approx(3.0 * DRAG * 12.0 ** 2, rel=1e-14)


# ---- a pullback only, registration ----------------------------------------------------------
def squash(x):
    return np.tanh(x)


@ad.derivative(of=squash)
def squash_vjp(x):
    z = np.tanh(x)
    return z, lambda g: g * (1.0 - z * z)


def squashed_energy(x):
    return squash(x) * 2.0 + x


def test_forward_mode_through_a_pullback_only_is_a_located_error_naming_it():
    with pytest.raises(NonDifferentiableError, match="custom derivative of 'squash'") as err:
        ad.jvp(squashed_energy, (0.3,), (1.0,))
    assert err.value.location.lineno == squashed_energy.__code__.co_firstlineno + 1
    assert 'mode="forward"' in str(err.value)
    assert ad.gradient(squashed_energy)(0.3) == pytest.approx(2.0 * (1 - np.tanh(0.3) ** 2) + 1)


def test_registering_a_mode_again_replaces_it_with_a_warning_but_the_other_mode_does_not():
    def damped(x):
        return x * 0.5

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ad.derivative(of=damped)(lambda x: (damped(x), lambda v: 0.5 * v))
        ad.derivative(of=damped, mode="forward")(lambda x: (damped(x), lambda dx: 0.5 * dx))
    assert ad.jvp(damped, (2.0,), (1.0,))[1] == 0.5
    with pytest.warns(UserWarning, match="differential .*replaces it"):
        @ad.derivative(of=damped, mode="forward")
        def damped_jvp(x):
            return damped(x), lambda dx: 0.25 * dx  # deliberately not the derivative

    assert ad.jvp(damped, (2.0,), (1.0,))[1] == 0.25  # the new one, from the next call on
    assert ad.gradient(damped)(2.0) == 0.5
    with pytest.raises(ValueError, match="mode must be"):
        ad.derivative(of=damped, mode="sideways")


# ---- without_derivative, with_derivative ------------------------------------------------------
def held_product(price, quantity):
    return price * ad.without_derivative(quantity * quantity)


def only_held(price, quantity):
    return price + ad.without_derivative(quantity)


def test_without_derivative_gives_a_zero_tangent_and_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error", ZeroDerivativeWarning)
        assert ad.jvp(held_product, (2.0, 3.0), (0.0, 1.0)) == (18.0, 0.0)
        assert ad.jvp(held_product, (2.0, 3.0), (1.0, 0.0)) == (18.0, 9.0)
        assert ad.jvp(only_held, (2.0, 3.0), (0.0, 1.0))[1] == 0.0


def clipped_update(step):
    shrunk = ad.with_derivative(step * step, lambda d: 0.5 * d)
    return shrunk + step


def test_a_with_derivative_hook_is_refused_in_forward_mode_where_it_is_called():
    with pytest.raises(NonDifferentiableError, match="with_derivative hook") as err:
        ad.jvp(clipped_update, (2.0,), (1.0,))
    first = clipped_update.__code__.co_firstlineno
    assert (err.value.location.lineno, err.value.location.col) == (first + 1, 14)
    assert "cotangents" in str(err.value)
    assert ad.gradient(clipped_update)(2.0) == 3.0  # the hook halves 2 step = 4.0, plus 1.0


# ---- zero tangents ----------------------------------------------------------------------
def rounded_cost(amount, rate):
    return float(round(amount)) * 2.0 + rate


def test_jvp_warns_of_a_tangent_that_is_always_zero_at_the_cutting_operation():
    with pytest.warns(ZeroDerivativeWarning) as record:
        value, tangent = ad.jvp(rounded_cost, (2.2, 0.5), (1.0, 0.0))
    assert tangent == 0.0 and value == 4.5
    first = rounded_cost.__code__.co_firstlineno
    messages = [str(w.message) for w in record]
    assert any(f":{first + 1}:18:" in m and "'amount'" in m and "round" in m
               for m in messages), messages


def unused_rate(amount, rate):
    return amount * 3.0


def test_jvp_warns_of_an_unused_parameter_at_the_parameter():
    with pytest.warns(ZeroDerivativeWarning, match="parameter 'rate' does not affect") as rec:
        assert ad.jvp(unused_rate, (2.0, 1.0), (0.0, 1.0)) == (6.0, 0.0)
    first = unused_rate.__code__.co_firstlineno
    assert any(f":{first}:" in str(w.message) for w in rec)


# ---- s2s-ad check ---------------------------------------------------------------------------
CHECKED = '''
import numpy as np
import s2s_ad as ad


def squash(x):
    return np.tanh(x)


@ad.derivative(of=squash)
def squash_vjp(x):
    z = np.tanh(x)
    return z, lambda g: g * (1.0 - z * z)


@ad.differentiable
def energy(x):
    return squash(x) * 2.0
'''


def test_check_notes_a_pullback_only_call_without_failing(tmp_path, capsys):
    path = tmp_path / "model.py"
    path.write_text(textwrap.dedent(CHECKED))
    assert main(["check", str(path)]) == 0  # a note does not fail a reverse-mode file
    out = capsys.readouterr().out
    assert f"{path}:18:12: note: the custom derivative of 'squash' has only a pullback" in out
    assert '@ad.derivative(of=squash, mode="forward")' in out and "ad.jvp" in out
    assert main(["check", str(path), "--format", "json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert [(d["line"], d["severity"]) for d in found] == [(18, "note")]
    path.write_text(textwrap.dedent(CHECKED) + textwrap.dedent('''

        @ad.derivative(of=squash, mode="forward")
        def squash_jvp(x):
            z = np.tanh(x)
            return z, lambda dx: (1.0 - z * z) * dx
        '''))
    assert main(["check", str(path)]) == 0
    assert capsys.readouterr().out == ""


def test_diagnose_notes_a_differential_only_call():
    notes = [d for d in ad.diagnose(smooth_hinge_loss, np.ones(3)) if d.severity == "note"]
    assert len(notes) == 1
    assert notes[0].line == smooth_hinge_loss.__code__.co_firstlineno + 1
    assert "only a differential" in notes[0].message


def test_a_differential_returning_a_wrong_shape_is_an_error_naming_the_function():
    def spread(values):
        return values * 2.0

    @ad.derivative(of=spread, mode="forward")
    def spread_jvp(values):
        return spread(values), lambda d_values: np.sum(d_values)  # a number, not an array

    def spread_total(values):
        return np.sum(spread(values))

    with pytest.raises(ValueError, match="differential of 'spread' returns a tangent of shape"):
        ad.jvp(ad.differentiable(spread_total, jit=False), (np.ones(3),), (np.ones(3),))
