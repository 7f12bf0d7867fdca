"""The pipeline's stages: named once, each printing what it made, the transform
complete when the pipeline returns, normalizing done once per transform."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest
from catalogue import CATALOGUE

import s2s_ad as ad
from s2s_ad.cli import CliError, build_parser
from s2s_ad.compiler import normalize as normalize_package
from s2s_ad.compiler import pipeline, transforms
from s2s_ad.compiler.emit import function_source
from s2s_ad.compiler.parse import parse_function
from s2s_ad.compiler.pipeline import PIPELINE, STAGES
from s2s_ad.kinds import kind_of_value

README = Path(__file__).resolve().parents[2] / "README.md"


@dataclasses.dataclass
class Particle:
    position: float
    velocity: float


def energy(particle, mass):
    """Every stage between normalizing and activity changes this one."""
    speed = particle.velocity * mass
    speed = np.ones(3) * speed  # rebound to an array: a new version
    mean = np.mean((speed[0], particle.position))  # a tuple NumPy takes as data
    return mean


def kinetic(velocity, mass):
    return 0.5 * mass * velocity * velocity


def moved(particle, step):
    return Particle(particle.position + step * particle.velocity, particle.velocity)


def source_of(stage: str) -> str:
    return ad.source(energy, Particle(1.0, 2.0), 3.0, stage=stage)


def test_each_stage_prints_what_it_made():
    anf, versions, structures, tuples = map(source_of, ("anf", "versions", "structures",
                                                        "tuples"))
    assert "particle_velocity = particle.velocity" in anf  # a field read, as written
    assert "speed_1" not in anf and "speed_1 = ones_3 * speed" in versions
    assert "particle.velocity" in versions and "particle[1]" not in versions
    assert "particle_velocity = particle[1]" in structures  # lowered to a tuple item
    assert "np.array" not in structures and "tup_array = np.array(tup)" in tuples
    assert source_of("kinds").startswith("# mass: float\n")
    assert "# speed_1: float array1" in source_of("kinds")
    assert "# active: mass, mean, particle," in source_of("activity")
    for stage in STAGES:
        compile(source_of(stage), stage, "exec")


def test_anf_is_what_normalize_makes():
    fresh = normalize_package.normalize(parse_function(energy))
    assert source_of("anf") == function_source(fresh.node, fresh.parsed.filename)


def test_a_stage_that_changes_nothing_shares_the_tree_before_it():
    t = ad.differentiable(kinetic).prepare((2.0, 3.0))
    trees = t.outputs.trees
    assert trees["anf"] is trees["versions"]  # nothing rebound: split_versions never ran
    assert trees["tuples"] is trees["kinds"] is trees["activity"] is t.normal.node
    assert ad.source(kinetic, 2.0, 3.0, stage="anf") == ad.source(kinetic, 2.0, 3.0,
                                                                  stage="tuples")


def test_the_stages_after_kinds_leave_the_tree_alone(monkeypatch):
    """``kinds``, ``tuples`` and ``activity`` keep the tree the later stages go on with,
    uncopied: reversing and emitting must not change it."""
    reverse, checked_names = pipeline.reverse, []

    def checked(normal, *args):
        checked_names.append(normal.parsed.name)
        before = function_source(normal.node, "f")
        generated = reverse(normal, *args)
        assert function_source(normal.node, "f") == before, normal.parsed.name
        return generated

    monkeypatch.setattr(pipeline, "reverse", checked)
    monkeypatch.setattr(transforms, "_transforms", {})  # every function transformed anew
    cases = CATALOGUE[::3]
    for case in cases:
        transforms.transform(case.fn, [kind_of_value(a) for a in case.args], [0])
    transforms.transform(energy, [kind_of_value(Particle(1.0, 2.0)), "float"], [0, 1])
    assert len(checked_names) > len(cases)


def test_unknown_stage_names_every_stage():
    with pytest.raises(ValueError, match="choose one of parse, anf, versions, structures"):
        ad.source(kinetic, 2.0, 3.0, stage="lowered")
    with pytest.raises(ValueError, match="unknown stage 'jit'"):  # nothing to print
        ad.source(kinetic, 2.0, 3.0, stage="jit")


def test_the_stage_list_is_stated_once():
    parser = build_parser()
    for stage in STAGES:  # the CLI takes each stage the pipeline prints, and no other
        assert parser.parse_args(["show", "model.py:loss", "--stage", stage]).stage == stage
    assert parser.parse_args(["show", "model.py:loss"]).stage == "module"
    with pytest.raises(CliError, match="invalid choice: 'jit'"):
        parser.parse_args(["show", "model.py:loss", "--stage", "jit"])
    assert STAGES == tuple(s.name for s in PIPELINE if s.printed)
    assert {"parse", "anf", "forward", "pullback", "fused", "module"} <= set(STAGES)


def test_readme_lists_the_pipeline():
    text = README.read_text()
    block = re.search(r"## How it works\n\n```\n(.*?)```", text, re.S).group(1)
    assert block.splitlines() == [f"{s.name:<10} {s.makes}" for s in PIPELINE]


def test_the_transform_is_complete_when_the_pipeline_returns():
    particle = Particle(1.0, 2.0)
    t = transforms.transform(moved, [kind_of_value(particle), "float"], [0, 1])
    assert t.structured and t.structured_result  # not left to the caller to set
    plain = transforms.transform(kinetic, ["float", "float"], [0, 1])
    assert not plain.structured and not plain.structured_result
    value, pullback = ad.value_with_pullback(ad.differentiable(moved, jit=False),
                                             particle, 0.5)
    assert value == Particle(2.0, 2.0)
    assert pullback(Particle(1.0, 0.0)) == (Particle(1.0, 0.5), 2.0)


def test_a_function_is_normalized_once_per_transform(monkeypatch):
    calls = []
    original = normalize_package.normalize

    def counting(parsed):
        calls.append(parsed.name)
        return original(parsed)

    monkeypatch.setattr(transforms, "normalize", counting)
    monkeypatch.setattr(pipeline, "normalize", counting)

    def drift(position, rate):
        return position + rate * position

    made = transforms.transforms_made[0]
    transforms.transform(drift, ["float", "float"], [0, 1])
    assert calls == ["drift"] and transforms.transforms_made[0] == made + 1
    transforms.transform(drift, ["float", "int"], [0])  # other kinds: normalized again
    assert calls == ["drift", "drift"]
    transforms.transform(drift, ["float", "float"], [0, 1])  # cached: not at all
    assert calls == ["drift", "drift"]
