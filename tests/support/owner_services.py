"""The services `OwnerServices` makes, by name, each with its class: what the tests of
the library's wrappers and docs go through, service by service."""

from __future__ import annotations

from functools import cached_property
from typing import get_type_hints

from intake.service import admin
from intake.service.admin import OwnerServices


def service_types() -> dict[str, type]:
    # The classes are named under TYPE_CHECKING in services.py (each is imported when
    # first made): the package's names resolve them.
    names = {name: getattr(admin, name) for name in admin.__all__}
    return {
        name: get_type_hints(member.func, localns=names)["return"]
        for name, member in vars(OwnerServices).items()
        if isinstance(member, cached_property) and not name.startswith("_")
    }
