"""The ``Literal`` types of ``hybrid_compaction._types`` mirror the Rust enums: each names exactly
the names (in the same order) of the enum the native module's JSON Schemas (``hc.schema()``)
publish, so a name added, renamed or dropped on one side only fails here.

A literal type ``X`` mirrors the output schema's ``XName`` (the oracle's schema names each enum of
the vocabulary so, by its stable names) unless :data:`ELSEWHERE` says where it is; every
``Literal`` a result TypedDict uses is one of these named types, never written inline.
"""

import typing

import pytest

import hybrid_compaction as hc
from hybrid_compaction import _types

#: Literal types whose enum is not the output schema's ``<name>Name``: (schema, definition).
ELSEWHERE = {"EventKind": ("trace", "EventKind")}

LITERALS = {
    name: value
    for name, value in vars(_types).items()
    if typing.get_origin(value) is typing.Literal
}

TYPED_DICTS = {
    name: value
    for name, value in vars(_types).items()
    if isinstance(value, type) and issubclass(value, dict) and hasattr(value, "__total__")
}


def test_the_types_are_found():
    # A refactor that hid them (a `Literal` imported otherwise) must not pass quietly.
    assert {"Outcome", "Stage", "RejectionReason", "EntryKind", "EventKind"} <= set(LITERALS)
    assert {"Assembly", "Diagnostics", "Event", "CheckReport"} <= set(TYPED_DICTS)


@pytest.mark.parametrize("name", sorted(LITERALS))
def test_literal_names_its_enum(name):
    which, definition = ELSEWHERE.get(name, ("output", f"{name}Name"))
    defs = hc.schema(which)["$defs"]
    assert definition in defs, f"{name}: the {which} schema has no {definition}"
    python = list(typing.get_args(LITERALS[name]))
    rust = defs[definition]["enum"]
    assert set(python) == set(rust), (
        f"{name}: only in _types.py {sorted(set(python) - set(rust))}, "
        f"only in the {which} schema's {definition} {sorted(set(rust) - set(python))}"
    )
    assert python == rust, f"{name}: the same names in another order"


def _literals_in(hint):
    if typing.get_origin(hint) is typing.Literal:
        yield hint
    for arg in typing.get_args(hint):
        yield from _literals_in(arg)


@pytest.mark.parametrize("name", sorted(TYPED_DICTS))
def test_typed_dicts_use_only_the_named_literals(name):
    named = {typing.get_args(v) for v in LITERALS.values()}
    for member, hint in typing.get_type_hints(TYPED_DICTS[name]).items():
        for literal in _literals_in(hint):
            assert typing.get_args(literal) in named, (
                f"{name}.{member}: an inline {literal}; name it in _types.py (it is then "
                "held to its schema enum here)"
            )
