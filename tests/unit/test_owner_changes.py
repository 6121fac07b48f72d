"""The changes asked of a workspace or a form: a value not given leaves the setting as it
is; where None is a value (no limit, no challenge, no redirect), None takes it away."""

from __future__ import annotations

import pytest

from intake.adapters.memory import FakeClock, InMemoryStore, SeededIdSource
from intake.domain.model import Challenge, ChallengeProvider, FieldRule, Plan, RuleKind
from intake.service.admin import (
    AdminError,
    FormChanges,
    OwnerServices,
    WorkspaceChanges,
    owner_services,
)

pytestmark = pytest.mark.anyio


def _services() -> OwnerServices:
    return owner_services(InMemoryStore(), FakeClock(), SeededIdSource())


async def test_a_workspace_keeps_its_limits_when_none_is_given() -> None:
    services = _services()
    workspace = await services.workspaces.create("Acme", monthly_limit=10, storage_limit=2048)

    same = await services.workspaces.update(workspace.workspace_id, WorkspaceChanges(Plan.BUSINESS))

    assert (same.plan, same.monthly_limit, same.storage_limit) == (Plan.BUSINESS, 10, 2048)


async def test_a_workspace_limit_given_as_none_is_dropped() -> None:
    services = _services()
    workspace = await services.workspaces.create("Acme", monthly_limit=10, storage_limit=2048)

    dropped = await services.workspaces.update(
        workspace.workspace_id, WorkspaceChanges(monthly_limit=None, storage_limit=None)
    )

    assert (dropped.plan, dropped.monthly_limit, dropped.storage_limit) == (Plan.FREE, None, None)


async def test_a_negative_storage_limit_is_refused_and_nothing_changes() -> None:
    services = _services()
    workspace = await services.workspaces.create("Acme")

    with pytest.raises(AdminError, match="cannot be negative"):
        await services.workspaces.update(
            workspace.workspace_id, WorkspaceChanges(Plan.BUSINESS, storage_limit=-1)
        )

    assert await services.workspaces.get(workspace.workspace_id) == workspace


async def test_a_form_keeps_its_challenge_and_redirect_when_they_are_not_given() -> None:
    services = _services()
    workspace = await services.workspaces.create("Acme")
    challenge = Challenge(ChallengeProvider.TURNSTILE, "secret")
    form = await services.forms.create(
        workspace.workspace_id, challenge=challenge, redirect_url="https://shop.example/thanks"
    )

    renamed = await services.forms.update(form.form_id, FormChanges(name="Renamed"))

    assert renamed.name == "Renamed"
    assert renamed.challenge == challenge
    assert renamed.redirect_url == "https://shop.example/thanks"


async def test_a_challenge_or_redirect_given_as_none_is_taken_away() -> None:
    services = _services()
    workspace = await services.workspaces.create("Acme")
    form = await services.forms.create(
        workspace.workspace_id,
        challenge=Challenge(ChallengeProvider.TURNSTILE, "secret"),
        redirect_url="https://shop.example/thanks",
    )

    cleared = await services.forms.update(
        form.form_id, FormChanges(challenge=None, redirect_url=None)
    )

    assert (cleared.challenge, cleared.redirect_url, cleared.name) == (None, None, form.name)


def test_lists_given_are_kept_as_they_were_given_once() -> None:
    rule = FieldRule("email", RuleKind.EMAIL)
    changes = FormChanges(allowed_origins=iter(["https://shop.example"]), rules=[rule])

    assert changes.allowed_origins == ("https://shop.example",)
    assert changes.rules == (rule,)
    assert FormChanges().allowed_origins is None
