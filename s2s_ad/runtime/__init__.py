"""What generated code imports at run time: ``from s2s_ad import runtime as rt``.

Every public helper runs both from Python and inside ``numba.njit`` code, with
the same results (to rounding; the tests check it): called from Python it runs
its body (plain NumPy, NumPy's semantics); called from Numba, Numba compiles
the implementation registered for it with ``numba.extending.overload`` (or the
body itself, for ``register_jitable`` helpers).  Each variant (``axis`` None or
an int, ``keepdims`` or not) is its own function, so a call site is
type-stable.  Results and cotangents are new arrays, never views of an
argument (except ``reshape``/``reshape_like``, which follow NumPy).

This package may import NumPy, Numba (and SciPy, whose functions some helpers compute
in Python) only: no compiler, no rules.  Its
modules, by topic (this ``__init__`` re-exports each one's ``__all__``;
``tests/runtime/test_runtime_index.py`` checks that this index names every
module and exactly each one's helpers):

- ``scalar``: ``sign``, ``log_or_zero``, ``pow_slope``, ``pow_curvature``, ``cbrt``,
  ``fmod``, ``fsum``, ``int_pow``, ``number_as_float``, ``number_as_int``, ``zero_d_item``,
  ``astype_int``, ``astype_float``, ``as_float64``, ``run_hook``, ``range_length`` (a loop's trip
  count), ``no_transpose`` (the pullback of a gradient-code helper: raises),
  ``without_derivative`` (the marker, kept in generated code)
- ``given``: ``given_cotangents``, ``given_cotangent`` (the cotangents a registered
  kernel gradient or a custom derivative returns, checked against the inputs),
  ``given_tangent`` (the tangent a registered differential returns)
- ``tapes``: ``grow`` (growable tapes), ``block_push`` and ``block_read`` (a loop's
  arrays, copied into one buffer), ``accumulate``, ``add_in_place`` and
  ``materialize`` (array cotangents, empty meaning "none yet")
- ``broadcasting``: ``unbroadcast``, ``unbroadcast_to_shape``,
  ``unbroadcast_scalar`` (broadcasting's VJP), ``accumulate_to_shape`` (added into
  a cotangent without temporaries), ``broadcast_tangent`` (broadcasting's JVP)
- ``directions``: ``batch_like``, ``batch_of`` (the storage of several tangent
  directions per run, along a leading axis)
- ``reductions``: for each row of its table ``REDUCTIONS`` (sum, mean, prod, max,
  min, norm), the forms ``<r>_axis[_keepdims]``, ``<r>_all_keepdims`` (``norm_all``)
  and their VJPs ``<r>_vjp_axis[_keepdims]``, ``<r>_vjp_all[_keepdims]`` (``sum_axis``,
  ``sum_vjp_axis``...: each bound by name there, and gathered per row as ``SUM``,
  ``MEAN``... for the rules); ``expand_reduced``
- ``reduction_tangents``: the tangents of prod's and norm's pullbacks in their input,
  ``prod_vjp_tangent_axis``, ``prod_vjp_tangent_axis_keepdims``, ``prod_vjp_tangent_all``,
  ``norm_vjp_tangent_axis``, ``norm_vjp_tangent_axis_keepdims``, ``norm_vjp_tangent_all``
  (second derivatives through them)
- ``shapes``: ``reshape``, ``reshape_like``, ``slice_axis``, ``index_axis``, ``filled``
- ``indexing``: ``scatter_add`` (the cotangent of a gather: repeated indices add up),
  ``written_items`` (of a write through an index array: the last write wins),
  ``take_axis``, ``take_vjp``, ``take_vjp_axis``, ``write_back`` (argument arrays
  written by the function)
- ``bounds``: ``check_index`` (an integer index, or an array of them, checked against an
  axis: NumPy's IndexError at the user's line; Numba checks no bounds),
  ``range_in_bounds`` (a loop's whole range, checked once before it),
  ``index_in_bounds`` (an index the same in every iteration, checked once before the
  loop) and ``check_index_unless`` (the check in the loop, skipped when that holds)
- ``rearrange``: ``positions`` and ``gather_vjp`` (the VJP of any selection: tril,
  diag, pad...), ``repeat_axis``, ``repeat_vjp_axis``, ``roll_axis``, ``pad_axis``,
  ``pad_vjp_axis`` (a mode by its code), ``diagonal_last``, ``gradient_axis`` and
  ``gradient_vjp_axis`` (np.gradient), ``matmul`` (batched, broadcast), ``partition_vjp``
- ``pieces``: ``section`` and ``section_vjp`` (the pieces of np.split and its kin),
  ``masked`` (x[mask] for an N-d mask)
- ``einsum``: ``einsum`` (constant subscripts), ``einsum_like`` (its VJP forms)
- ``scans``: ``reverse_cumsum`` (cumsum's VJP), ``sort_axis``, ``sort_vjp``,
  ``sort_tangent``
- ``norms``: ``norm_p_slope`` (the VJP of a vector p-norm)
- ``special``: ``heaviside``, ``sinc_slope`` (element-wise functions Numba lacks, and
  slopes) and ``scipy.special``'s (SciPy in Python, own kernels in Numba): ``gammaln``,
  ``digamma``, ``trigamma``, ``erf``, ``erfc``, ``expit``, ``logit``, ``xlogy``,
  ``xlogy_dx``, ``xlogy_dy``
- ``moments``: ``axes_last``, ``axes_back``, ``axes_kept``, ``last_kept`` (a reduction
  over a tuple of axes is one along the last axis of ``axes_last(x, axes)``);
  ``var_last``, ``std_last``, ``logsumexp_last``, ``softmax_last`` and their VJPs
  ``var_last_vjp``, ``std_last_vjp``, ``logsumexp_last_vjp``, ``softmax_last_vjp``
- ``along_axis``: ``trace_axes``, ``trace_vjp`` (any offset, stacks), ``cumprod_axis``,
  ``cumprod_vjp``, ``cumprod_tangent``, ``diff_axis``, ``diff_vjp``
- ``linalg``: ``det``, ``inv``, ``solve`` of stacks of matrices and their VJPs
  ``det_vjp``, ``inv_vjp``, ``solve_vjp_a``, ``solve_vjp_b``; ``matrix_power`` (always
  an array, unlike Numba's)
- ``decompositions``: ``svd``, ``svd_vjp``, ``singular_values``, ``singular_values_vjp``,
  ``singular_outer``, ``nuclear_norm_slope``, ``eigh``, ``eigh_vjp``, ``eigvalsh``,
  ``eigvalsh_vjp``, ``cholesky``, ``cholesky_vjp``, ``slogdet``, ``slogdet_vjp``,
  ``pinv_vjp``, ``matrix_power_vjp`` (matrix decompositions and their VJPs)
- ``decomposition_tangents``: ``cholesky_tangent``, ``eigvalsh_tangent``, ``eigh_tangent``,
  ``singular_values_tangent`` (forward mode through the decompositions)
- ``scipy_linalg``: ``solve_triangular``, ``solve_triangular_vjp_a``,
  ``solve_triangular_vjp_b``, ``scipy_cholesky``, ``scipy_cholesky_vjp``, ``cho_factor``,
  ``cho_factor_vjp``, ``cho_solve``, ``cho_solve_vjp_b``, ``cho_solve_vjp_c``, ``expm``,
  ``expm_vjp`` (SciPy's functions, compiled too)
- ``lists``: ``new_list``, ``appended``, ``list_array``, ``list_position``,
  ``merge_leading``, and the cotangents of growing lists: ``cotangent_list``,
  ``list_pop``, ``list_add_at``, ``list_add_rows``
- ``list_joins``: ``list_concatenate``, ``list_hstack``, ``list_vstack`` (the joins of a
  list whose items may differ along the joining axis) and their pullback's
  ``list_extents``, ``list_add_pieces``
- ``tuples``: ``add_at`` (the cotangent of ``t[i]``), ``plus`` (cotangents added item by
  item), ``sum_items``, ``fill_like``, ``at_max``, ``at_min`` (of Python's sum, max and
  min of a tuple)
- ``threads``: ``prange`` (Numba's), ``chunk_count`` (the chunks a parallel loop's
  pullback runs in, one per thread), ``check_finished`` (raises ``LoopNotFinished``
  after a parallel loop some of whose iterations did not finish)
- private: ``matrices`` (pieces the matrix helpers share), ``reduction_kernels`` (each
  reduction's Numba kernels and NumPy VJP rules), ``axes`` (axis normalisation and
  shape tuples, both paths),
  ``python_math`` (the math module with its domain errors, for compiled code) and
  ``weak_floats`` (float literals keep a float32 operand's dtype, for compiled code)

What Numba 0.68 supports natively (nopython mode, float64 arrays; "helper"
names the helper here that fills the gap):

=========================================  =======================================
NumPy call                                 Numba 0.68
=========================================  =======================================
sum/prod/max/min/mean(x), x.sum() ...      yes, any ndim incl. 0-d; max/min of an
                                           empty array raise ValueError (as NumPy)
sum(x, axis=k), x.sum(k)                   yes (int axis, negative too, runtime
                                           value; tuple of axes too)
sum(..., keepdims=True)                    no  -> sum_axis_keepdims, *_all_keepdims
mean/prod/max/min(x, axis=k)               no  -> mean_axis, prod_axis, max_axis, ...
dot 1-D/2-D (any layout), outer            yes; np.dot(scalar, a) no (use ``*``)
a @ b, 1-D and 2-D                         yes; np.matmul(a, b) no (use ``@``);
                                           batched (ndim > 2) no; mixed
                                           float32/float64 operands no (cast first)
reshape / x.reshape / np.reshape           yes, C-contiguous input only
                                           (non-contiguous: NotImplementedError)
                                           -> reshape, reshape_like
transpose, x.T, transpose(x, axes)         yes (axes as a literal tuple)
concatenate((a, b), axis=k)                yes with a tuple; a list no
stack((a, b), axis=k)                      yes (incl. negative axis)
  their VJPs: slice/index along an axis    -> slice_axis, index_axis
vstack, hstack((a, b))                     operands of one rank only; numbers no
                                           (the rules join np.atleast_2d/1d of
                                           each with concatenate instead)
column_stack((a, b))                       1-D and 2-D arrays; 3-D, 0-d and
                                           numbers no (the rules: concatenate)
atleast_1d/2d/3d(x)                        arrays (0-d too, any layout); a number
                                           no -> filled (np.full((1, ...), x))
linalg.solve, inv, det, slogdet            yes (float32 too, non-contiguous too)
linalg.norm(x)                             1-D and 2-D (Frobenius) only; ord='fro'
                                           no; axis= no; ndim > 2 no
                                           -> norm_all, norm_axis, norm_vjp_axis
where(c, a, b)                             yes (broadcasting, scalar operands);
                                           where(c) yes
maximum, minimum                           yes (broadcasting, 0-d)
clip(x, lo, hi), x.clip                    yes (scalar, array or None bounds)
exp, expm1, exp2, log, log1p, log2, log10  yes; logaddexp(2) yes
argmax/argmin (also axis=k), argsort       yes
sign, floor, ceil, np.round/around         yes; x.round() method no (use np.round)
astype(np.int64 / np.float32)              yes; astype(int) (builtin type) no
broadcasting (operators, ufuncs)           yes; its VJP (sum back to a shape) has
                                           no primitive -> unbroadcast,
                                           unbroadcast_scalar
broadcast_to, expand_dims, x[None], ravel  yes; squeeze no
einsum                                     no  -> einsum, einsum_like
cumsum(x), cumsum(x, axis=k)               yes; its VJP -> reverse_cumsum
sort(x) (last axis); sort(x, axis=k)       yes; no -> sort_axis; VJP -> sort_vjp
take(a, idx)                               yes (int, tuple, int array of any shape)
take(a, idx, axis=k)                       1-D idx only, out-of-bounds indices read
                                           unchecked -> take_axis
np.array((a, b)), ((a, b), (c, d))         yes; a tuple of arrays no (use stack)
math.fsum                                  no  -> fsum
linalg.norm(x, ord) vectors                1-D only; no axis -> compositions of
                                           sum/max/min helpers and norm_p_slope
linalg.svd(a, full_matrices), eigh(a),     2-D only; compute_uv no, UPLO no, stacks
cholesky, slogdet, pinv, matrix_power      no -> singular_values, svd (a tuple),
                                           eigh, eigvalsh, cholesky, slogdet
scipy.linalg                               no -> solve_triangular, scipy_cholesky,
                                           cho_factor, cho_solve, expm
=========================================  =======================================

Also note: in ``njit`` code a *scalar* float division by zero raises
ZeroDivisionError (Numba's default error model), where NumPy gives inf/nan;
array division follows NumPy. The helpers here guard their divisions.
"""

from .along_axis import *  # noqa: F403
from .bounds import *  # noqa: F403
from .broadcasting import *  # noqa: F403  (the helpers generated code calls as rt.<name>)
from .decomposition_tangents import *  # noqa: F403
from .decompositions import *  # noqa: F403
from .directions import *  # noqa: F403
from .einsum import *  # noqa: F403
from .given import *  # noqa: F403
from .indexing import *  # noqa: F403
from .linalg import *  # noqa: F403
from .list_joins import *  # noqa: F403
from .lists import *  # noqa: F403
from .moments import *  # noqa: F403
from .norms import *  # noqa: F403
from .pieces import *  # noqa: F403
from .rearrange import *  # noqa: F403
from .reduction_tangents import *  # noqa: F403
from .reductions import *  # noqa: F403
from .scalar import *  # noqa: F403
from .scans import *  # noqa: F403
from .scipy_linalg import *  # noqa: F403
from .shapes import *  # noqa: F403
from .special import *  # noqa: F403
from .tapes import *  # noqa: F403
from .threads import *  # noqa: F403
from .tuples import *  # noqa: F403
