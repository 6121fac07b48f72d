"""`SyncIntake`, the blocking wrapper of the owner-side services: every public member of
every service is called through it and gives what synchronous code can use (a value, a
blocking iterator or a raised error), never a coroutine, an async iterator or a bound
method. The list of members is read from the services themselves (`OwnerServices`): a
member added there without a case here fails."""

from __future__ import annotations

import functools
import inspect
from collections.abc import AsyncIterator, Callable, Iterator
from datetime import timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from anyio.from_thread import start_blocking_portal
from attrs import define

from intake.config import Settings
from intake.domain.deliveries import DestinationKind
from intake.domain.listing import SubmissionFilter
from intake.domain.spam.history import PastMessage
from intake.domain.spam.model import Label
from intake.domain.triage import TriageStatus
from intake.entrypoints.library import Intake, SyncIntake, _Blocking
from intake.service.admin import (
    AdminError,
    ChatRequest,
    FormChanges,
    UploadChanges,
    WorkspaceChanges,
    WorkspaceSuspended,
)
from tests.support.owner_services import service_types

BOUNDARY = "b0undary"
PDF = b"%PDF-1.7\n" + b"0123456789abcdef" * 64
MULTIPART = (
    (
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="email"\r\n\r\nada@example.com\r\n'
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="cv"; filename="cv.pdf"\r\n'
        "Content-Type: application/pdf\r\n\r\n"
    ).encode()
    + PDF
    + f"\r\n--{BOUNDARY}--\r\n".encode()
)


@define
class World:
    """A service with one of everything the services' members take, seen through the
    wrapper."""

    services: Any
    workspace_id: str
    form_id: str
    key_id: str
    endpoint_id: str
    recipient_id: str
    submission: Any


async def _first(iterator: AsyncIterator[Any]) -> Any:
    async for item in iterator:
        return item
    raise AssertionError("nothing to take")


@pytest.fixture
def world() -> Iterator[World]:
    settings = Settings.from_env(
        {"INTAKE_DATABASE_URL": "sqlite:///:memory:", "INTAKE_BLOB_URL": "memory://"}
    )
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(Intake.open(settings)) as intake,
    ):
        admin = SyncIntake(intake, portal)
        workspace = admin.workspaces.create("Acme")
        form = admin.forms.create(
            workspace.workspace_id, name="Jobs", uploads=UploadChanges(enabled=True)
        )
        submit = functools.partial(
            intake.submit_body,
            form.public_form_key,
            MULTIPART,
            f"multipart/form-data; boundary={BOUNDARY}",
        )
        assert portal.call(submit).ok
        yield World(
            services=admin,
            workspace_id=workspace.workspace_id,
            form_id=form.form_id,
            key_id=admin.keys.create(workspace.workspace_id).key.key_id,
            endpoint_id=admin.webhooks.add(
                form.form_id, "https://hooks.example.com/a"
            ).endpoint.endpoint_id,
            recipient_id=admin.recipients.add(form.form_id, "ops@example.com").recipient_id,
            submission=portal.call(_first, intake.exports.submissions(form.form_id)),
        )


VALUE, ITERATOR, RAISES = "value", "iterator", "raises"
SLACK = "https://hooks.slack.com/services/T/B/x"


def _chat(w: World) -> Any:
    """A chat destination added through the wrapper."""
    return w.services.chats.add(w.form_id, ChatRequest("slack", SLACK))


# How each public member of each service is called, and what synchronous code gets back.
CASES: dict[str, tuple[Callable[[World], Any], str]] = {
    "recipients.add": (lambda w: w.services.recipients.add(w.form_id, "b@example.com"), VALUE),
    "webhooks.add": (lambda w: w.services.webhooks.add(w.form_id, "https://h.example.com"), VALUE),
    "keys.all": (lambda w: w.services.keys.all(w.workspace_id), VALUE),
    "keys.page": (lambda w: w.services.keys.page(w.workspace_id, 10, None), VALUE),
    "keys.create": (lambda w: w.services.keys.create(w.workspace_id), VALUE),
    "forms.create": (lambda w: w.services.forms.create(w.workspace_id), VALUE),
    "workspaces.create": (lambda w: w.services.workspaces.create("Other"), VALUE),
    "exports.csv_rows": (lambda w: w.services.exports.csv_rows(w.form_id), ITERATOR),
    "submissions.files_view": (lambda w: w.services.submissions.files_view(w.submission), VALUE),
    "forms.get": (lambda w: w.services.forms.get(w.form_id), VALUE),
    "forms.all": (lambda w: w.services.forms.all(), VALUE),
    "exports.has_blob_store": (lambda w: w.services.exports.has_blob_store, VALUE),
    "deliveries.outbox": (lambda w: w.services.deliveries.outbox(), VALUE),
    "exports.read_file": (lambda w: w.services.exports.read_file(w.submission.files[0]), ITERATOR),
    "recipients.all": (lambda w: w.services.recipients.all(w.form_id), VALUE),
    "recipients.remove": (lambda w: w.services.recipients.remove(w.recipient_id), VALUE),
    "webhooks.remove": (lambda w: w.services.webhooks.remove(w.endpoint_id), VALUE),
    # No delivery is dead: the coroutine ran, and its error reaches the caller.
    "deliveries.retry_event": (lambda w: w.services.deliveries.retry_event("evt_none"), RAISES),
    "keys.revoke": (lambda w: w.services.keys.revoke(w.key_id), VALUE),
    "keys.owned": (lambda w: w.services.keys.owned(w.workspace_id, w.key_id), VALUE),
    "forms.rotate_key": (lambda w: w.services.forms.rotate_key(w.form_id), VALUE),
    "workspaces.set_active": (
        lambda w: w.services.workspaces.set_active(w.workspace_id, True),
        VALUE,
    ),
    "exports.submissions": (lambda w: w.services.exports.submissions(w.form_id), ITERATOR),
    "exports.newest": (lambda w: w.services.exports.newest(w.form_id), ITERATOR),
    "forms.update": (
        lambda w: w.services.forms.update(w.form_id, FormChanges(name="Renamed")),
        VALUE,
    ),
    "workspaces.update": (
        lambda w: w.services.workspaces.update(w.workspace_id, WorkspaceChanges()),
        VALUE,
    ),
    "workspaces.usage": (lambda w: w.services.workspaces.usage(w.workspace_id), VALUE),
    "workspaces.month_counts": (
        lambda w: w.services.workspaces.month_counts(w.workspace_id),
        VALUE,
    ),
    "workspaces.setup": (lambda w: w.services.workspaces.setup(w.workspace_id), VALUE),
    "activity.daily": (lambda w: w.services.activity.daily([w.form_id], 7, ZoneInfo("UTC")), VALUE),
    "webhooks.all": (lambda w: w.services.webhooks.all(w.form_id), VALUE),
    "workspaces.get": (lambda w: w.services.workspaces.get(w.workspace_id), VALUE),
    # The one rule of every owner-side door (a suspended workspace acts on nothing):
    # public, so that a program's own door applies it as the API and dashboard do.
    "workspaces.acting": (lambda w: w.services.workspaces.acting(w.workspace_id), VALUE),
    "workspaces.all": (lambda w: w.services.workspaces.all(), VALUE),
    # Webhooks, notification recipients and deliveries, through the key's workspace.
    "webhooks.owned": (lambda w: w.services.webhooks.owned(w.workspace_id, w.endpoint_id), VALUE),
    "recipients.owned": (
        lambda w: w.services.recipients.owned(w.workspace_id, w.recipient_id),
        VALUE,
    ),
    "deliveries.owned": (lambda w: w.services.deliveries.owned(w.workspace_id, "dlv_none"), RAISES),
    "webhooks.page": (lambda w: w.services.webhooks.page(w.workspace_id, w.form_id), VALUE),
    "recipients.page": (lambda w: w.services.recipients.page(w.workspace_id, w.form_id), VALUE),
    "webhooks.add_owned": (
        lambda w: w.services.webhooks.add_owned(w.workspace_id, w.form_id, "https://h.example.com"),
        VALUE,
    ),
    "recipients.add_owned": (
        lambda w: w.services.recipients.add_owned(w.workspace_id, w.form_id, "c@example.com"),
        VALUE,
    ),
    "recipients.consent_asked": (
        lambda w: w.services.recipients.consent_asked("unknownlink"),
        VALUE,
    ),
    "recipients.answer_consent": (
        lambda w: w.services.recipients.answer_consent("unknownlink", accept=True),
        VALUE,
    ),
    "webhooks.remove_owned": (
        lambda w: w.services.webhooks.remove_owned(w.workspace_id, w.endpoint_id),
        VALUE,
    ),
    "recipients.remove_owned": (
        lambda w: w.services.recipients.remove_owned(w.workspace_id, w.recipient_id),
        VALUE,
    ),
    "webhooks.test_owned": (
        lambda w: w.services.webhooks.test_owned(w.workspace_id, w.endpoint_id),
        VALUE,
    ),
    "webhooks.test": (lambda w: w.services.webhooks.test(w.endpoint_id), VALUE),
    "webhooks.get": (lambda w: w.services.webhooks.get(w.endpoint_id), VALUE),
    "recipients.test_owned": (
        lambda w: w.services.recipients.test_owned(w.workspace_id, w.recipient_id),
        VALUE,
    ),
    "recipients.test": (lambda w: w.services.recipients.test(w.recipient_id), VALUE),
    "deliveries.of_endpoint": (lambda w: w.services.deliveries.of_endpoint(w.endpoint_id), VALUE),
    "deliveries.endpoint_page": (
        lambda w: w.services.deliveries.endpoint_page(w.workspace_id, w.endpoint_id),
        VALUE,
    ),
    "deliveries.retry": (lambda w: w.services.deliveries.retry("dlv_none"), RAISES),
    "deliveries.retry_owned": (
        lambda w: w.services.deliveries.retry_owned(w.workspace_id, "dlv_none"),
        RAISES,
    ),
    # None is dead: the count, 0, is what synchronous code gets.
    "deliveries.retry_dead_owned": (
        lambda w: w.services.deliveries.retry_dead_owned(w.workspace_id, w.endpoint_id),
        VALUE,
    ),
    "deliveries.retry_dead": (lambda w: w.services.deliveries.retry_dead(w.endpoint_id), VALUE),
    "submissions.detail": (
        lambda w: w.services.submissions.detail(w.workspace_id, w.submission.submission_id),
        VALUE,
    ),
    "forms.page": (lambda w: w.services.forms.page(w.workspace_id, 10, None), VALUE),
    "submissions.page": (
        lambda w: w.services.submissions.page(w.workspace_id, w.form_id, SubmissionFilter()),
        VALUE,
    ),
    "submissions.inbox_page": (
        lambda w: w.services.submissions.inbox_page(w.workspace_id, w.form_id, SubmissionFilter()),
        VALUE,
    ),
    "deliveries.targets": (
        lambda w: w.services.deliveries.targets(w.workspace_id, w.form_id, set(DestinationKind)),
        VALUE,
    ),
    "forms.owned": (lambda w: w.services.forms.owned(w.workspace_id, w.form_id), VALUE),
    "forms.update_owned": (
        lambda w: w.services.forms.update_owned(w.workspace_id, w.form_id, FormChanges(name="B")),
        VALUE,
    ),
    "forms.rotate_owned_key": (
        lambda w: w.services.forms.rotate_owned_key(w.workspace_id, w.form_id),
        VALUE,
    ),
    # A form duplicated, or deleted (its submission erased, its row kept for the relay).
    "forms.duplicate": (lambda w: w.services.forms.duplicate(w.form_id), VALUE),
    "forms.duplicate_owned": (
        lambda w: w.services.forms.duplicate_owned(w.workspace_id, w.form_id),
        VALUE,
    ),
    "forms.delete": (lambda w: w.services.forms.delete(w.form_id), VALUE),
    "forms.delete_owned": (
        lambda w: w.services.forms.delete_owned(w.workspace_id, w.form_id),
        VALUE,
    ),
    "forms.finish_deletions": (lambda w: w.services.forms.finish_deletions(), VALUE),
    # Triage: a submission by its id, or through the key's workspace.
    "submissions.get": (lambda w: w.services.submissions.get(w.submission.submission_id), VALUE),
    "submissions.owned": (
        lambda w: w.services.submissions.owned(w.workspace_id, w.submission.submission_id),
        VALUE,
    ),
    "triage.release": (lambda w: w.services.triage.release(w.submission), VALUE),
    "triage.released": (lambda w: w.services.triage.released(w.submission), VALUE),
    "triage.mark_spam": (lambda w: w.services.triage.mark_spam(w.submission), VALUE),
    "triage.set_status": (
        lambda w: w.services.triage.set_status(w.submission, TriageStatus.SPAM),
        VALUE,
    ),
    "triage.delete": (lambda w: w.services.triage.delete(w.submission), VALUE),
    # An erasure on request: by address, through the workspace.
    "privacy.erase_person": (
        lambda w: w.services.privacy.erase_person(w.workspace_id, "ada@example.com", dry_run=True),
        VALUE,
    ),
    # A form's mail as its templates make it, of a sample submission.
    "forms.preview_mail": (
        lambda w: w.services.forms.preview_mail(w.form_id, "notification"),
        VALUE,
    ),
    # Which of a request's templates do not render, by field.
    "forms.template_refusals": (
        lambda w: w.services.forms.template_refusals({"notification_subject": "{{ x.__class__ }}"}),
        VALUE,
    ),
    # Chat destinations: by id for an operator, or through the key's workspace.
    "chats.add": (_chat, VALUE),
    "chats.all": (lambda w: w.services.chats.all(w.form_id), VALUE),
    "chats.remove": (lambda w: w.services.chats.remove(_chat(w).destination_id), VALUE),
    "chats.test": (lambda w: w.services.chats.test(_chat(w).destination_id), VALUE),
    "chats.owned": (
        lambda w: w.services.chats.owned(w.workspace_id, _chat(w).destination_id),
        VALUE,
    ),
    "chats.page": (lambda w: w.services.chats.page(w.workspace_id, w.form_id), VALUE),
    "chats.add_owned": (
        lambda w: w.services.chats.add_owned(
            w.workspace_id, w.form_id, ChatRequest("slack", SLACK)
        ),
        VALUE,
    ),
    "chats.remove_owned": (
        lambda w: w.services.chats.remove_owned(w.workspace_id, _chat(w).destination_id),
        VALUE,
    ),
    "chats.test_owned": (
        lambda w: w.services.chats.test_owned(w.workspace_id, _chat(w).destination_id),
        VALUE,
    ),
    # The spam filter: what it knows, an owner's history, the untouched submissions' rule.
    "spam.summary": (lambda w: w.services.spam.summary(w.workspace_id), VALUE),
    "spam.train": (
        lambda w: w.services.spam.train(
            w.workspace_id, Label.SPAM, [PastMessage({"message": "cheap pills"}, None, None)]
        ),
        VALUE,
    ),
    "spam.settle_untouched": (
        lambda w: w.services.spam.settle_untouched(timedelta(days=14)),
        VALUE,
    ),
}


def _public_members() -> set[str]:
    """Every public member, as `service.member`."""
    services = service_types()
    return {
        f"{service}.{name}"
        for service, kind in services.items()
        for name in dir(kind)
        if not name.startswith("_")
    }


def _assert_plain(value: object) -> None:
    """Something synchronous code can use as it is."""
    assert not inspect.isawaitable(value), value
    assert not isinstance(value, AsyncIterator), value
    assert not inspect.ismethod(value), value
    assert not inspect.isfunction(value), value


def test_every_public_member_of_a_service_has_a_case() -> None:
    assert set(CASES) == _public_members()


def test_the_wrapper_lists_every_public_member_of_each_service(world: World) -> None:
    listed = {
        f"{service}.{name}"
        for service in service_types()
        for name in dir(getattr(world.services, service))
    }
    assert listed >= _public_members()


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_member_gives_what_synchronous_code_can_use(world: World, name: str) -> None:
    call, kind = CASES[name]

    if kind == RAISES:
        with pytest.raises(AdminError):
            call(world)
        return
    result = call(world)

    if kind == ITERATOR:
        assert isinstance(result, Iterator), result
        items = list(result)
        assert items, f"{name} gave nothing"
        for item in items:
            _assert_plain(item)
    else:
        _assert_plain(result)


def test_a_file_read_through_the_wrapper_is_the_file(world: World) -> None:
    assert world.services.exports.has_blob_store is True
    assert b"".join(world.services.exports.read_file(world.submission.files[0])) == PDF


def test_a_suspended_workspace_is_refused_acting_through_the_wrapper(world: World) -> None:
    world.services.workspaces.set_active(world.workspace_id, False)

    with pytest.raises(WorkspaceSuspended):
        world.services.workspaces.acting(world.workspace_id)
    assert world.services.workspaces.get(world.workspace_id).active is False


class _Counting:
    """A service-shaped object whose async iterator counts what it has produced."""

    def __init__(self) -> None:
        self.produced = 0
        self.closed = False

    async def rows(self, count: int) -> AsyncIterator[int]:
        try:
            for row in range(count):
                self.produced += 1
                yield row
        finally:
            self.closed = True


def test_an_async_iterator_is_streamed_an_item_at_a_time_and_closed_when_left() -> None:
    target = _Counting()
    with start_blocking_portal() as portal:
        rows = _Blocking(target, portal).rows(1_000_000)

        assert next(rows) == 0
        assert next(rows) == 1
        assert target.produced == 2
        rows.close()
        assert target.closed
