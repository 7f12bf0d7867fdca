"""The compiler, stage by stage: what runs, in order, for one function.

    parse      -> ParsedFunction   (gast FunctionDef, names resolved, refusals raised)
    normalize  -> NormalFunction   (single exit, flags for break/continue, ANF)
    kinds      -> kind of every variable (a name rebound to another shape is split)
    activity   -> varied / useful / active variables, zero-derivative findings
    reverse    -> primal, forward, pullback, fused value-and-gradient trees
    emit       -> one commented Python module (in ``linking``, with its callees)
    jit        -> callables: Numba where it types, Python otherwise

Parsing is cached per function and the whole run per argument kinds in
:mod:`s2s_ad.compiler.transforms`.  Each stage's output prints as Python:
``stage_source(t, "anf")``.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field

import gast

from s2s_ad.compiler.activity import (
    Activity,
    ZeroDerivative,
    analyze_activity,
    zero_derivatives,
)
from s2s_ad.compiler.dependencies import Dependencies
from s2s_ad.compiler.emit import function_source
from s2s_ad.compiler.infer_kinds import (
    infer_kinds,
    rebound_names,
    refuse_mixed_structures,
    refuse_unknown_result,
    result_kind,
)
from s2s_ad.compiler.ir import GlobalRead, ParsedFunction
from s2s_ad.compiler.jit import GeneratedModule
from s2s_ad.compiler.linking import load_module
from s2s_ad.compiler.normalize import NormalFunction, normalize, split_versions
from s2s_ad.compiler.reverse import Generated, reverse
from s2s_ad.compiler.reverse.context import Linker
from s2s_ad.compiler.structure_access import lower_structures
from s2s_ad.compiler.syntax.builders import loaded_names
from s2s_ad.compiler.syntax.names import Namer
from s2s_ad.compiler.tuple_arguments import arrays_for_tuples
from s2s_ad.errors import NonDifferentiableError, ZeroDerivativeWarning
from s2s_ad.kinds import Kind, StaticKind, is_structure, kind_of_value

STAGES = ("parse", "anf", "forward", "pullback", "fused", "module")


@dataclass(eq=False)
class Transform:
    """Everything the compiler made of one function for one kind signature."""

    name: str
    parsed: ParsedFunction
    normal: NormalFunction
    kinds: dict[str, Kind]
    activity: Activity
    wrt_positions: list[int]
    generated: Generated | None = None
    module: GeneratedModule | None = None
    result_kind: Kind = "unknown"
    zero_derivatives: list[ZeroDerivative] = field(default_factory=list)
    warned: bool = False
    structured: bool = False  # an argument is (or holds) a structure: pass its leaves
    structured_result: bool = False  # the result is (or holds) one: rebuild it
    structured_globals: bool = False  # a global variable it reads is a structure
    dependencies: Dependencies | None = None  # what it was built from (see dependencies)

    def current(self) -> bool:
        """Whether what it was built from still holds (no helper redefined, no global
        function rebound, nothing registered since)."""
        return self.dependencies is None or self.dependencies.hold()

    def warn_zero_derivatives(self) -> None:
        """Issue each ZeroDerivativeWarning once, at the user's file and line."""
        if self.warned:
            return
        self.warned = True
        for z in self.zero_derivatives:
            warnings.warn_explicit(f"{self.parsed.filename}:{z.lineno}:{z.col}: {z.message}",
                                   ZeroDerivativeWarning, self.parsed.filename, z.lineno)

    @property
    def wrt(self) -> list[str]:
        return [self.parsed.params[i] for i in self.wrt_positions]

    @property
    def written_positions(self) -> tuple[int, ...]:
        """Positions of the parameters whose arrays the generated code writes into."""
        return tuple(self.normal.params.index(p) for p in self.normal.written_params)

    @property
    def source(self) -> str:
        return self.module.source

    @property
    def hidden(self) -> list[GlobalRead]:
        """The global variables the generated functions take after the parameters."""
        return self.generated.hidden

    def global_values(self) -> tuple:
        """The current values of :attr:`hidden`, read now."""
        return tuple(read.value() for read in self.generated.hidden)



def run_stages(parsed: ParsedFunction, arg_kinds: list[Kind], wrt_positions: list[int],
               float_dtype: str, linker: Linker) -> Transform:
    """Every stage after parsing, for arguments of ``arg_kinds``.

    ``linker(callee, kinds, primal_only)`` transforms a called Python function.
    """
    normal = normalize(parsed)
    try:
        return _later_stages(parsed, normal, arg_kinds, wrt_positions, float_dtype, linker)
    except NonDifferentiableError as exc:
        raise in_user_names(exc, normal.namer) from None


def _later_stages(parsed: ParsedFunction, normal: NormalFunction, arg_kinds: list[Kind],
                  wrt_positions: list[int], float_dtype: str, linker: Linker) -> Transform:
    kinds = _infer_kinds(normal, arg_kinds, linker)
    wrt = [normal.params[i] for i in wrt_positions]
    activity = analyze_activity(normal.node, wrt, kinds)
    t = Transform(name=parsed.name, parsed=parsed, normal=normal, kinds=kinds,
                  activity=activity, wrt_positions=wrt_positions,
                  result_kind=result_kind(normal.node, kinds))
    t.zero_derivatives = zero_derivatives(normal.node, wrt, kinds, parsed.name)
    t.generated = reverse(normal, kinds, activity, wrt, float_dtype, linker)
    t.structured_globals = any(is_structure(read.value()) for read in t.generated.hidden)
    t.module = load_module(t.name, parsed, normal, kinds, t.generated)
    return t


def in_user_names(exc: NonDifferentiableError, namer: Namer) -> NonDifferentiableError:
    """``exc`` with the generated names in its message that stand for a user's
    variable (an argument's copy ``v_local``, a version ``x_1``, a global's parameter)
    replaced by the user's names; once, at the function whose stages raised it."""
    names = {n: namer.user_name(n) for n in namer.sources}
    names = {n: u for n, u in names.items() if u != n}
    if not names or getattr(exc, "in_user_names", False):
        return exc
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, sorted(names, key=len, reverse=True)))
                         + r")\b")

    def fix(text: str) -> str:
        return pattern.sub(lambda m: names[m.group(1)], text)

    renamed = NonDifferentiableError(fix(exc.problem), exc.location, fix(exc.hint))
    renamed.in_user_names = True
    return renamed


def _infer_kinds(normal: NormalFunction, arg_kinds: list[Kind], linker: Linker) -> dict[str, Kind]:
    """The kinds stage; a name rebound to a value of another shape (a number,
    then an array) is split into versions first, and a tuple passed to a NumPy
    function as its data becomes ``np.array`` of it."""
    arguments = dict(zip(normal.params, arg_kinds, strict=True))
    env = dict(arguments)
    env.update({name: StaticKind(value) if callable(value) else kind_of_value(value)
                for name, value in normal.externals.items()})  # functions: static values
    env.update({name: kind_of_value(read.value()) for name, read in normal.hidden.items()})

    def callee_kind(callee, kinds, call):
        return linker(callee, kinds, True, call).result_kind

    # split first what is known before structures are lowered (a structure rebound to
    # one with other static fields, whose old fields are read), then what lowering shows
    _split_rebound(normal, infer_kinds(normal.node, env, callee_kind), arguments, callee_kind)
    kinds = _lowered_structures(normal, env, callee_kind)
    if _split_rebound(normal, kinds, arguments, callee_kind):
        kinds = infer_kinds(normal.node, env, callee_kind)
    refuse_mixed_structures(normal.node, kinds, callee_kind, normal.parsed.location)
    converted = arrays_for_tuples(normal.node, kinds, normal.namer, normal.parsed.location)
    if converted:
        normal.locals |= converted
        kinds = infer_kinds(normal.node, env, callee_kind)
    refuse_unknown_result(normal.node, kinds, callee_kind, normal.parsed.location)
    return kinds


def _split_rebound(normal: NormalFunction, kinds: dict, arguments: dict,
                   callee_kind) -> bool:
    """Split the names rebound to values of another shape into versions; whether any."""
    rebound = rebound_names(normal.node, kinds, arguments, callee_kind)
    versions = (split_versions(normal.node, rebound, normal.namer, normal.return_flag)
                if rebound else set())
    normal.locals |= versions
    return bool(versions)


def _lowered_structures(normal: NormalFunction, env: dict[str, Kind], callee_kind) -> dict:
    """Kinds, with structure operations rewritten to tuple operations as the kinds of
    the structures become known (a method's result can be a structure, and so on)."""
    kinds = infer_kinds(normal.node, env, callee_kind)
    statics = {name: value for name, value in normal.externals.items()  # global functions
               if callable(value)}
    for _ in range(_LOWERING_ROUNDS):
        refuse_mixed_structures(normal.node, kinds, callee_kind, normal.parsed.location)
        fresh, changed = lower_structures(normal.node, kinds, normal.namer, statics,
                                          normal.parsed.location)
        if not changed:
            break
        normal.locals |= fresh
        kinds = infer_kinds(normal.node, env, callee_kind)
    refuse_mixed_structures(normal.node, kinds, callee_kind, normal.parsed.location)
    lower_structures(normal.node, kinds, normal.namer, statics, normal.parsed.location,
                     final=True)
    _drop_static_externals(normal, kinds)
    return kinds


def _drop_static_externals(normal: NormalFunction, kinds: dict[str, Kind]) -> None:
    """Global functions read as values went into structures' static fields: the generated
    code no longer reads them (it would be bound to them, and stay in Python). Returning
    one is refused."""
    ret = normal.node.body[-1]
    if isinstance(ret.value, gast.Name) and isinstance(kinds.get(ret.value.id), StaticKind):
        raise NonDifferentiableError("returning a function (or another value fixed in the "
                                     "generated code) is not supported",
                                     normal.parsed.location(ret))
    read = loaded_names(normal.node)
    for name in [n for n, v in normal.externals.items() if callable(v) and n not in read]:
        del normal.externals[name]


_LOWERING_ROUNDS = 20


def stage_source(t: Transform, stage: str) -> str:
    """The printable output of one stage of ``t`` (see ``STAGES``)."""
    fname = t.parsed.filename
    gen = t.generated
    if stage == "parse":
        return function_source(t.parsed.node, fname)
    if stage == "anf":
        return function_source(t.normal.node, fname)
    if stage in ("forward", "pullback", "fused"):
        return function_source(getattr(gen, stage), fname, adjoint=stage != "forward")
    if stage == "module":
        return t.module.source
    raise ValueError(f"unknown stage {stage!r}; choose one of {', '.join(STAGES)}")
