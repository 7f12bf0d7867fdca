"""Random programs over differentiable structures (round 4; SPEC section 4).

A program is one module: module-level dataclasses (frozen or not; float, NumPy
float64 scalar, float-array and nested-dataclass fields; fields with numeric
defaults; ``ad.no_derivative`` fields holding a float or a function such as
``np.tanh``; fields named like array attributes, ``size``, ``T``, ``shape``,
``ndim``, ``real``), named tuples and dicts with string keys; methods using
``self``'s fields, calling the other methods, returning structures, a property
and ``__call__``; module-level helpers taking and returning structures, a
helper wrapped in ``ad.recompute_in_pullback`` and functions built by
``ad.differentiable_function``; a global structure (changed between calls:
rebound, a field set in place, a function field swapped) and a closure
capturing a structure (with a twin). The function under test takes one or two
structures (and sometimes a float or an array) and reads attributes and keys,
calls methods and the structure itself, constructs structures (positional and
keyword arguments, defaults left out, ``dataclasses.replace``, dict displays,
``dict(...)``), rebinds structures in branches and loops, passes them to
helpers, and returns a float or (20%) a structure.

Every name (classes, fields, methods, ``self``, parameters, locals, keys,
globals, helpers) is drawn from the pools of :mod:`programs`, so users' names
collide with the names generated code uses. Rarely (5%) a program writes a
field or a key (``q.w = e``, ``d["w"] = e``), which s2s_ad refuses; the
refusal must be located.

Arguments are source text (``Point(0.5, np.array([...]))``), evaluated in the
module, so the oracle can build them in the module and in its instrumented copy.
"""

from __future__ import annotations

import keyword
from dataclasses import dataclass, field

from programs import (
    GENERATED,
    ORDINARY,
    TEMPLATE,
    Chooser,
    RandomChooser,
    _Names,
)

CLASS_NAMES = ("Point", "Params", "State", "Layer", "Tape", "List", "Residuals", "Result",
               "Model", "Pair", "Dense", "rt", "ar", "tape", "residuals", "value", "Value",
               "d_x", "G", "f_forward")
FIELD_NAMES = ("x", "y", "w", "b", "a", "g", "z", "c", "size", "T", "shape", "ndim", "real",
               "value", "result", "residuals", "d_value", "tape", "scale", "bias", "weight",
               "n_iter", "position", "self", "cls", "item", "np", "math", "rt", "List",
               "d_x", "x_saved", "returned", "i")
METHOD_NAMES = ("norm", "energy", "sum", "copy", "mean", "max", "item", "transpose", "value",
                "forward", "pullback", "apply", "result", "d_x", "rt", "tape")
SELF_NAMES = ("self", "self", "self", "s", "x", "residuals", "p", "value", "d_self", "tape")
KEYS = ("w", "b", "x", "d_x", "result", "size", "T", "value", "residuals", "0", "my key",
        "w-1", "tape", "rt", "self")
HELPER_NAMES = ("helper", "apply", "g", "z", "value", "result", "rt", "ar", "tape", "d_x",
                "f_forward", "f_pullback", "residuals", "List", "step")
MAIN_NAMES = ("f", "f", "loss", "value", "g", "result", "d_value", "rt", "forward", "pullback")
GLOBAL_NAMES = ("G", "params", "captured", "model", "rt", "tape", "residuals", "value",
                "d_x", "state", "List")

# a field with a default binds its name in the class body: not a name the later
# annotations and defaults read
CLASS_BODY_NAMES = {"np", "math", "ad", "Any"}
ACTIVATIONS = ("np.tanh", "np.sin", "np.cos")
FLOAT_KINDS = ("float", "float", "f64")


@dataclass
class ClassSpec:
    """A structure class (or a dict layout): ``fields`` are (name, type) with type one
    of "float", "f64" (np.float64), "array", "cut" (no_derivative float),
    "fn" (no_derivative function), or a nested ClassSpec; ``defaults`` (field -> value
    text) for fields that have one."""

    name: str
    style: str  # "dataclass", "frozen", "namedtuple", "dict"
    fields: list[tuple[str, object]]
    defaults: dict[str, str] = field(default_factory=dict)
    methods: dict[str, str] = field(default_factory=dict)  # name -> "float1", "float0",
    # "struct1", "call", "prop"

    def names_of(self, *types) -> list[str]:
        return [n for n, t in self.fields if t in types]

    def nested(self) -> list[tuple[str, ClassSpec]]:
        return [(n, t) for n, t in self.fields if isinstance(t, ClassSpec)]


@dataclass
class StructProgram:
    """A generated module: ``source`` defines ``fname``; ``points`` are argument tuples as
    source text, evaluated in the module (the oracle uses the first usable one);
    ``updates`` are steps of statements run in the module between checks (globals
    changed between calls); ``twin`` a second closure of the same factory."""

    source: str
    fname: str
    points: list[str]
    array_result: bool = False
    updates: list[list[str]] = field(default_factory=list)
    twin: str | None = None
    features: set[str] = field(default_factory=set)
    seed: int | None = None

    def describe_point(self, args: str | None) -> str:
        text = args or ""
        return text[1:-2] if text.startswith("(") and text.endswith(",)") else text

    def describe_updates(self) -> str:
        return " | then ".join("; ".join(step) for step in self.updates)


@dataclass
class SScope:
    floats: list[str]
    arrays: list[str] = field(default_factory=list)
    structs: dict[str, ClassSpec] = field(default_factory=dict)
    depth: int = 0
    loop: str | None = None

    def nested(self) -> SScope:
        return SScope(list(self.floats), list(self.arrays), dict(self.structs), self.depth + 1,
                      self.loop)


class StructGenerator:
    def __init__(self, ch: Chooser, max_statements: int = 6):
        self.ch = ch
        self.max_statements = max_statements
        self.features: set[str] = set()
        self.n = ch.integer(2, 4)
        self.taken = {"np", "math", "dataclasses", "dataclass", "NamedTuple", "Any", "ad",
                      "range", "sum", "max", "min", "dict", "float", "print", "len", "abs",
                      "True", "False", "None", "self"}

    # -- names ---------------------------------------------------------------------
    def module_name(self, pool) -> str:
        for _ in range(10):
            name = self.ch.choice(pool)
            if name not in self.taken and name.isidentifier() and not keyword.iskeyword(name):
                self.taken.add(name)
                return name
        k = 0
        while f"M{k}" in self.taken:
            k += 1
        self.taken.add(f"M{k}")
        return f"M{k}"

    def distinct(self, pool, count: int, avoid=()) -> list[str]:
        out: list[str] = []
        for _ in range(count * 6):
            name = self.ch.choice(pool)
            if name not in out and name not in avoid:
                out.append(name)
            if len(out) == count:
                break
        return out

    # -- values --------------------------------------------------------------------
    def real(self) -> str:
        return repr(self.ch.real(-1.5, 1.5))

    def array_text(self) -> str:
        return f"np.array({[self.ch.real(-1.5, 1.5) for _ in range(self.n)]!r})"

    def kept_fields(self, spec: ClassSpec, keywords: bool) -> list[tuple[str, object]]:
        """The fields a construction passes: with keywords, any field with a default may be
        left out; positionally, only a tail of them (they are the trailing fields)."""
        if spec.style == "dict":
            return list(spec.fields)
        if keywords:
            kept = [(n, t) for n, t in spec.fields
                    if n not in spec.defaults or self.ch.boolean(0.5)]
        else:
            drop = self.ch.integer(0, len(spec.defaults))
            kept = spec.fields[:len(spec.fields) - drop]
        if len(kept) < len(spec.fields):
            self.features.add("struct-default-left-out")
        return kept

    def instance(self, spec: ClassSpec) -> str:
        """A random instance of ``spec`` (source text)."""
        kw = self.ch.boolean(0.4)
        parts = []
        for name, t in self.kept_fields(spec, kw):
            if isinstance(t, ClassSpec):
                text = self.instance(t)
            elif t == "array":
                text = self.array_text()
            elif t == "f64":
                text = f"np.float64({self.real()})"
            elif t == "fn":
                text = self.ch.choice(ACTIVATIONS)
            else:
                text = self.real()
            parts.append((name, text))
        return self.call_text(spec, parts, kw)

    def call_text(self, spec: ClassSpec, parts: list[tuple[str, str]], keywords: bool) -> str:
        if spec.style == "dict":
            return "{" + ", ".join(f"{name!r}: {text}" for name, text in parts) + "}"
        if keywords:
            return f"{spec.name}({', '.join(f'{n}={t}' for n, t in parts)})"
        return f"{spec.name}({', '.join(t for _, t in parts)})"

    # -- classes -------------------------------------------------------------------
    def class_spec(self, style: str, inner: ClassSpec | None = None) -> ClassSpec:
        ch = self.ch
        name = "dict" if style == "dict" else self.module_name(CLASS_NAMES)
        pool = KEYS if style == "dict" else FIELD_NAMES
        if style == "namedtuple":
            pool = tuple(f for f in FIELD_NAMES if f not in ("count", "index"))
        count = ch.integer(2, 4)
        names = self.distinct(pool, count)
        fields: list[tuple[str, object]] = []
        for k, fname in enumerate(names):
            if k == 0:
                t = "float"
            elif k == 1:
                t = "array"
            else:
                t = ch.choice(("float", "f64", "array", "float"))
            fields.append((fname, t))
        if inner is not None and style != "namedtuple":
            extra = self.distinct(pool, 1, avoid=names)
            fields.append((extra[0] if extra else "inner", inner))
            self.features.add("struct-nested")
        spec = ClassSpec(name, style, fields)
        if style in ("dataclass", "frozen"):
            # trailing fields with defaults: a numeric default, a no_derivative float, a
            # no_derivative function
            taken = {n for n, _ in fields}
            for t in ("float", "cut", "fn"):
                if ch.boolean(0.4):
                    extra = self.distinct(FIELD_NAMES, 1, avoid=taken | CLASS_BODY_NAMES)
                    if not extra:
                        continue
                    taken.add(extra[0])
                    spec.fields.append((extra[0], t))
                    spec.defaults[extra[0]] = {"float": repr(ch.choice((0.5, 2.0, -1.0))),
                                               "cut": repr(ch.choice((0.5, 2.0, 1.5))),
                                               "fn": ch.choice(ACTIVATIONS)}[t]
                    self.features.add(f"struct-field-{t}-default")
        if style == "namedtuple" and ch.boolean(0.3):
            extra = self.distinct(FIELD_NAMES, 1,
                                  avoid={n for n, _ in fields} | CLASS_BODY_NAMES)
            if extra:
                spec.fields.append((extra[0], "float"))
                spec.defaults[extra[0]] = "0.5"
        if style != "dict":
            for kind in ("float1", "float0", "struct1", "call", "prop"):
                if ch.boolean(0.5):
                    if kind == "call":
                        spec.methods["__call__"] = "call"
                        continue
                    mname = self.distinct(METHOD_NAMES, 1,
                                          avoid={n for n, _ in spec.fields} | set(spec.methods))
                    if mname and not (style == "namedtuple" and mname[0] in ("count", "index")):
                        spec.methods[mname[0]] = kind
        return spec

    def class_lines(self, spec: ClassSpec) -> list[str]:
        if spec.style == "dict":
            return []
        head = {"dataclass": ["@dataclass"], "frozen": ["@dataclass(frozen=True)"],
                "namedtuple": []}[spec.style]
        base = "(NamedTuple)" if spec.style == "namedtuple" else ""
        lines = head + [f"class {spec.name}{base}:"]
        for name, t in spec.fields:
            ann = t.name if isinstance(t, ClassSpec) else {
                "float": "float", "f64": "float", "array": "np.ndarray", "cut": "float",
                "fn": "Any"}[t]
            if t in ("cut", "fn"):
                lines.append(f"    {name}: {ann} = ad.no_derivative(default={spec.defaults[name]})")
            elif name in spec.defaults:
                lines.append(f"    {name}: {ann} = {spec.defaults[name]}")
            else:
                lines.append(f"    {name}: {ann}")
        for mname, kind in spec.methods.items():
            lines += [""] + self.method_lines(spec, mname, kind)
        return lines + ["", ""]

    def method_lines(self, spec: ClassSpec, mname: str, kind: str) -> list[str]:
        ch = self.ch
        # not a module-level name (a class the method builds, a helper it calls)
        me = ch.choice(tuple(n for n in SELF_NAMES if n == "self" or n not in self.taken))
        arg = ch.choice(tuple(n for n in TEMPLATE + ORDINARY + GENERATED if n != me
                              and n not in self.taken))
        floats = [f"{me}.{n}" for n in spec.names_of("float", "f64", "cut")]
        arrays = [f"{me}.{n}" for n in spec.names_of("array")]
        fn_fields = spec.names_of("fn")
        nested = spec.nested()

        def term(extra: list[str]) -> str:
            choices = floats + extra + [f"np.sum({ch.choice(arrays)})" for _ in arrays[:1]]
            for n, inner in nested:
                inner_floats = inner.names_of("float", "f64", "cut")
                if inner_floats:
                    choices.append(f"{me}.{n}.{ch.choice(inner_floats)}")
            if fn_fields:
                choices.append(f"np.sum({me}.{ch.choice(fn_fields)}({ch.choice(arrays)}))")
            return ch.choice(choices)

        others = [m for m, k in spec.methods.items() if k in ("float1", "float0")
                  and m != mname and list(spec.methods).index(m) < list(spec.methods).index(mname)]
        if kind == "float1":
            body = f"return {term([arg])} * math.tanh({arg}) + {term([])}"
            return [f"    def {mname}({me}, {arg}):", f"        {body}"]
        if kind == "float0":
            calls = []
            for m in others:
                calls.append(f"{me}.{m}(0.5)" if spec.methods[m] == "float1" else f"{me}.{m}()")
            body = f"return math.sin({term(calls)}) + {term([])} * {term([])}"
            return [f"    def {mname}({me}):", f"        {body}"]
        if kind == "prop":
            return ["    @property", f"    def {mname}({me}):",
                    f"        return {term([])} * 0.5 + {term([])}"]
        if kind == "call":
            return [f"    def __call__({me}, {arg}):",
                    f"        return {term([arg])} * {arg} + math.cos({term([])})"]
        # struct1: a structure like self, scaled
        parts = []
        for name, t in spec.fields:
            if name in spec.defaults and ch.boolean(0.5):
                continue
            if t in ("float", "f64"):
                parts.append(f"{name}={me}.{name} * math.tanh({arg})")
            elif t == "array":
                parts.append(f"{name}={me}.{name} * {arg} + 0.5")
            else:
                parts.append(f"{name}={me}.{name}")
        if spec.style == "namedtuple" or ch.boolean(0.5):
            built = f"{spec.name}({', '.join(parts)})"
        else:
            built = f"dataclasses.replace({me}, {', '.join(parts)})"
            self.features.add("struct-replace-in-method")
        return [f"    def {mname}({me}, {arg}):", f"        return {built}"]

    # -- program -------------------------------------------------------------------
    def program(self) -> StructProgram:
        ch = self.ch
        self.fname = self.module_name(MAIN_NAMES)
        specs: list[ClassSpec] = []
        inner = None
        if ch.boolean(0.35):
            inner = self.class_spec(ch.choice(("dataclass", "frozen")))
            specs.append(inner)
        for _ in range(ch.integer(1, 2)):
            style = ch.choice(("dataclass", "frozen", "frozen", "namedtuple", "dict"))
            spec = self.class_spec(style, inner if inner is not None and ch.boolean(0.7)
                                   else None)
            specs.append(spec)
            self.features.add(f"struct-{style}")
        self.specs = specs
        lines = ["import dataclasses", "import math", "from dataclasses import dataclass",
                 "from typing import Any, NamedTuple", "", "import numpy as np", "",
                 "import s2s_ad as ad", "", ""]
        for spec in specs:
            lines += self.class_lines(spec)
        # module-level helpers and wrappers
        self.helpers: list[tuple[str, ClassSpec, str]] = []  # (name, spec, "float"/"struct")
        self.wrappers: list[tuple[str, int]] = []  # differentiable_function: (name, arity)
        for spec in specs:
            if ch.boolean(0.4):
                lines += self.helper_lines(spec)
        if ch.boolean(0.3):
            lines += self.wrapper_lines()
        # a global structure (changed between calls) or a closure capturing one
        self.global_struct: tuple[str, ClassSpec] | None = None
        updates: list[list[str]] = []
        factory = None
        captured = None
        if ch.boolean(0.3):
            spec = ch.choice(specs)
            name = self.module_name(GLOBAL_NAMES)
            self.global_struct = (name, spec)
            lines += [f"{name} = {self.instance(spec)}", "", ""]
            updates = self.updates(name, spec)
            self.features.add("struct-global")
        elif ch.boolean(0.2):
            factory = self.module_name(("make", "factory", "closure", "outer", "rt", "tape"))
            captured = (self.module_name(GLOBAL_NAMES + ORDINARY), ch.choice(specs))
            self.features.add("struct-closure")
        main, params, points, array_result = self.main_function(captured, factory is not None)
        twin = None
        if factory is None:
            lines += main
        else:
            cname, cspec = captured
            lines += [f"def {factory}({cname}):"] + main + [f"    return {self.fname}", "", ""]
            lines.append(f"{self.fname} = {factory}({self.instance(cspec)})")
            twin = self.module_name((f"{self.fname}_1", "other", "g2", "value_1"))
            lines.append(f"{twin} = {factory}({self.instance(cspec)})")
        source = "\n".join(lines) + "\n"
        return StructProgram(source=source, fname=self.fname, points=points,
                             array_result=array_result, updates=updates, twin=twin,
                             features=set(self.features))

    def helper_lines(self, spec: ClassSpec) -> list[str]:
        ch = self.ch
        name = self.module_name(HELPER_NAMES)
        s = ch.choice(tuple(n for n in ORDINARY + TEMPLATE + GENERATED if n not in self.taken))
        e = ch.choice(tuple(n for n in ORDINARY + TEMPLATE if n != s and n not in self.taken))
        scope = SScope(floats=[e], structs={s: spec})
        names = _Names(ch, self.taken | {s, e, name})
        names.kinds.update({s: "struct", e: "float"})
        self.names = names
        kind = "struct" if spec.style != "dict" and ch.boolean(0.35) else "float"
        lines = []
        if ch.boolean(0.3):
            lines.append("@ad.recompute_in_pullback")
            self.features.add("struct-recompute")
        body = [f"    {e} = {e} * 0.5 + {self.expr(scope, 2)}"]
        if kind == "struct":
            body.append(f"    return {self.construction(scope, spec)}")
            self.features.add("struct-helper-returns")
        else:
            body.append(f"    return {self.expr(scope, 2)} + {e}")
        self.helpers.append((name, spec, kind))
        self.features.add("struct-helper")
        return lines + [f"def {name}({s}, {e}):"] + body + ["", ""]

    def wrapper_lines(self) -> list[str]:
        ch = self.ch
        name = self.module_name(("smooth", "product", "rt", "tape", "value", "d_x", "List"))
        if ch.boolean(0.5):
            self.wrappers.append((name, 1))
            text = (f"{name} = ad.differentiable_function(lambda x: (math.tanh(x), "
                    "lambda v: v * (1.0 - math.tanh(x) ** 2)))")
        else:
            self.wrappers.append((name, 2))
            text = (f"{name} = ad.differentiable_function(lambda a, b: (a * b, "
                    "lambda v: (v * b, v * a)))")
        self.features.add("struct-differentiable-function")
        return [text, "", ""]

    def updates(self, name: str, spec: ClassSpec) -> list[list[str]]:
        ch = self.ch
        out = []
        for _ in range(ch.integer(1, 2)):
            roll = ch.integer(0, 2)
            floats = spec.names_of("float", "f64")
            if roll == 0 or spec.style in ("frozen", "namedtuple") or not floats:
                out.append([f"{name} = {self.instance(spec)}"])
                self.features.add("struct-global-rebound")
            elif spec.style == "dict":
                out.append([f"{name}[{floats[0]!r}] = {self.real()}"])
                self.features.add("struct-global-key-set")
            else:
                out.append([f"{name}.{ch.choice(floats)} = {self.real()}"])
                self.features.add("struct-global-field-set")
            fns = spec.names_of("fn")
            if fns and spec.style == "dataclass" and ch.boolean(0.5):
                out[-1].append(f"{name}.{fns[0]} = {ch.choice(ACTIVATIONS)}")
                self.features.add("struct-global-static-swapped")
        return out

    # -- the function under test ---------------------------------------------------
    def main_function(self, captured, closure: bool):
        ch = self.ch
        pad = "    " * (2 if closure else 1)
        forbidden = set(self.taken)
        if captured:
            forbidden.add(captured[0])
        self.names = _Names(ch, forbidden)
        scope = SScope(floats=[])
        params: list[str] = []
        kinds: list[object] = []
        for _ in range(ch.integer(1, 2)):
            spec = ch.choice(self.specs)
            p = self.names.fresh("struct")
            params.append(p)
            kinds.append(spec)
            scope.structs[p] = spec
        for _ in range(ch.integer(0, 2)):
            p = self.names.fresh("float")
            params.insert(ch.integer(0, len(params)), p)
            kinds.insert(params.index(p), "float")
            scope.floats.append(p)
        if ch.boolean(0.2):
            p = self.names.fresh("array")
            params.append(p)
            kinds.append("array")
            scope.arrays.append(p)
        self.fixed: set[str] = set()  # a global or captured structure: never rebound
        for name, spec in filter(None, (self.global_struct, captured)):
            scope.structs[name] = spec
            self.fixed.add(name)
        self.params = set(params)
        body: list[str] = []
        for _ in range(ch.integer(1, self.max_statements)):
            body += self.statement(scope, pad)
        array_result = False
        if ch.boolean(0.2):
            if ch.boolean(0.5):
                body.append(f"{pad}return {ch.choice(sorted(scope.structs))}")
            else:
                body.append(f"{pad}return {self.construction(scope, ch.choice(self.specs))}")
            self.features.add("struct-result")
        elif scope.arrays and ch.boolean(0.1):
            body.append(f"{pad}return {self.array_expr(scope)}")
            array_result = True
        else:
            recent = " + ".join(scope.floats[-2:])
            body.append(f"{pad}return {self.expr(scope, 2)}" + (f" + {recent}" if recent else ""))
        header = f"{pad[4:]}def {self.fname}({', '.join(params)}):"
        points = [self.point(kinds) for _ in range(3)]
        return [header] + body, params, points, array_result

    def point(self, kinds: list) -> str:
        out = []
        for k in kinds:
            if isinstance(k, ClassSpec):
                out.append(self.instance(k))
            elif k == "array":
                out.append(self.array_text())
            else:
                out.append(self.real())
        return "(" + ", ".join(out) + ",)"

    # -- statements ----------------------------------------------------------------
    def statement(self, scope: SScope, pad: str) -> list[str]:
        kinds = ["assign", "assign", "aug", "construct", "construct", "array"]
        if scope.depth < 2:
            kinds += ["if", "for"]
        if any(sp.style in ("dataclass", "frozen") for sp in scope.structs.values()):
            kinds += ["replace"]
        if any(s.methods.get(m) == "struct1" for s in scope.structs.values() for m in s.methods):
            kinds += ["method_struct"]
        if any(k == "struct" for _, _, k in self.helpers):
            kinds += ["helper_struct"]
        if self.ch.boolean(0.05):
            kinds = ["write"]
        return getattr(self, f"stmt_{self.ch.choice(kinds)}")(scope, pad)

    def _float_target(self, scope: SScope) -> str:
        own = [v for v in scope.floats if v not in self.params]
        if scope.loop and own and self.ch.boolean(0.5):
            return self.ch.choice(own)
        name = self.names.fresh("float")
        return name

    def stmt_assign(self, scope: SScope, pad: str) -> list[str]:
        value = self.expr(scope, 2)
        target = self._float_target(scope)
        if target not in scope.floats:
            scope.floats.append(target)
        if scope.loop:
            value = f"math.tanh({value})"
        return [f"{pad}{target} = {value}"]

    def stmt_aug(self, scope: SScope, pad: str) -> list[str]:
        if not scope.floats:
            return self.stmt_assign(scope, pad)
        target = self.ch.choice(scope.floats)
        return [f"{pad}{target} += math.tanh({self.expr(scope, 2)})"]

    def stmt_array(self, scope: SScope, pad: str) -> list[str]:
        name = self.names.fresh("array")
        value = self.array_expr(scope)
        scope.arrays.append(name)
        return [f"{pad}{name} = {value}"]

    def _struct_target(self, scope: SScope, spec: ClassSpec) -> str:
        same = [s for s, sp in scope.structs.items() if sp is spec and s not in self.params
                and s not in self.fixed]
        if same and self.ch.boolean(0.4 if scope.loop else 0.2):
            return self.ch.choice(same)
        if scope.loop is None and self.ch.boolean(0.15):
            mine = [s for s, sp in scope.structs.items() if sp is spec and s in self.params]
            if mine:
                self.features.add("struct-param-rebound")
                return mine[0]
        return self.names.fresh("struct")

    def stmt_construct(self, scope: SScope, pad: str) -> list[str]:
        spec = self.ch.choice(self.specs)
        value = self.construction(scope, spec)
        target = self._struct_target(scope, spec)
        scope.structs[target] = spec
        return [f"{pad}{target} = {value}"]

    def construction(self, scope: SScope, spec: ClassSpec) -> str:
        kw = spec.style == "dict" or self.ch.boolean(0.5)
        # a function passed to a construction (finding 28 of the README: refused until
        # 4c896ba, so rare here); a function field is the last field
        parts = [(name, self.field_value(scope, t)) for name, t in self.kept_fields(spec, kw)
                 if t != "fn" or self.ch.boolean(0.1)]
        if spec.style == "dict":
            if self.ch.boolean(0.3) and all(n.isidentifier() and not keyword.iskeyword(n)
                                            for n, _ in parts):
                self.features.add("struct-dict-call")
                return f"dict({', '.join(f'{n}={v}' for n, v in parts)})"
            self.features.add("struct-dict-display")
        else:
            self.features.add("struct-construct-keywords" if kw
                              else "struct-construct-positional")
        return self.call_text(spec, parts, kw)

    def field_value(self, scope: SScope, t) -> str:
        ch = self.ch
        if isinstance(t, ClassSpec):
            have = [s for s, sp in scope.structs.items() if sp is t]
            return ch.choice(have) if have and ch.boolean(0.6) else self.construction(scope, t)
        if t == "array":
            return self.array_expr(scope)
        if t == "fn":
            return ch.choice(ACTIVATIONS)
        if t == "cut":  # a constant: a derivative through it would be cut (finite
            return self.real()  # differences would see one)
        if t == "f64" and ch.boolean(0.3):
            return f"np.float64({self.bounded(scope)})"
        if ch.boolean(0.05):
            self.features.add("struct-int-in-float-field")
            return repr(ch.choice((1, 2, -1)))
        return self.bounded(scope)

    def bounded(self, scope: SScope) -> str:
        return f"math.tanh({self.expr(scope, 1)})" if self.ch.boolean(0.6) else \
            self.expr(scope, 1)

    def stmt_replace(self, scope: SScope, pad: str) -> list[str]:
        ch = self.ch
        options = [(s, sp) for s, sp in scope.structs.items() if sp.style in ("dataclass",
                                                                               "frozen")]
        s, spec = ch.choice(options)
        dyn = [(n, t) for n, t in spec.fields if t != "fn" or ch.boolean(0.3)]
        chosen = [dyn[k] for k in sorted({ch.integer(0, len(dyn) - 1) for _ in range(2)})]
        parts = ", ".join(f"{n}={self.field_value(scope, t)}" for n, t in chosen)
        target = s if s not in self.params and s not in self.fixed and scope.loop and \
            ch.boolean(0.5) else self._struct_target(scope, spec)
        scope.structs[target] = spec
        self.features.add("struct-replace")
        return [f"{pad}{target} = dataclasses.replace({s}, {parts})"]

    def stmt_method_struct(self, scope: SScope, pad: str) -> list[str]:
        options = [(s, sp, m) for s, sp in scope.structs.items() for m, k in sp.methods.items()
                   if k == "struct1"]
        s, spec, m = self.ch.choice(options)
        value = f"{s}.{m}({self.bounded(scope)})"
        target = self._struct_target(scope, spec)
        scope.structs[target] = spec
        self.features.add("struct-method-returns")
        return [f"{pad}{target} = {value}"]

    def stmt_helper_struct(self, scope: SScope, pad: str) -> list[str]:
        options = [(h, sp) for h, sp, k in self.helpers if k == "struct"]
        h, spec = self.ch.choice(options)
        value = f"{h}({self._struct_of(scope, spec)}, {self.bounded(scope)})"
        target = self._struct_target(scope, spec)
        scope.structs[target] = spec
        return [f"{pad}{target} = {value}"]

    def _struct_of(self, scope: SScope, spec: ClassSpec) -> str:
        have = [s for s, sp in scope.structs.items() if sp is spec]
        return self.ch.choice(have) if have else self.construction(scope, spec)

    def stmt_if(self, scope: SScope, pad: str) -> list[str]:
        ch = self.ch
        cond = f"{self.expr(scope, 1)} {ch.choice(('<', '>'))} {ch.choice((0.0, 0.5, -0.25))}"
        inner = pad + "    "
        # both branches bind the same names (a structure in each, or a float)
        if ch.boolean(0.5):
            spec = ch.choice(self.specs)
            target = self._struct_target(scope, spec)
            a = scope.nested()
            b = scope.nested()
            lines = [f"{pad}if {cond}:", f"{inner}{target} = {self.construction(a, spec)}",
                     f"{pad}else:", f"{inner}{target} = {self.construction(b, spec)}"]
            scope.structs[target] = spec
            self.features.add("struct-in-branch")
            return lines
        target = self._float_target(scope)
        first = [f"{inner}{target} = {self.expr(scope, 2)}"]
        second = [f"{inner}{target} = {self.expr(scope, 2)}"]
        if target not in scope.floats:
            scope.floats.append(target)
        return [f"{pad}if {cond}:"] + first + [f"{pad}else:"] + second

    def stmt_for(self, scope: SScope, pad: str) -> list[str]:
        ch = self.ch
        i = self.names.fresh("int")
        inner = scope.nested()
        inner.loop = i
        body: list[str] = []
        # a structure rebound in every trip
        candidates = [(s, sp) for s, sp in scope.structs.items() if s not in self.params
                      and sp.style != "dict" and s not in self.fixed]
        if candidates and ch.boolean(0.6):
            s, spec = ch.choice(candidates)
            body.append(f"{pad}    {s} = {self.loop_construction(inner, s, spec)}")
            self.features.add("struct-rebound-in-loop")
        for _ in range(ch.integer(1, 2)):
            body += self.statement(inner, pad + "    ")
        scope.floats += [v for v in inner.floats if v not in scope.floats]
        return [f"{pad}for {i} in range({ch.integer(1, min(3, self.n))}):"] + body

    def loop_construction(self, scope: SScope, s: str, spec: ClassSpec) -> str:
        """``spec`` built from ``s`` itself (contracting, so values stay bounded)."""
        parts = []
        for name, t in spec.fields:
            if t in ("float", "f64"):
                parts.append(f"math.tanh({s}.{name} * 0.5 + {self.leaf(scope)})")
            elif t == "array":
                parts.append(f"np.tanh({s}.{name} * 0.5) + {self.leaf(scope)}")
            else:
                parts.append(f"{s}.{name}")
        if spec.style == "namedtuple" or self.ch.boolean(0.5):
            return f"{spec.name}({', '.join(parts)})"
        fields = [n for n, _ in spec.fields]
        return f"{spec.name}({', '.join(f'{n}={p}' for n, p in zip(fields, parts, strict=True))})"

    def stmt_write(self, scope: SScope, pad: str) -> list[str]:
        """A field or key write: s2s_ad refuses it (at its line)."""
        options = [(s, sp) for s, sp in scope.structs.items() if s not in self.fixed
                   and sp.style in ("dataclass", "dict") and sp.names_of("float")]
        if not options:
            return self.stmt_assign(scope, pad)
        s, spec = self.ch.choice(options)
        name = spec.names_of("float")[0]
        self.features.add("struct-write")
        target = f"{s}[{name!r}]" if spec.style == "dict" else f"{s}.{name}"
        return [f"{pad}{target} = {self.expr(scope, 1)}"]

    # -- expressions ---------------------------------------------------------------
    def read(self, s: str, spec: ClassSpec, name: str) -> str:
        return f"{s}[{name!r}]" if spec.style == "dict" else f"{s}.{name}"

    def leaf(self, scope: SScope) -> str:
        ch = self.ch
        options: list[str] = list(scope.floats) + [repr(ch.choice((0.5, 1.5, -0.75, 2.0)))]
        for s, spec in scope.structs.items():
            for name in spec.names_of("float", "f64", "cut"):
                options.append(self.read(s, spec, name))
            for name in spec.names_of("array"):
                r = self.read(s, spec, name)
                options += [f"np.sum({r})", f"{r}[{ch.integer(0, self.n - 1)}]",
                            f"{r}.sum()" if spec.style == "dict" else f"np.sum({r} * {r})"]
                if scope.loop:
                    options.append(f"{r}[{scope.loop}]")
            for name, inner in spec.nested():
                for iname in inner.names_of("float", "f64"):
                    options.append(f"{self.read(s, spec, name)}.{iname}")
                    self.features.add("struct-nested-read")
            for name in spec.names_of("fn"):
                arrays = spec.names_of("array")
                if arrays:
                    options.append(f"np.sum({s}.{name}({s}.{arrays[0]}))")
        for a in scope.arrays:
            options.append(f"np.sum({a})")
        return ch.choice(options)

    def expr(self, scope: SScope, depth: int) -> str:
        ch = self.ch
        if depth <= 0:
            return self.leaf(scope)
        roll = ch.integer(0, 11)
        a = self.expr(scope, depth - 1)
        if roll <= 2:
            return f"{a} {ch.choice(('+', '-', '*'))} {self.expr(scope, depth - 1)}"
        if roll == 3:
            return f"math.{ch.choice(('sin', 'cos', 'tanh'))}({a})"
        if roll == 4:
            return f"{a} / (1.0 + {a} * {a})"
        if roll in (5, 6):
            call = self.method_call(scope)
            if call:
                return call
        if roll == 7:
            helpers = [(h, sp) for h, sp, k in self.helpers if k == "float"]
            if helpers:
                h, spec = ch.choice(helpers)
                self.features.add("struct-helper-call")
                return f"{h}({self._struct_of(scope, spec)}, {a})"
        if roll == 8 and self.wrappers:
            name, arity = ch.choice(self.wrappers)
            self.features.add("struct-wrapper-call")
            return f"{name}({a})" if arity == 1 else f"{name}({a}, {self.leaf(scope)})"
        if roll == 9:
            return f"math.exp(math.tanh({a}))"
        return f"{a} * {self.leaf(scope)}"

    def method_call(self, scope: SScope) -> str | None:
        ch = self.ch
        options = []
        for s, spec in scope.structs.items():
            for m, kind in spec.methods.items():
                if kind == "float1":
                    options.append(f"{s}.{m}({self.leaf(scope)})")
                elif kind == "float0":
                    options.append(f"{s}.{m}()")
                elif kind == "prop":
                    options.append(f"{s}.{m}")
                elif kind == "call":
                    options.append(f"{s}({self.leaf(scope)})")
                elif kind == "struct1":
                    # a method's structure, read at once
                    floats = spec.names_of("float", "f64")
                    if floats:
                        options.append(f"{s}.{m}(0.5).{ch.choice(floats)}")
        if not options:
            return None
        self.features.add("struct-method-call")
        return ch.choice(options)

    def array_expr(self, scope: SScope) -> str:
        ch = self.ch
        options = list(scope.arrays)
        for s, spec in scope.structs.items():
            options += [self.read(s, spec, n) for n in spec.names_of("array")]
        a = ch.choice(options) if options else f"np.ones({self.n})"
        roll = ch.integer(0, 3)
        if roll == 0:
            return f"{a} * {self.leaf(scope)}"
        if roll == 1:
            return f"np.tanh({a} + {self.leaf(scope)})"
        if roll == 2:
            return f"{a} * 0.5 + {ch.choice(options) if options else a}"
        return a


def struct_program_from_seed(seed: int, max_statements: int = 6) -> StructProgram:
    program = StructGenerator(RandomChooser(seed), max_statements).program()
    program.seed = seed
    return program
