"""The rules of the runtime helpers generated gradient code calls
(``s2s_ad.rules.runtime_rules``), each checked on its own: forward mode through a call
of the helper equals central finite differences of the helper along a random direction
of every float operand, so a helper declared linear in its cotangent but moving with
another operand (as ``norm``'s pullback does) fails here, not in a Hessian.

Every helper with a rule has a case (the table is checked against the rules), and a
case of the empty "no cotangent yet" operand where the helper has one.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad import runtime as rt
from s2s_ad.rules.runtime_rules import HELPERS
from s2s_ad.testing import fresh_copies
from s2s_ad.testing.differences import directional_difference

grid = np.array([[0.3, -1.2, 0.8], [1.1, 0.4, -0.6]])
row = np.array([0.7, -0.2, 1.5])

def _added_then_popped(x):
    """A list cotangent as gradient code keeps one: made, added into (items past its end
    come in as the empty "none yet" array), popped back to front."""
    cotangent = rt.cotangent_list(x)
    cotangent = rt.list_add_at(cotangent, 1, x * x, np.zeros(0))
    cotangent = rt.list_add_at(cotangent, 0, np.sin(x), np.zeros(0))
    return rt.list_pop(cotangent, 1, np.zeros(0)) + 2.0 * rt.list_pop(cotangent, 0, np.zeros(0))


def _popped_and_dropped(x):
    """A cotangent popped for nothing (``rt.list_pop`` as a statement): the tangent list
    must lose its item too, or the next pop reads the dropped item's tangent."""
    cotangent = rt.cotangent_list(x)
    cotangent = rt.list_add_at(cotangent, 1, x * x, np.zeros(0))
    cotangent = rt.list_add_at(cotangent, 0, np.sin(x), np.zeros(0))
    rt.list_pop(cotangent, 1, np.zeros(0))
    return rt.list_pop(cotangent, 0, np.zeros(0))


def _rows_added_then_popped(g, x):
    cotangent = rt.cotangent_list(x)
    cotangent = rt.list_add_rows(cotangent, g * g, np.zeros(0))
    return rt.list_pop(cotangent, 1, np.zeros(0)) * x


def _pieces_added_then_popped(g, x):
    """The pullback of joining a list's items of different lengths: each item's piece of
    ``g`` (lengths from ``rt.list_extents``) added into its cotangent."""
    parts = [x[:1], x[:2] * 2.0]
    cotangent = rt.cotangent_list(x)
    cotangent = rt.list_add_at(cotangent, 0, x[:1] * x[:1], np.zeros(0))  # one there already
    cotangent = rt.list_add_pieces(cotangent, g * g, rt.list_extents(parts, 0), 0, np.zeros(0))
    return rt.list_pop(cotangent, 1, np.zeros(0)) * x[1:] + rt.list_pop(cotangent, 0, np.zeros(0))


def _scattered(d, g):
    """A cotangent added into through an index that repeats a position, in place."""
    out = d * 1.0
    rt.scatter_add(out, np.array([0, 2, 0]), g * g)
    return out


# helper name -> [(function calling it the way gradient code does, arguments)]
CASES = {
    "accumulate": [(lambda cot, part: rt.accumulate(cot * 1.0, part), (row, 2.0 * row)),
                   (lambda cot, part: rt.accumulate(cot, part), (np.zeros(0), row))],
    "accumulate_to_shape": [
        (lambda cot, part: rt.accumulate_to_shape(cot * 1.0, part, (3,)), (row, grid)),
        (lambda cot, part: rt.accumulate_to_shape(cot, part, (3,)), (np.zeros(0), grid))],
    "materialize": [(lambda cot, like: rt.materialize(cot * 2.0, like), (row, row)),
                    (lambda cot, like: rt.materialize(cot, like) + like, (np.zeros(0), row))],
    "as_float64": [(lambda a: rt.as_float64(a) * a, (grid,))],
    "unbroadcast_to_shape": [(lambda c: rt.unbroadcast_to_shape(c * c, (1, 3)), (grid,))],
    "unbroadcast_scalar": [(lambda c: rt.unbroadcast_scalar(c * c), (grid,))],
    "broadcast_tangent": [(lambda t, like: rt.broadcast_tangent(t * t, like), (row, grid))],
    # (the spare room a tape grows by is np.empty: only what was written is compared)
    "block_push": [(lambda block, value: rt.block_push(block * 1.0, 2, value * value, 3)[:8],
                    (np.ones(8), grid)),
                   (lambda block, value: rt.block_push(block, 0, value * value, 3)[:6],
                    (np.zeros(0), grid))],
    "block_read": [(lambda block: rt.block_read(block * block, 1, (2, 2)), (np.arange(6.0),))],
    "grow": [(lambda tape: rt.grow(tape * 2.0, 3)[:3], (row,))],
    "reshape": [(lambda x: rt.reshape(x * x, (3, 2)), (grid,))],
    "reshape_like": [(lambda g, x: rt.reshape_like(g * g, x), (row * 1.0, row.reshape(3, 1)))],
    "reverse_cumsum": [(lambda g: rt.reverse_cumsum(g * g, 1), (grid,))],
    "sort_vjp": [(lambda g, x: rt.sort_vjp(g * g, x, 1), (grid, 2.0 * grid))],
    "axes_last": [(lambda x: rt.axes_last(x * x, (0,)), (grid,))],
    "axes_back": [(lambda g2, x: rt.axes_back(g2 * g2, x, (0,)), (grid.T.copy(), grid))],
    "axes_kept": [(lambda z, x: rt.axes_kept(z * z, x, (0,)), (row, grid))],
    "last_kept": [(lambda g, x: rt.last_kept(g * g, x, (0,)), (row.reshape(1, 3), grid))],
    "diff_axis": [(lambda x: rt.diff_axis(x * x, 1, 1), (grid,))],
    "diff_vjp": [(lambda g, x: rt.diff_vjp(g * g, x, 1, 1), (grid[:, :2].copy(), grid))],
    "trace_axes": [(lambda x: rt.trace_axes(x * x, 0, 0, 1), (grid,))],
    "trace_vjp": [(lambda g, x: rt.trace_vjp(g * g, x, 1, 0, 1), (1.3, grid))],
    "written_items": [(lambda d: rt.written_items(d * d, np.array([0, 2, 0])), (row,)),
                      (lambda d: rt.written_items(d * d, d > 0.0), (row,))],
    "fill_like": [(lambda g: rt.fill_like(grid, g * g), (row,)),
                  (lambda a, g: sum(rt.fill_like((a, 2.0 * a), g * g)), (0.4, 1.3))],
    "at_max": [(lambda t, g: rt.at_max(t * t, g * g), (row, 1.3)),
               (lambda a, g: rt.at_max((a, 2.0 * a), g * g)[1], (0.4, 1.3))],
    "at_min": [(lambda t, g: rt.at_min(t * t, g * g), (row, 1.3))],
    "add_at": [(lambda a, v: rt.add_at((a, a * a, 2.0 * a), 1, v * v)[1], (0.4, 1.3)),
               (lambda a, v: rt.add_at((a, a * v), -1, v * v)[1], (0.4, 1.3))],
    "plus": [(lambda a, v: rt.plus((a, a * a), (v, v * v))[1], (0.4, 1.3)),
             (lambda x, v: rt.plus(x * x, v), (row, 2.0 * row))],
    "scatter_add": [(_scattered, (row, row))],
    "slice_axis": [(lambda x: rt.slice_axis(x * x, -1, 1, 3), (grid,))],
    "index_axis": [(lambda x: rt.index_axis(x * x, 1, -1), (grid,))],
    "diagonal_last": [(lambda x: rt.diagonal_last(x * x, 1), (grid,))],
    "roll_axis": [(lambda x: rt.roll_axis(x * x, 2, 1), (grid,))],
    "take_axis": [(lambda a: rt.take_axis(a * a, np.array([2, 0, 2]), 1), (grid,))],
    "take_vjp": [(lambda g: rt.take_vjp(g * g, grid, np.array([3, 0, 3])), (row,))],
    "take_vjp_axis": [(lambda g: rt.take_vjp_axis(g * g, grid, np.array([2, 0, 2]), 1),
                       (grid,))],
    "gather_vjp": [(lambda g: rt.gather_vjp(g * g, np.zeros(4), np.array([2, 0, 2])), (row,))],
    "repeat_axis": [(lambda x: rt.repeat_axis(x * x, np.array([1, 0, 2]), 1), (grid,))],
    "repeat_vjp_axis": [(lambda g: rt.repeat_vjp_axis(g * g, row, 2, 0),
                         (np.arange(1.0, 7.0),))],
    "pad_axis": [((lambda m: lambda x: rt.pad_axis(x * x, 1, 2, 1, m))(mode), (grid,))
                 for mode in range(5)],
    "pad_vjp_axis": [((lambda m: lambda g: rt.pad_vjp_axis(g * g, 1, 1, 1, m))(mode), (grid,))
                     for mode in (0, 1, 4)],
    "section_vjp": [(lambda g: rt.section_vjp(g * g, grid, 3, 1, 1, True),
                     (np.array([[0.5], [-1.5]]),))],
    "partition_vjp": [(lambda g: rt.partition_vjp(g * g, row, np.sort(row), 0), (row,))],
    "masked": [(lambda x: rt.masked(x * x, np.array([[True, False, True], [False, True, True]])),
                (grid,))],
    "zero_d_item": [(lambda x: rt.zero_d_item(x * x), (np.array(1.3),))],
    "number_as_float": [(lambda x: rt.number_as_float(x * x), (1.3,))],
    "filled": [(lambda x: rt.filled((2, 3), x * x), (1.3,))],
    "sum_items": [(lambda a, b: rt.sum_items((a * a, b * b)), (row, grid))],
    "cotangent_list": [(_added_then_popped, (row,))],
    "list_add_at": [(_added_then_popped, (row,))],
    "list_pop": [(_added_then_popped, (row,)), (_popped_and_dropped, (row,))],
    "list_add_rows": [(_rows_added_then_popped, (grid, row))],
    "list_add_pieces": [(_pieces_added_then_popped, (row, row))],
    "list_extents": [(_pieces_added_then_popped, (row, row))],
    "merge_leading": [(lambda a: rt.merge_leading(a * a), (np.arange(12.0).reshape(2, 3, 2),))],
    "log_or_zero": [(lambda a: rt.log_or_zero(a * a), (1.3,))],
    "pow_slope": [(lambda a, b: rt.pow_slope(a, b), (1.3, 2.5)),
                  (lambda a, b: rt.pow_slope(a, b), (0.8, -1.5))],
    "cbrt": [(lambda x: rt.cbrt(x), (2.7,))],
    "fmod": [(lambda x, y: rt.fmod(x, y), (5.3, 1.7))],
}


def _reduction_cases() -> dict:
    """The reductions and their pullbacks, in each form gradient code calls."""
    cases = {}
    for r in ("sum", "mean", "max", "min", "prod", "norm"):
        forms = {
            f"{r}_vjp_all": (lambda h: lambda g, x: h(g * g, x * x))(
                getattr(rt, f"{r}_vjp_all", None)),
            f"{r}_vjp_all_keepdims": (lambda h: lambda g, x: h(g * g, x * x))(
                getattr(rt, f"{r}_vjp_all_keepdims", None)),
            f"{r}_vjp_axis": (lambda h: lambda g, x: h(g * g, x * x, 1))(
                getattr(rt, f"{r}_vjp_axis", None)),
            f"{r}_vjp_axis_keepdims": (lambda h: lambda g, x: h(g * g, x * x, 1))(
                getattr(rt, f"{r}_vjp_axis_keepdims", None)),
            f"{r}_axis": (lambda h: lambda x: h(x * x, 1))(getattr(rt, f"{r}_axis", None)),
            f"{r}_axis_keepdims": (lambda h: lambda x: h(x * x, 1))(
                getattr(rt, f"{r}_axis_keepdims", None)),
            f"{r}_all_keepdims": (lambda h: lambda x: h(x * x))(
                getattr(rt, f"{r}_all_keepdims", None)),
            f"{r}_all": (lambda h: lambda x: h(x * x))(getattr(rt, f"{r}_all", None)),
        }
        for name, fn in forms.items():
            if "vjp_axis" in name:
                args = (np.array([0.5, -1.5]).reshape((2, 1) if "keepdims" in name else 2),
                        grid)
            elif "vjp_all" in name:
                args = (1.7, grid)
            else:
                args = (grid,)
            cases[name] = [(fn, args)]
    return cases


CASES.update(_reduction_cases())
CHECKED = [(name, i, fn, args) for name, group in CASES.items()
           if getattr(rt, name, None) in HELPERS for i, (fn, args) in enumerate(group)]


def test_every_helper_with_a_rule_has_a_case():
    flat = {rt.sign, rt.heaviside, rt.int_pow, rt.range_length}  # zero slopes, no tangent
    covered = {getattr(rt, name) for name, *_ in CHECKED}
    assert HELPERS - flat - covered == set()


def _direction(args, rng) -> dict:
    return {i: (rng.uniform(-1.0, 1.0, np.shape(a)) if isinstance(a, np.ndarray)
                else float(rng.uniform(-1.0, 1.0)))
            for i, a in enumerate(args) if np.size(a) and not isinstance(a, int)}


@pytest.mark.filterwarnings("ignore::s2s_ad.ZeroDerivativeWarning")  # x only as a mask
@pytest.mark.parametrize("name, i, fn, args", CHECKED,
                         ids=[f"{name}-{i}" for name, i, _, _ in CHECKED])
def test_the_tangent_of_each_helper_equals_finite_differences(name, i, fn, args):
    rng = np.random.default_rng(zlib.crc32(name.encode()) + i)
    direction = _direction(args, rng)
    tangents = [direction.get(k) for k in range(len(args))]
    _, tangent = ad.jvp(ad.differentiable(fn, jit=False), fresh_copies(args), tangents)
    estimate, rounding = directional_difference(fn, args, direction, 1e-6)
    scale = np.max(np.abs(estimate), initial=0.0) + 1.0
    assert np.shape(tangent) == np.shape(estimate)
    assert np.max(np.abs(np.asarray(tangent) - estimate), initial=0.0) <= \
        1e-6 * scale + 10 * np.max(rounding, initial=0.0), (tangent, estimate)


def test_reverse_mode_through_a_helper_raises_when_its_pullback_runs():
    def spread_back(cot, x):
        return np.sum(rt.max_vjp_all(cot, x) * x)

    _, pullback = ad.value_with_pullback(ad.differentiable(spread_back, jit=False), 1.0, row)
    with pytest.raises(NotImplementedError, match="use ad.hvp or ad.hessian"):
        pullback(1.0)
