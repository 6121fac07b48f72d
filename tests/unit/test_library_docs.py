"""The library's public surface is documented: every public member of every owner-side
service has a docstring, and docs/library.md lists it under its service."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from intake.entrypoints.library import Intake, SyncIntake
from tests.support.owner_services import service_types

LIBRARY_MD = Path(__file__).resolve().parents[2] / "docs" / "library.md"


def _members(kind: type) -> list[str]:
    return [name for name in dir(kind) if not name.startswith("_")]


def _doc(kind: type, name: str) -> str | None:
    member = inspect.getattr_static(kind, name)
    return member.fget.__doc__ if isinstance(member, property) else member.__doc__


def _section(text: str, service: str) -> str:
    start = text.index(f"### `intake.{service}`")
    end = text.find("\n### ", start + 1)
    return text[start : None if end < 0 else end]


def test_every_service_member_has_a_docstring() -> None:
    missing = [
        f"{service}.{name}"
        for service, kind in service_types().items()
        for name in _members(kind)
        if not _doc(kind, name)
    ]
    assert missing == []


def test_every_service_is_a_documented_property_of_the_library() -> None:
    for service in service_types():
        prop = inspect.getattr_static(Intake, service)
        assert isinstance(prop, property)
        assert prop.fget is not None
        assert prop.fget.__doc__, service


def test_the_library_page_lists_every_member_under_its_service() -> None:
    text = LIBRARY_MD.read_text(encoding="utf-8")
    missing = []
    for service, kind in service_types().items():
        section = _section(text, service)
        listed = set(re.findall(r"^\| `([a-z_]+)[(`]", section, flags=re.MULTILINE))
        missing += [f"{service}.{name}" for name in _members(kind) if name not in listed]
    assert missing == []


def test_every_public_member_of_the_library_has_a_docstring() -> None:
    missing = [
        f"{kind.__name__}.{name}"
        for kind in (Intake, SyncIntake)
        for name in _members(kind)
        if not _doc(kind, name)
    ]
    assert missing == []


def test_the_synchronous_library_submits_as_the_async_one_does() -> None:
    submitting = {name for name in _members(Intake) if name.startswith("submit")}
    assert submitting <= set(_members(SyncIntake))
