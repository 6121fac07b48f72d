"""The workspace storage ceiling through the real app: files of every status count, a
submission whose files would pass it is refused the same way whatever its spam score,
and its files are taken back (docs/uploads.md, "Storage ceiling and spam
retention")."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from intake.config import Settings
from intake.domain.model import SubmissionStatus
from intake.service.admin import WorkspaceChanges
from tests.http.conftest import Backend, ServiceFactory, assert_error
from tests.http.test_uploads import FIELDS, Uploads, _blob_store, pdf, s3_server  # noqa: F401
from tests.support.s3_server import S3Server

# Also on PostgreSQL (tests/http/conftest.py): the storage ceiling, checked inside the
# commit.
pytestmark = pytest.mark.postgres_smoke

SPAM = {
    "name": "Ada",
    "message": "Buy viagra now! Click here: http://a.example http://b.example http://c.example",
}
FIRST = 12_000  # the file that fills most of the ceiling
LIMIT = FIRST + 5_000  # room for one small file, not for another of 9,000 bytes


@pytest.fixture
def capped(
    backend: Backend,
    make_service: ServiceFactory,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> Iterator[Uploads]:
    blobs, bucket = _blob_store(backend, tmp_path, request)
    svc = make_service(Settings(workspace_storage_limit=LIMIT), blobs=blobs)
    try:
        yield Uploads(svc)
    finally:
        svc.run(svc.blobs.aclose)
        if bucket is not None:
            server: S3Server = request.getfixturevalue("s3_server")
            server.drop_bucket(bucket)


def cv(size: int, seed: int) -> list[tuple[str, str, bytes, str]]:
    return [("cv", "cv.pdf", pdf(size, seed), "application/pdf")]


def statuses(up: Uploads) -> list[SubmissionStatus]:
    return [s.status for s in up.svc.submissions(up.form.form_id)]


def test_spam_with_files_is_refused_at_the_ceiling_exactly_as_accepted(capped: Uploads) -> None:
    up = capped
    assert up.post(files=cv(FIRST, 1)).status_code == 201

    accepted = up.post(files=cv(9_000, 2))
    spam = up.post(SPAM, cv(9_000, 3))

    assert_error(accepted, "quota_exceeded")
    assert_error(spam, "quota_exceeded")
    assert spam.status_code == accepted.status_code == 429
    # The same envelope, but for the request id each answer carries.
    assert {**spam.json(), "request_id": ""} == {**accepted.json(), "request_id": ""}
    assert spam.headers.get("retry-after") == accepted.headers.get("retry-after")
    assert statuses(up) == [SubmissionStatus.ACCEPTED]
    up.assert_only_stored_files()  # the refused requests' files are gone


def test_what_fits_is_kept_and_submissions_without_files_pass(capped: Uploads) -> None:
    up = capped
    assert up.post(files=cv(FIRST, 1)).status_code == 201

    fits = up.post(SPAM, cv(4_000, 2))
    no_file = up.post()
    no_file_spam = up.post(SPAM)
    over = up.post(files=cv(2_000, 3))

    assert fits.status_code == no_file.status_code == no_file_spam.status_code == 201
    assert_error(over, "quota_exceeded")
    assert sorted(statuses(up)) == sorted(
        [SubmissionStatus.ACCEPTED] * 2 + [SubmissionStatus.SPAM] * 2
    )
    workspace_id = up.seeded.workspace.workspace_id
    used = up.svc.run(up.svc.store.workspaces.storage_used, workspace_id)
    assert used == FIRST + 4_000
    up.assert_only_stored_files()


def test_spam_files_take_room_from_accepted_ones(capped: Uploads) -> None:
    up = capped
    assert up.post(SPAM, cv(FIRST, 1)).status_code == 201

    refused = up.post(files=cv(9_000, 2))

    assert_error(refused, "quota_exceeded")
    assert statuses(up) == [SubmissionStatus.SPAM]
    up.assert_only_stored_files()


def test_a_workspace_of_its_own_ceiling_is_held_to_it(capped: Uploads) -> None:
    up = capped
    workspace_id = up.seeded.workspace.workspace_id
    assert up.post(files=cv(FIRST, 1)).status_code == 201
    own_limit = WorkspaceChanges(storage_limit=FIRST + 9_000)
    up.svc.run(up.svc.services.workspaces.update, workspace_id, own_limit)

    taken = up.post(SPAM, cv(9_000, 2))  # past the deployment's ceiling, within its own
    refused = up.post(files=cv(1_000, 3))

    assert taken.status_code == 201, taken.text
    assert_error(refused, "quota_exceeded")
    up.svc.run(
        up.svc.services.workspaces.update, workspace_id, WorkspaceChanges(storage_limit=None)
    )
    assert_error(up.post(files=cv(1_000, 4)), "quota_exceeded")  # the deployment's again
    up.assert_only_stored_files()
