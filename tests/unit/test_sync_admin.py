"""`SyncIntake.admin`, the blocking wrapper of `Admin`: every public member of `Admin` is
called through it and gives what synchronous code can use (a value, a blocking iterator
or a raised error), never a coroutine, an async iterator or a bound method. The list of
members is read from `Admin` itself: a member added there without a case here fails."""

from __future__ import annotations

import functools
import inspect
from collections.abc import AsyncIterator, Callable, Iterator
from datetime import timedelta
from typing import Any, cast
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
from intake.entrypoints.library import Intake, SyncIntake
from intake.service.admin import (
    Admin,
    AdminError,
    ChatRequest,
    FormChanges,
    UploadChanges,
    WorkspaceChanges,
    WorkspaceSuspended,
)

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
    """A service with one of everything the admin members take, seen through the wrapper."""

    admin: Any
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
        admin = SyncIntake(intake, portal).admin
        workspace = admin.create_workspace("Acme")
        form = admin.create_form(
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
            admin=admin,
            workspace_id=workspace.workspace_id,
            form_id=form.form_id,
            key_id=admin.create_api_key(workspace.workspace_id).key.key_id,
            endpoint_id=admin.add_webhook(
                form.form_id, "https://hooks.example.com/a"
            ).endpoint.endpoint_id,
            recipient_id=admin.add_recipient(form.form_id, "ops@example.com").recipient_id,
            submission=portal.call(_first, intake.admin.submissions(form.form_id)),
        )


VALUE, ITERATOR, RAISES = "value", "iterator", "raises"
SLACK = "https://hooks.slack.com/services/T/B/x"


def _chat(w: World) -> Any:
    """A chat destination added through the wrapper."""
    return w.admin.add_chat(w.form_id, ChatRequest("slack", SLACK))


# How each public member of Admin is called, and what synchronous code gets back.
CASES: dict[str, tuple[Callable[[World], Any], str]] = {
    "add_recipient": (lambda w: w.admin.add_recipient(w.form_id, "b@example.com"), VALUE),
    "add_webhook": (lambda w: w.admin.add_webhook(w.form_id, "https://h.example.com"), VALUE),
    "api_keys": (lambda w: w.admin.api_keys(w.workspace_id), VALUE),
    "api_key_page": (lambda w: w.admin.api_key_page(w.workspace_id, 10, None), VALUE),
    "create_api_key": (lambda w: w.admin.create_api_key(w.workspace_id), VALUE),
    "create_form": (lambda w: w.admin.create_form(w.workspace_id), VALUE),
    "create_workspace": (lambda w: w.admin.create_workspace("Other"), VALUE),
    "export_csv_rows": (lambda w: w.admin.export_csv_rows(w.form_id), ITERATOR),
    "files_view": (lambda w: w.admin.files_view(w.submission), VALUE),
    "form": (lambda w: w.admin.form(w.form_id), VALUE),
    "forms": (lambda w: w.admin.forms(), VALUE),
    "has_blob_store": (lambda w: w.admin.has_blob_store, VALUE),
    "outbox": (lambda w: w.admin.outbox(), VALUE),
    "read_file": (lambda w: w.admin.read_file(w.submission.files[0]), ITERATOR),
    "recipients": (lambda w: w.admin.recipients(w.form_id), VALUE),
    "remove_recipient": (lambda w: w.admin.remove_recipient(w.recipient_id), VALUE),
    "remove_webhook": (lambda w: w.admin.remove_webhook(w.endpoint_id), VALUE),
    # No delivery is dead: the coroutine ran, and its error reaches the caller.
    "retry": (lambda w: w.admin.retry("evt_none"), RAISES),
    "revoke_api_key": (lambda w: w.admin.revoke_api_key(w.key_id), VALUE),
    "owned_api_key": (lambda w: w.admin.owned_api_key(w.workspace_id, w.key_id), VALUE),
    "rotate_key": (lambda w: w.admin.rotate_key(w.form_id), VALUE),
    "set_workspace_active": (lambda w: w.admin.set_workspace_active(w.workspace_id, True), VALUE),
    "submissions": (lambda w: w.admin.submissions(w.form_id), ITERATOR),
    "newest_submissions": (lambda w: w.admin.newest_submissions(w.form_id), ITERATOR),
    "update_form": (
        lambda w: w.admin.update_form(w.form_id, FormChanges(name="Renamed")),
        VALUE,
    ),
    "update_workspace": (
        lambda w: w.admin.update_workspace(w.workspace_id, WorkspaceChanges()),
        VALUE,
    ),
    "usage": (lambda w: w.admin.usage(w.workspace_id), VALUE),
    "month_counts": (lambda w: w.admin.month_counts(w.workspace_id), VALUE),
    "setup": (lambda w: w.admin.setup(w.workspace_id), VALUE),
    "activity": (lambda w: w.admin.activity([w.form_id], 7, ZoneInfo("UTC")), VALUE),
    "webhooks": (lambda w: w.admin.webhooks(w.form_id), VALUE),
    "workspace": (lambda w: w.admin.workspace(w.workspace_id), VALUE),
    # The one rule of every owner-side door (a suspended workspace acts on nothing):
    # public, so that a program's own door applies it as the API and dashboard do.
    "acting_workspace": (lambda w: w.admin.acting_workspace(w.workspace_id), VALUE),
    "workspaces": (lambda w: w.admin.workspaces(), VALUE),
    # Webhooks, notification recipients and deliveries, through the key's workspace.
    "owned_endpoint": (lambda w: w.admin.owned_endpoint(w.workspace_id, w.endpoint_id), VALUE),
    "owned_recipient": (
        lambda w: w.admin.owned_recipient(w.workspace_id, w.recipient_id),
        VALUE,
    ),
    "owned_delivery": (lambda w: w.admin.owned_delivery(w.workspace_id, "dlv_none"), RAISES),
    "owned_webhooks": (lambda w: w.admin.owned_webhooks(w.workspace_id, w.form_id), VALUE),
    "owned_recipients": (lambda w: w.admin.owned_recipients(w.workspace_id, w.form_id), VALUE),
    "add_owned_webhook": (
        lambda w: w.admin.add_owned_webhook(w.workspace_id, w.form_id, "https://h.example.com"),
        VALUE,
    ),
    "add_owned_recipient": (
        lambda w: w.admin.add_owned_recipient(w.workspace_id, w.form_id, "c@example.com"),
        VALUE,
    ),
    "consent_asked": (lambda w: w.admin.consent_asked("unknownlink"), VALUE),
    "answer_consent": (lambda w: w.admin.answer_consent("unknownlink", accept=True), VALUE),
    "remove_owned_webhook": (
        lambda w: w.admin.remove_owned_webhook(w.workspace_id, w.endpoint_id),
        VALUE,
    ),
    "remove_owned_recipient": (
        lambda w: w.admin.remove_owned_recipient(w.workspace_id, w.recipient_id),
        VALUE,
    ),
    "test_webhook": (lambda w: w.admin.test_webhook(w.workspace_id, w.endpoint_id), VALUE),
    "test_endpoint": (lambda w: w.admin.test_endpoint(w.endpoint_id), VALUE),
    "test_owned_recipient": (
        lambda w: w.admin.test_owned_recipient(w.workspace_id, w.recipient_id),
        VALUE,
    ),
    "test_recipient": (lambda w: w.admin.test_recipient(w.recipient_id), VALUE),
    "endpoint_deliveries": (lambda w: w.admin.endpoint_deliveries(w.endpoint_id), VALUE),
    "endpoint_delivery_page": (
        lambda w: w.admin.endpoint_delivery_page(w.workspace_id, w.endpoint_id),
        VALUE,
    ),
    "retry_delivery": (lambda w: w.admin.retry_delivery("dlv_none"), RAISES),
    "retry_owned_delivery": (
        lambda w: w.admin.retry_owned_delivery(w.workspace_id, "dlv_none"),
        RAISES,
    ),
    # None is dead: the count, 0, is what synchronous code gets.
    "retry_dead_webhook": (
        lambda w: w.admin.retry_dead_webhook(w.workspace_id, w.endpoint_id),
        VALUE,
    ),
    "retry_dead_endpoint": (lambda w: w.admin.retry_dead_endpoint(w.endpoint_id), VALUE),
    "submission_detail": (
        lambda w: w.admin.submission_detail(w.workspace_id, w.submission.submission_id),
        VALUE,
    ),
    "form_page": (lambda w: w.admin.form_page(w.workspace_id, 10, None), VALUE),
    "submission_page": (
        lambda w: w.admin.submission_page(w.workspace_id, w.form_id, SubmissionFilter()),
        VALUE,
    ),
    "inbox_page": (
        lambda w: w.admin.inbox_page(w.workspace_id, w.form_id, SubmissionFilter()),
        VALUE,
    ),
    "delivery_targets": (
        lambda w: w.admin.delivery_targets(w.workspace_id, w.form_id, set(DestinationKind)),
        VALUE,
    ),
    "workspace_form": (lambda w: w.admin.workspace_form(w.workspace_id, w.form_id), VALUE),
    "owned_form": (lambda w: w.admin.owned_form(w.workspace_id, w.form_id), VALUE),
    "update_owned_form": (
        lambda w: w.admin.update_owned_form(w.workspace_id, w.form_id, FormChanges(name="B")),
        VALUE,
    ),
    "rotate_owned_key": (lambda w: w.admin.rotate_owned_key(w.workspace_id, w.form_id), VALUE),
    # A form duplicated, or deleted (its submission erased, its row kept for the relay).
    "duplicate_form": (lambda w: w.admin.duplicate_form(w.form_id), VALUE),
    "duplicate_owned_form": (
        lambda w: w.admin.duplicate_owned_form(w.workspace_id, w.form_id),
        VALUE,
    ),
    "delete_form": (lambda w: w.admin.delete_form(w.form_id), VALUE),
    "delete_owned_form": (lambda w: w.admin.delete_owned_form(w.workspace_id, w.form_id), VALUE),
    "finish_form_deletions": (lambda w: w.admin.finish_form_deletions(), VALUE),
    # Triage: a submission by its id, or through the key's workspace.
    "submission": (lambda w: w.admin.submission(w.submission.submission_id), VALUE),
    "owned_submission": (
        lambda w: w.admin.owned_submission(w.workspace_id, w.submission.submission_id),
        VALUE,
    ),
    "release": (lambda w: w.admin.release(w.submission), VALUE),
    "released": (lambda w: w.admin.released(w.submission), VALUE),
    "mark_spam": (lambda w: w.admin.mark_spam(w.submission), VALUE),
    "set_status": (lambda w: w.admin.set_status(w.submission, TriageStatus.SPAM), VALUE),
    "delete_submission": (lambda w: w.admin.delete_submission(w.submission), VALUE),
    # An erasure on request: by address, through the workspace.
    "erase_person": (
        lambda w: w.admin.erase_person(w.workspace_id, "ada@example.com", dry_run=True),
        VALUE,
    ),
    # A form's mail as its templates make it, of a sample submission.
    "preview_mail": (lambda w: w.admin.preview_mail(w.form_id, "notification"), VALUE),
    # Which of a request's templates do not render, by field.
    "template_refusals": (
        lambda w: w.admin.template_refusals({"notification_subject": "{{ x.__class__ }}"}),
        VALUE,
    ),
    # Chat destinations: by id for an operator, or through the key's workspace.
    "add_chat": (_chat, VALUE),
    "chats": (lambda w: w.admin.chats(w.form_id), VALUE),
    "remove_chat": (lambda w: w.admin.remove_chat(_chat(w).destination_id), VALUE),
    "test_chat": (lambda w: w.admin.test_chat(_chat(w).destination_id), VALUE),
    "owned_chat": (
        lambda w: w.admin.owned_chat(w.workspace_id, _chat(w).destination_id),
        VALUE,
    ),
    "owned_chats": (lambda w: w.admin.owned_chats(w.workspace_id, w.form_id), VALUE),
    "add_owned_chat": (
        lambda w: w.admin.add_owned_chat(w.workspace_id, w.form_id, ChatRequest("slack", SLACK)),
        VALUE,
    ),
    "remove_owned_chat": (
        lambda w: w.admin.remove_owned_chat(w.workspace_id, _chat(w).destination_id),
        VALUE,
    ),
    "test_owned_chat": (
        lambda w: w.admin.test_owned_chat(w.workspace_id, _chat(w).destination_id),
        VALUE,
    ),
    # The spam filter: what it knows, an owner's history, the untouched submissions' rule.
    "spam_summary": (lambda w: w.admin.spam_summary(w.workspace_id), VALUE),
    "train_spam_filter": (
        lambda w: w.admin.train_spam_filter(
            w.workspace_id, Label.SPAM, [PastMessage({"message": "cheap pills"}, None, None)]
        ),
        VALUE,
    ),
    "settle_untouched": (lambda w: w.admin.settle_untouched(timedelta(days=14)), VALUE),
}


def _public_members(cls: type) -> set[str]:
    return {name for name in dir(cls) if not name.startswith("_")}


def _assert_plain(value: object) -> None:
    """Something synchronous code can use as it is."""
    assert not inspect.isawaitable(value), value
    assert not isinstance(value, AsyncIterator), value
    assert not inspect.ismethod(value), value
    assert not inspect.isfunction(value), value


def test_every_public_member_of_admin_has_a_case() -> None:
    assert set(CASES) == _public_members(Admin)


def test_the_wrapper_lists_every_public_member_of_admin(world: World) -> None:
    assert set(dir(world.admin)) >= _public_members(Admin)


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
    assert world.admin.has_blob_store is True
    assert b"".join(world.admin.read_file(world.submission.files[0])) == PDF


def test_a_suspended_workspace_is_refused_acting_through_the_wrapper(world: World) -> None:
    world.admin.set_workspace_active(world.workspace_id, False)

    with pytest.raises(WorkspaceSuspended):
        world.admin.acting_workspace(world.workspace_id)
    assert world.admin.workspace(world.workspace_id).active is False


class _Counting:
    """An admin-shaped object whose async iterator counts what it has produced."""

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
        admin = SyncIntake(cast(Intake, _Holder(target)), portal).admin
        rows = admin.rows(1_000_000)

        assert next(rows) == 0
        assert next(rows) == 1
        assert target.produced == 2
        rows.close()
        assert target.closed


@define
class _Holder:
    admin: object
