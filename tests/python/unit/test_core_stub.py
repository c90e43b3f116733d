"""accordion/_core.pyi against the module it types: every name bound is stubbed, nothing
else is, and HookOptions' settings are exactly the core's table. A binding added without its
stub (or a stub left behind) fails here, in a second, not in a user's type checker."""

import ast
import os

import pytest

import accordion
import accordion._core as core

STUB = os.path.join(os.path.dirname(accordion.__file__), "_core.pyi")
# Written by the stub only: TypedDicts that describe what the tables return.
STUB_ONLY = {"RunSettingRow", "SchemeRow", "PolicyRow", "LayerRow"}
# Metadata HookOptions carries beside the run settings (what the trace's writer needs).
WRITER_ONLY = {"trace", "overwrite", "model", "dataset", "train_samples", "config_json", "ranks_per_node"}


def stub_tree():
    with open(STUB) as f:
        return ast.parse(f.read())


def stub_names():
    names = {}
    for node in stub_tree().body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            names[node.name] = node
        elif isinstance(node, ast.AnnAssign):
            names[node.target.id] = node
    return names


def class_members(node):
    members = set()
    for item in node.body:
        if isinstance(item, ast.FunctionDef):
            members.add(item.name)
        elif isinstance(item, ast.AnnAssign):
            members.add(item.target.id)
    return members


def test_the_stub_ships_beside_the_module():
    assert os.path.exists(STUB), STUB


def test_every_bound_name_is_stubbed_and_nothing_else():
    bound = {n for n in dir(core) if not n.startswith("_")} | {"__version__"}
    stubbed = set(stub_names()) - STUB_ONLY
    assert bound == stubbed, f"bound only: {sorted(bound - stubbed)}; stubbed only: {sorted(stubbed - bound)}"


@pytest.mark.parametrize("cls", ["Core", "DistributedSampler", "TrainingData", "EpochSummary"])
def test_every_method_and_property_is_stubbed(cls):
    runtime = {n for n in dir(getattr(core, cls)) if not n.startswith("_")}
    stubbed = {n for n in class_members(stub_names()[cls]) if not n.startswith("_")}
    assert runtime == stubbed, f"bound only: {sorted(runtime - stubbed)}; stubbed only: {sorted(stubbed - runtime)}"


def test_hook_options_are_the_tables_keywords_and_the_writers_metadata():
    table = {row["keyword"] for row in core.run_settings()}
    stubbed = class_members(stub_names()["HookOptions"]) - {"__init__"}
    runtime = {n for n in dir(core.HookOptions) if not n.startswith("_")}
    assert stubbed == runtime
    assert stubbed - WRITER_ONLY == table


def test_the_stubs_types_match_the_defaults():
    kinds = {"bool": bool, "int": int, "float": float, "str": str}
    annotations = {item.target.id: item.annotation.id for item in stub_names()["HookOptions"].body
                   if isinstance(item, ast.AnnAssign)}
    options = core.HookOptions()
    for row in core.run_settings():
        expected = kinds[annotations[row["keyword"]]]
        value = getattr(options, row["keyword"])
        assert type(value) is expected or (expected is float and type(value) is int), (row["keyword"], value)
        assert value == row["default"], row["keyword"]
