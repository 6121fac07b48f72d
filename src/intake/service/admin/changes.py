"""The changes an operator asks of a workspace, a form and a form's upload policy: each a
frozen value whose fields tell a value given from one not given."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import TYPE_CHECKING, Final

from attrs import evolve, field, frozen

from intake.domain.model import Challenge, FieldRule, Form, FormMode, Plan, Workspace
from intake.domain.uploads import (
    MAX_FILE_SIZE_CEILING,
    MAX_FILES_CEILING,
    UploadPolicy,
    normalize_type_pattern,
)
from intake.service.admin.errors import AdminError
from intake.service.admin.inputs import (
    UPLOADS,
    check_name,
    check_origins,
    check_redirect,
    check_retention_days,
    check_rules,
    check_storage_limit,
    check_threshold,
)

if TYPE_CHECKING:  # message_changes.py takes UNSET from here
    from intake.service.admin.message_changes import MessageChanges


class Unset(enum.Enum):
    """A value not given, where None is a value (no limit, no challenge...). An enum of
    one member, so `T | None | Unset` is a type mypy checks."""

    UNSET = "unset"


UNSET: Final = Unset.UNSET


def _origins(values: Iterable[str] | None) -> tuple[str, ...] | None:
    return None if values is None else tuple(values)


def _rules(values: Iterable[FieldRule] | None) -> tuple[FieldRule, ...] | None:
    return None if values is None else tuple(values)


@frozen
class WorkspaceChanges:
    """Changes to a workspace. `plan` None leaves it as it is; a limit UNSET leaves it,
    None drops the workspace's own limit (its plan's, or the default, applies)."""

    plan: Plan | None = None
    monthly_limit: int | Unset | None = UNSET
    storage_limit: int | Unset | None = UNSET

    def apply(self, workspace: Workspace) -> Workspace:
        if self.plan is not None:
            workspace = evolve(workspace, plan=self.plan)
        if not isinstance(self.monthly_limit, Unset):
            workspace = evolve(workspace, monthly_limit=self.monthly_limit)
        if not isinstance(self.storage_limit, Unset):
            check_storage_limit(self.storage_limit)
            workspace = evolve(workspace, storage_limit=self.storage_limit)
        return workspace


@frozen
class FormChanges:
    """Changes to a form. A field None leaves the setting as it is; `challenge`,
    `redirect_url` and `retention_days`, where None is a value (none), are left as they
    are when UNSET. A list
    given replaces the form's whole list; `uploads` says how its upload policy changes."""

    name: str | None = None
    mode: FormMode | None = None
    allowed_origins: tuple[str, ...] | None = field(default=None, converter=_origins)
    rules: tuple[FieldRule, ...] | None = field(default=None, converter=_rules)
    challenge: Challenge | Unset | None = UNSET
    redirect_url: str | Unset | None = UNSET
    spam_threshold: float | None = None
    enabled: bool | None = None
    uploads: UploadChanges | None = None
    retention_days: int | Unset | None = UNSET  # None: kept until erased
    messages: MessageChanges | None = None  # what it mails and keeps

    def apply(self, form: Form) -> Form:
        """`form` with every change but `uploads`, which needs to know where files are kept
        (`Forms.update` applies it)."""
        if self.name is not None:
            form = evolve(form, name=check_name(self.name))
        if self.mode is not None:
            form = evolve(form, mode=self.mode)
        if self.allowed_origins is not None:
            form = evolve(form, allowed_origins=check_origins(self.allowed_origins))
        if self.rules is not None:
            form = evolve(form, rules=check_rules(self.rules))
        if not isinstance(self.challenge, Unset):
            form = evolve(form, challenge=self.challenge)
        if not isinstance(self.redirect_url, Unset):
            form = evolve(form, redirect_url=check_redirect(self.redirect_url))
        if self.spam_threshold is not None:
            form = evolve(form, spam_threshold=check_threshold(self.spam_threshold))
        if self.enabled is not None:
            form = evolve(form, enabled=self.enabled)
        if not isinstance(self.retention_days, Unset):
            form = evolve(form, retention_days=check_retention_days(self.retention_days))
        if self.messages is not None:
            form = evolve(form, messages=self.messages.apply(form.messages, form.name))
        return form


@frozen
class UploadChanges:
    """Changes to a form's upload policy, as an operator asks for them: `enabled=False`
    turns uploads off; `enabled=True`, or any value given, turns them on. A value not
    given stays as the form has it, or takes its default when uploads were off."""

    enabled: bool | None = None
    allowed_types: tuple[str, ...] | None = None
    max_file_size: int | None = None
    max_total_size: int | None = None
    max_files: int | None = None

    def _given(self) -> list[str]:
        values = {
            "allowed_types": self.allowed_types,
            "max_file_size": self.max_file_size,
            "max_total_size": self.max_total_size,
            "max_files": self.max_files,
        }
        return [name for name, value in values.items() if value is not None]

    def apply(self, current: UploadPolicy | None) -> UploadPolicy | None:
        given = self._given()
        if self.enabled is False:
            if given:
                names = ", ".join(given)
                raise AdminError(
                    f"uploads cannot be turned off and given {names} at once", field=UPLOADS
                )
            return None
        if self.enabled is None and not given:
            return current
        base = current or UploadPolicy()
        file_size = _size("max_file_size", self.max_file_size, base.max_file_size)
        total_size = _size("max_total_size", self.max_total_size, base.max_total_size)
        files = base.max_files if self.max_files is None else self.max_files
        if not 1 <= files <= MAX_FILES_CEILING:
            raise AdminError(
                f"max_files must be 1 to {MAX_FILES_CEILING}, not {files}", field=UPLOADS
            )
        types = base.allowed_types
        if self.allowed_types is not None:
            types = _type_patterns(self.allowed_types)
        try:
            return UploadPolicy(
                allowed_types=types,
                max_file_size=file_size,
                max_total_size=total_size,
                max_files=files,
            )
        except ValueError as error:  # the policy's own checks, should a new one be added
            raise AdminError(str(error), field=UPLOADS) from None


def _size(name: str, given: int | None, current: int) -> int:
    if given is None:
        return current
    if not 1 <= given <= MAX_FILE_SIZE_CEILING:
        raise AdminError(
            f"{name} must be 1 to {MAX_FILE_SIZE_CEILING} bytes, not {given}", field=UPLOADS
        )
    return given


def _type_patterns(values: Iterable[str]) -> tuple[str, ...]:
    patterns: list[str] = []
    for value in values:
        try:
            pattern = normalize_type_pattern(value)
        except ValueError:
            raise AdminError(
                f"not a MIME type or pattern: {value!r} (type/subtype, type/* or */*)",
                field=UPLOADS,
            ) from None
        if pattern not in patterns:
            patterns.append(pattern)
    if not patterns:
        raise AdminError("a form that takes files accepts at least one type", field=UPLOADS)
    return tuple(patterns)
