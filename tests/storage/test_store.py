"""The storage boundary: both stores implement the `Store` protocol, and the code calls
nothing on a store that the protocol (or the `Mirror` capability) does not declare."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from flows.storage.local import LocalStore
from flows.storage.locations import open_store
from flows.storage.s3 import S3Store
from flows.storage.store import Mirror, Store

ROOT = Path(__file__).resolve().parents[2]


def members(protocol: type) -> list[str]:
    """The names a protocol declares: its methods, properties and annotated attributes."""
    declared = set(protocol.__annotations__)
    declared |= {name for name in vars(protocol) if not name.startswith("_")}
    return sorted(declared)


def shape(function) -> list[tuple[str, object, object]]:
    """A method's parameters as (name, kind, default): what a caller relies on."""
    params = inspect.signature(function).parameters.values()
    return [(p.name, p.kind, p.default) for p in params]


@pytest.fixture(params=["local", "s3"])
def store(request, tmp_path):
    return open_store(tmp_path if request.param == "local" else "s3://bucket/prefix")


def test_both_stores_are_stores_and_only_the_s3_store_mirrors(tmp_path):
    local, s3 = open_store(tmp_path), open_store("s3://bucket/prefix")
    assert (type(local), type(s3)) == (LocalStore, S3Store)
    assert isinstance(local, Store) and isinstance(s3, Store)
    assert isinstance(s3, Mirror) and not isinstance(local, Mirror)


@pytest.mark.parametrize("protocol", [Store, Mirror])
def test_every_method_of_a_protocol_has_its_signature_in_the_stores(protocol):
    implementations = [LocalStore, S3Store] if protocol is Store else [S3Store]
    for name in members(protocol):
        declared = inspect.getattr_static(protocol, name, None)
        for cls in implementations:
            found = inspect.getattr_static(cls, name, None)
            if callable(declared):
                assert callable(found), f"{cls.__name__}.{name} is not a method"
                assert shape(found) == shape(declared), f"{cls.__name__}.{name}"
            elif isinstance(declared, property):
                assert isinstance(found, property), f"{cls.__name__}.{name} is not a property"


def test_the_declared_attributes_are_set_on_both_stores(store):
    for name in Store.__annotations__:
        assert hasattr(store, name), name
    assert store.kind in ("local", "s3")
    assert (store.root is None) == (store.kind == "s3")


def test_the_code_calls_only_what_the_protocols_declare_on_a_store():
    """Every `….store.X` and `store.X` in flows/ and transforms/ names a member of `Store` or
    `Mirror`: no caller reaches into a store's private parts or one store's extras."""
    allowed = set(members(Store)) | set(members(Mirror))
    used = {}
    for path in sorted([*(ROOT / "flows").rglob("*.py"), *(ROOT / "transforms").rglob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Attribute):
                continue
            owner = node.value
            if (isinstance(owner, ast.Attribute) and owner.attr == "store") or (
                isinstance(owner, ast.Name) and owner.id == "store"
            ):
                used.setdefault(node.attr, str(path.relative_to(ROOT)))
    assert {name: where for name, where in used.items() if name not in allowed} == {}
    assert {"read_pointer", "swap_pointer", "lock", "guarded", "mirror"} <= set(used)
