"""The compiler, stage by stage: what runs, in order, for one function.

:data:`PIPELINE` lists the stages in order, each with the module that does it
(whose docstring shows its before/after on a small example) and what it makes;
:func:`run_stages` runs them.  Parsing is cached per function and the whole run
per argument kinds in :mod:`s2s_ad.compiler.transforms`.  What each stage made
prints as Python (its tree kept as it was, copied before a later stage changes
it): ``stage_source(t, "anf")``, ``ad.source(f, stage="anf")``.

>>> [stage.name for stage in PIPELINE][:6]
['parse', 'anf', 'versions', 'structures', 'tuples', 'kinds']
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
from s2s_ad.compiler.bounds_checks import insert_checks, planned_checks
from s2s_ad.compiler.dependencies import Dependencies
from s2s_ad.compiler.emit import function_source
from s2s_ad.compiler.infer_kinds import (
    infer_kinds,
    rebound_names,
    refuse_mixed_returns,
    refuse_mixed_structures,
    refuse_unknown_result,
    result_kind,
)
from s2s_ad.compiler.ir import GlobalRead, ParsedFunction
from s2s_ad.compiler.jit import GeneratedModule
from s2s_ad.compiler.linking import load_module, load_tangent_module
from s2s_ad.compiler.normalize import NormalFunction, normalize, split_versions
from s2s_ad.compiler.normalize.arguments import keep_number_arguments
from s2s_ad.compiler.normalize.versions import written_and_rebound
from s2s_ad.compiler.reverse import Generated, reverse
from s2s_ad.compiler.reverse.context import Linker
from s2s_ad.compiler.structure_access import lower_structures
from s2s_ad.compiler.syntax.builders import loaded_names
from s2s_ad.compiler.syntax.names import Namer
from s2s_ad.compiler.tuple_arguments import arrays_for_tuples
from s2s_ad.errors import NonDifferentiableError, ZeroDerivativeWarning
from s2s_ad.kinds import (
    ArrayKind,
    Kind,
    StaticKind,
    holds_structure_kind,
    is_structure,
    kind_of_value,
)


@dataclass(frozen=True)
class Stage:
    """One stage: its ``name`` (``ad.source(f, stage=name)``, ``s2s-ad show --stage``),
    the ``module`` that does it and what it ``makes``; ``printed``: whether its output
    prints as Python."""

    name: str
    module: str
    makes: str
    printed: bool = True


PIPELINE: tuple[Stage, ...] = (
    Stage("parse", "s2s_ad.compiler.parse",
          "inspect + gast: the user's def, names resolved, refusals raised"),
    Stage("anf", "s2s_ad.compiler.normalize",
          "normalized: early return / break / continue -> flags; A-normal form"),
    Stage("versions", "s2s_ad.compiler.normalize.versions",
          "a name rebound to a value of another shape split into versions (a, a_1)"),
    Stage("structures", "s2s_ad.compiler.structure_access",
          "fields, methods and constructions of structures -> tuple operations"),
    Stage("tuples", "s2s_ad.compiler.tuple_arguments",
          "a tuple NumPy takes as data -> np.array(tuple)"),
    Stage("kinds", "s2s_ad.compiler.infer_kinds",
          "what each variable holds (float, int, bool, tuple, array, structure)"),
    Stage("bounds", "s2s_ad.compiler.bounds_checks",
          "rt.check_index before an item read or write the range analysis cannot prove "
          "in range"),
    Stage("activity", "s2s_ad.compiler.activity",
          "varied ∩ useful variables; flow-sensitive ZeroDerivativeWarning"),
    Stage("forward", "s2s_ad.compiler.reverse",
          "primal, and forward: the value and the residuals the pullback reads"),
    Stage("pullback", "s2s_ad.compiler.reverse", "residuals, cotangent -> gradients"),
    Stage("fused", "s2s_ad.compiler.reverse", "value and gradient in one call, for the hot path"),
    Stage("module", "s2s_ad.compiler.emit",
          'one commented module, e.g. "# adjoint of line 7: y = sin(x) * w"'),
    Stage("jit", "s2s_ad.compiler.jit",
          "numba.njit(cache=True) where it types, the same source in Python otherwise",
          printed=False),
)
STAGES = tuple(stage.name for stage in PIPELINE if stage.printed)


class StageOutputs:
    """The tree each stage made, printed when asked.  A stage keeps the tree itself; a
    stage about to change the tree in place calls :meth:`changing` first, which copies
    it for the stages that kept it (so unchanged stages share one tree)."""

    def __init__(self, filename: str):
        self.filename = filename
        self.trees: dict[str, gast.FunctionDef] = {}
        self.headers: dict[str, list[str]] = {}

    def keep(self, stage: str, tree: gast.FunctionDef, header: list[str] | None = None
             ) -> None:
        """``tree`` is what ``stage`` made (``header``: comment lines printed above it)."""
        self.trees[stage] = tree
        if header:
            self.headers[stage] = header

    def changing(self, tree: gast.FunctionDef) -> None:
        """``tree`` is about to be changed in place."""
        kept = [stage for stage, t in self.trees.items() if t is tree]
        if kept:
            snapshot = _copy_tree(tree)
            self.trees.update(dict.fromkeys(kept, snapshot))

    def source(self, stage: str) -> str | None:
        """What ``stage`` made, as Python source (None: not a kept stage)."""
        tree = self.trees.get(stage)
        if tree is None:
            return None
        lines = [f"# {line}" for line in self.headers.get(stage, [])]
        return "\n".join([*lines, function_source(tree, self.filename)])


def _copy_tree(node: gast.AST) -> gast.AST:
    """A copy of ``node``'s tree: new nodes, the same annotation values."""
    new = type(node).__new__(type(node))
    new.__dict__.update(node.__dict__)
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, gast.AST):
            setattr(new, name, _copy_tree(value))
        elif isinstance(value, list):
            setattr(new, name, [_copy_tree(v) if isinstance(v, gast.AST) else v for v in value])
    return new


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
    outputs: StageOutputs | None = None  # what each stage made, printable
    _tangent: GeneratedModule | None = None  # forward mode's module, made when first asked
    _directions: GeneratedModule | None = None  # its form with several directions per run

    @property
    def tangent_module(self) -> GeneratedModule:
        """The forward-mode module (``<name>_jvp``), built at the first request: a
        function forward mode cannot go through still has its reverse mode."""
        if self._tangent is None:
            try:
                self._tangent = load_tangent_module(self.name, self.parsed, self.normal,
                                                    self.kinds, self.generated)
            except NonDifferentiableError as exc:
                raise in_user_names(exc, self.normal.namer) from None
        return self._tangent

    @property
    def directions_module(self) -> GeneratedModule:
        """Forward mode with several tangent directions per run
        (``<name>_jvp_directions``), built at the first request."""
        if self._directions is None:
            try:
                self._directions = load_tangent_module(self.name, self.parsed, self.normal,
                                                       self.kinds, self.generated, True)
            except NonDifferentiableError as exc:
                raise in_user_names(exc, self.normal.namer) from None
        return self._directions

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
    def reverse_refusal(self) -> NonDifferentiableError | None:
        """Why reverse mode cannot differentiate it while forward mode can (it calls a
        function that has only a differential registered), or None."""
        context = self.generated.context if self.generated is not None else None
        return context.refusal if context is not None else None

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
               float_dtype: str, linker: Linker, normal: NormalFunction | None = None,
               parallel: bool = False) -> Transform:
    """Every stage after parsing, for arguments of ``arg_kinds`` (``normal``: the
    normalized function when it was just made, unused yet); with ``parallel``,
    its ``prange`` loops run in parallel.

    ``linker(callee, kinds, primal_only)`` transforms a called Python function.
    """
    if normal is None:
        normal = normalize(parsed)
    numbers = {p for p, k in zip(normal.params, arg_kinds, strict=True)
               if not isinstance(k, ArrayKind)}
    normal.written_params = keep_number_arguments(normal.node, normal.copies, numbers)
    outputs = StageOutputs(parsed.filename)
    outputs.keep("parse", parsed.node)
    outputs.keep("anf", normal.node)
    try:
        return _later_stages(parsed, normal, arg_kinds, wrt_positions, float_dtype, linker,
                             outputs, parallel)
    except NonDifferentiableError as exc:
        raise in_user_names(exc, normal.namer) from None


def _later_stages(parsed: ParsedFunction, normal: NormalFunction, arg_kinds: list[Kind],
                  wrt_positions: list[int], float_dtype: str, linker: Linker,
                  outputs: StageOutputs, parallel: bool) -> Transform:
    passes = _KindsPasses(normal, arg_kinds, linker, outputs)
    passes.versions()
    passes.structures()
    passes.tuples()
    kinds = passes.final_kinds()
    checks = planned_checks(normal, kinds)
    if checks:
        outputs.changing(normal.node)
        insert_checks(normal.node, checks)
    outputs.keep("bounds", normal.node)
    wrt = [normal.params[i] for i in wrt_positions]
    activity = analyze_activity(normal.node, wrt, kinds)
    t = Transform(name=parsed.name, parsed=parsed, normal=normal, kinds=kinds,
                  activity=activity, wrt_positions=wrt_positions,
                  result_kind=result_kind(normal.node, kinds), outputs=outputs)
    t.zero_derivatives = zero_derivatives(normal.node, wrt, kinds, parsed.name)
    outputs.keep("activity", normal.node, _activity_lines(t))
    t.generated = reverse(normal, kinds, activity, wrt, float_dtype, linker, parallel)
    t.structured = any(map(holds_structure_kind, arg_kinds))
    t.structured_result = holds_structure_kind(t.result_kind)
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


class _KindsPasses:
    """The stages between normalizing and activity, which change the tree in place as
    kinds become known: ``versions``, ``structures`` and ``tuples``, then ``kinds``
    (the kind of every variable).  Each infers kinds again after changing the tree."""

    def __init__(self, normal: NormalFunction, arg_kinds: list[Kind], linker: Linker,
                 outputs: StageOutputs):
        self.normal, self.outputs = normal, outputs
        self.arguments = dict(zip(normal.params, arg_kinds, strict=True))
        env = dict(self.arguments)
        env.update({name: StaticKind(value) if callable(value) else kind_of_value(value)
                    for name, value in normal.externals.items()})  # functions: static values
        env.update({name: kind_of_value(read.value()) for name, read in normal.hidden.items()})
        self.env = env

        def callee_kind(callee, kinds, call):
            return linker(callee, kinds, True, call).result_kind

        self.callee_kind = callee_kind
        self.kinds: dict[str, Kind] = {}

    def infer(self) -> dict[str, Kind]:
        self.kinds = infer_kinds(self.normal.node, self.env, self.callee_kind)
        return self.kinds

    def versions(self) -> None:
        """Split first what is known before structures are lowered (a structure rebound
        to one with other static fields, whose old fields are read)."""
        self._split_rebound(self.infer())
        self.outputs.keep("versions", self.normal.node)

    def structures(self) -> None:
        """Lower structure operations to tuple operations, then split what lowering shows."""
        normal = self.normal
        self.outputs.changing(normal.node)
        self.kinds = _lowered_structures(normal, self.env, self.callee_kind)
        if self._split_rebound(self.kinds):
            self.infer()
        refuse_mixed_structures(normal.node, self.kinds, self.callee_kind,
                                normal.parsed.location)
        self.outputs.keep("structures", normal.node)

    def tuples(self) -> None:
        """A tuple passed to a NumPy function as its data becomes ``np.array`` of it."""
        normal = self.normal
        self.outputs.changing(normal.node)
        converted = arrays_for_tuples(normal.node, self.kinds, normal.namer,
                                      normal.parsed.location)
        if converted:
            normal.locals |= converted
            self.infer()
        self.outputs.keep("tuples", normal.node)

    def final_kinds(self) -> dict[str, Kind]:
        """The kinds stage: a result of unknown kind is refused."""
        refuse_unknown_result(self.normal.node, self.kinds, self.callee_kind,
                              self.normal.parsed.location)
        refuse_mixed_returns(self.normal.node, self.kinds, self.callee_kind,
                             self.normal.parsed.location)
        self.outputs.keep("kinds", self.normal.node, _kind_lines(self.kinds))
        return self.kinds

    def _split_rebound(self, kinds: dict) -> bool:
        """Split the names rebound to values of another shape into versions; whether any."""
        normal = self.normal
        rebound = rebound_names(normal.node, kinds, self.arguments, self.callee_kind) \
            | written_and_rebound(normal.node)
        if not rebound:
            return False
        self.outputs.changing(normal.node)
        versions = split_versions(normal.node, rebound, normal.namer, normal.return_flag)
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
    """The printable output of one stage of ``t`` (see ``STAGES``; ``"tangent"``: the
    forward-mode function, ``"directions"``: its form with several directions)."""
    if stage in ("tangent", "directions"):
        module = t.tangent_module if stage == "tangent" else t.directions_module
        return module.source[module.source.index("\ndef ") + 1:].rstrip("\n")
    if stage in ("forward", "pullback", "fused"):
        return function_source(getattr(t.generated, stage), t.parsed.filename,
                               adjoint=stage != "forward")
    if stage == "module":
        return t.module.source
    text = t.outputs.source(stage) if stage in STAGES else None
    if text is None:
        raise ValueError(f"unknown stage {stage!r}; choose one of {', '.join(STAGES)}")
    return text


def _kind_lines(kinds: dict[str, Kind]) -> list[str]:
    return [f"{name}: {kind if isinstance(kind, str) else repr(kind)}"
            for name, kind in sorted(kinds.items())]


def _activity_lines(t: Transform) -> list[str]:
    a = t.activity
    lines = [f"{what}: {', '.join(sorted(names)) or '(none)'}"
             for what, names in (("varied", a.varied), ("useful", a.useful),
                                 ("active", a.varied & a.useful))]
    return lines + [f"line {z.lineno}: {z.message}" for z in t.zero_derivatives]
