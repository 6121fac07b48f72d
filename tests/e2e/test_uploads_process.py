"""File uploads to real `intake serve` processes, over real sockets, managed with the
command line:

- a PDF from a multipart POST to its download link, its export to a directory and its
  webhook, on the embedded default (SQLite, the blob folder beside it) and on
  PostgreSQL with an S3 bucket (moto's server mode, tests/support/s3_server.py);
- the worker's memory while a 25 MiB file streams in;
- a worker killed mid-upload, and `intake purge` sweeping what it and a lost commit
  leave, while the files that submissions link stay.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx
import psutil
import pytest
from attrs import define
from standardwebhooks import Webhook

from intake.adapters.blobs.local import LocalBlobStore
from intake.config import Settings
from intake.domain import ids
from intake.domain.uploads import file_key
from intake.library_runtime import Runtime, open_runtime
from intake.ports.blobs import INCOMING_PREFIX, BlobStore
from intake.service.admin import UploadChanges
from tests.conftest import new_postgres_database
from tests.support.processes import ServedProcess, clean_env, run_cli, wait_for
from tests.support.receiver import Receiver
from tests.support.s3_server import ACCESS_KEY, REGION, SECRET_KEY, S3Server

pytestmark = [pytest.mark.slow]

MIB = 1024 * 1024
DEADLINE = 60.0  # seconds for anything a process is waited for
HTTP_TIMEOUT = 30.0
S3_PREFIX = "intake-files"
BOUNDARY = "e2e-upload-boundary-b8Yx2Q"
FIELDS = {"email": "ada@example.com", "name": "Ada"}


def pdf(size: int, seed: int = 0) -> bytes:
    """A PDF-looking file of exactly `size` bytes, its body pseudo-random."""
    head, tail = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", b"\n%%EOF\n"
    body = random.Random(seed).randbytes(size - len(head) - len(tail))
    return head + body + tail


def _multipart_head(field: str, name: str, declared: str) -> bytes:
    """The text fields, then the header of one file part, whose content follows."""
    text = b"".join(
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{key}"\r\n\r\n{value}\r\n'.encode()
        for key, value in FIELDS.items()
    )
    return (
        text
        + (
            f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{field}"; filename="{name}"'
            f"\r\nContent-Type: {declared}\r\n\r\n"
        ).encode()
    )


MULTIPART_END = f"\r\n--{BOUNDARY}--\r\n".encode()
MULTIPART_TYPE = f"multipart/form-data; boundary={BOUNDARY}"


# -- deployments ------------------------------------------------------------------------


@define
class Deployment:
    """What `intake serve` and the command line are given, and where the files go."""

    env: dict[str, str]
    blobs: str  # INTAKE_BLOB_URL, or the folder the embedded default uses
    s3: S3Server | None = None
    bucket: str | None = None

    def object_key(self, key: str) -> str:
        """Where a blob is, as `objects` names it."""
        return f"{S3_PREFIX}/{key}" if self.s3 is not None else key

    def objects(self) -> set[str]:
        """The keys of the blobs in the store, looked at from outside intake."""
        if self.s3 is not None:
            assert self.bucket is not None
            listed = self.s3.client().list_objects_v2(Bucket=self.bucket)
            return {entry["Key"] for entry in listed.get("Contents", [])}
        root = Path(self.blobs)
        return {
            str(path.relative_to(root))
            for path in root.rglob("*")
            if path.is_file() and not path.relative_to(root).parts[0].startswith(".")
        }


@pytest.fixture(scope="module")
def s3_server() -> Iterator[S3Server]:
    with S3Server() as server:
        yield server


@contextmanager
def _postgres_database() -> Iterator[str]:
    """A database of the test's own on INTAKE_TEST_DATABASE_URL's server, migrated."""
    with new_postgres_database(migrated=True) as url:
        yield url


def _embedded(tmp_path: Path) -> Deployment:
    # Only the database is named: the blob folder is the default one beside it.
    env = clean_env(INTAKE_DATABASE_URL=f"sqlite:///{tmp_path / 'intake.db'}")
    return Deployment(env, blobs=str(tmp_path / "blobs"))


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.services)])
def deployment(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Deployment]:
    if request.param == "sqlite":
        yield _embedded(tmp_path)
        return
    server: S3Server = request.getfixturevalue("s3_server")
    with _postgres_database() as url:
        bucket = server.new_bucket()
        blob_url = f"s3://{bucket}/{S3_PREFIX}?endpoint={server.endpoint}&region={REGION}"
        env = clean_env(
            INTAKE_DATABASE_URL=url,
            INTAKE_BLOB_URL=blob_url,
            # boto3's chain reads these; moto takes any, and none reaches the outside.
            AWS_ACCESS_KEY_ID=ACCESS_KEY,
            AWS_SECRET_ACCESS_KEY=SECRET_KEY,
            AWS_CONFIG_FILE=os.devnull,
            AWS_SHARED_CREDENTIALS_FILE=os.devnull,
        )
        try:
            yield Deployment(env, blobs=blob_url, s3=server, bucket=bucket)
        finally:
            server.drop_bucket(bucket)


def _serve(deployment: Deployment, tmp_path: Path) -> ServedProcess:
    """`intake serve`, its links starting with its own address; the command line is given
    the same, so that the links it prints point at the server too."""
    served = ServedProcess(deployment.env, tmp_path / "serve.log", log_tail=40)
    served.env["INTAKE_BASE_URL"] = served.base
    deployment.env["INTAKE_BASE_URL"] = served.base
    return served


@asynccontextmanager
async def _open(env: dict[str, str]) -> AsyncIterator[Runtime]:
    async with open_runtime(Settings.from_env(env)) as runtime:
        await runtime.store.migrate()
        yield runtime


def _workspace(env: dict[str, str]) -> str:
    """A workspace, made in-process: the commands that make one are tested elsewhere, and
    each command is a second of start-up."""

    async def setup() -> str:
        async with _open(env) as runtime:
            workspace = await runtime.services.workspaces.create("Uploads")
        return workspace.workspace_id

    return anyio.run(setup)


def _form(
    env: dict[str, str], *, max_file_size: int | None = None, max_total_size: int | None = None
) -> dict[str, str]:
    """A workspace and a form that takes files, made in-process (the first test drives
    the commands that do the same)."""

    async def setup() -> dict[str, str]:
        async with _open(env) as runtime:
            workspace = await runtime.services.workspaces.create("Uploads")
            form = await runtime.services.forms.create(
                workspace.workspace_id,
                uploads=UploadChanges(
                    enabled=True, max_file_size=max_file_size, max_total_size=max_total_size
                ),
            )
        return {"form_id": form.form_id, "public_form_key": form.public_form_key}

    return anyio.run(setup)


def _download(url: str) -> httpx.Response:
    response = httpx.get(url, timeout=HTTP_TIMEOUT)
    assert response.status_code == 200, response.text
    return response


# -- from the POST to the download, the export and the webhook --------------------------


def _together(env: dict[str, str], *commands: tuple[str, ...]) -> list[dict[str, Any]]:
    """Runs independent commands one after the other; what each printed."""
    return [run_cli(env, *argv) for argv in commands]


def test_an_uploaded_pdf_is_served_exported_and_sent_with_a_working_link(
    deployment: Deployment, tmp_path: Path
) -> None:
    content = pdf(300_000)  # past the 8 KiB sniffed head and several socket reads
    digest = hashlib.sha256(content).hexdigest()
    env = deployment.env
    env["INTAKE_WEBHOOK_ALLOW_PRIVATE"] = "true"  # the receiver is http on 127.0.0.1
    files_dir, output = tmp_path / "export", tmp_path / "export.jsonl"
    with Receiver() as receiver:
        served = _serve(deployment, tmp_path)
        # The database first (made and migrated), then the server starts meanwhile.
        workspace_id = _workspace(env)
        served.start(wait=False)
        try:
            form = run_cli(env, "form", "create", "--workspace", workspace_id)
            form_id = form["form_id"]
            assert form["uploads"] is None
            updated, hook = _together(
                env,
                ("form", "update", form_id, "--uploads"),
                ("webhook", "add", "--form", form_id, "--url", receiver.url()),
            )
            assert updated["uploads"]["max_file_size"] == 10 * MIB
            served.wait_until_healthy()

            response = httpx.post(
                f"{served.base}/f/{form['public_form_key']}",
                data=FIELDS,
                files={"cv": ("CV Ada.pdf", content, "application/pdf")},
                timeout=HTTP_TIMEOUT,
            )

            assert response.status_code == 201, response.text
            submission_id = response.json()["submission_id"]
            key = file_key(submission_id, 0)
            assert deployment.objects() == {deployment.object_key(key)}
            listing, exported, counts = _together(
                env,
                ("submissions", "list", "--form", form_id),
                ("submissions", "export", "--form", form_id, "--format", "jsonl",
                 "--files", str(files_dir), "--output", str(output)),
                ("relay", "--once"),
            )  # fmt: skip

            # The listing: the file, with a link to the server.
            (listed,) = listing["submissions"]
            assert listed["submission_id"] == submission_id
            assert listed["data"] == FIELDS
            (entry,) = listed["files"]
            described = {k: entry[k] for k in ("field", "name", "size", "type", "sha256")}
            assert described == {
                "field": "cv",
                "name": "CV Ada.pdf",
                "size": len(content),
                "type": "application/pdf",
                "sha256": digest,
            }
            assert entry["digest"] == f"sha256:{digest}"
            assert entry["url"].startswith(f"{served.base}/v1/files/{submission_id}/0?")
            download = _download(entry["url"])
            assert download.content == content
            assert download.headers["content-type"] == "application/pdf"
            assert download.headers["content-length"] == str(len(content))
            assert download.headers["content-disposition"] == (
                "attachment; filename=\"CV Ada.pdf\"; filename*=UTF-8''CV%20Ada.pdf"
            )
            assert download.headers["x-content-type-options"] == "nosniff"
            assert download.headers["etag"] == f'"{digest}"'
            forged = entry["url"].replace("signature=", "signature=A", 1)
            assert httpx.get(forged, timeout=HTTP_TIMEOUT).status_code == 401

            # The export: a JSON line per submission, and the file in the directory.
            assert (exported["count"], exported["files"]) == (1, 1)
            (row,) = [json.loads(line) for line in output.read_text().splitlines()]
            (exported_entry,) = row["files"]
            assert exported_entry["path"] == f"{submission_id}/0-CV Ada.pdf"
            assert (files_dir / exported_entry["path"]).read_bytes() == content

            # The webhook: sent by the relay, its link signed afresh, and working.
            assert counts["delivered"] == 1, counts
            (request,) = receiver.requests
            payload = Webhook(hook["secret"]).verify(request.body, dict(request.headers))
            assert isinstance(payload, dict)
            assert payload["submission_id"] == submission_id
            (sent,) = payload["files"]
            assert (sent["name"], sent["size"], sent["sha256"]) == (
                "CV Ada.pdf",
                len(content),
                digest,
            )
            assert urlsplit(sent["url"]).path == f"/v1/files/{submission_id}/0"
            assert _download(sent["url"]).content == content
        finally:
            served.stop()
    assert "Ada" not in served.log_text(), "a submission reached the log"


# -- memory ------------------------------------------------------------------------------


class PeakRss:
    """Samples a process's resident memory every 10 ms in a thread; `peak` is the most
    seen since `start`."""

    def __init__(self, pid: int) -> None:
        self._process = psutil.Process(pid)
        self._stop = threading.Event()
        self.peak = 0
        self._thread = threading.Thread(target=self._run, name="rss-sampler", daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self._process.memory_info().rss)
            self._stop.wait(0.01)

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _settled_rss(pid: int) -> int:
    """The most a process holds over a quiet half second."""
    with PeakRss(pid) as sampler:
        time.sleep(0.5)
    return sampler.peak


BIG_FILE = 25 * MIB
CHUNK = 64 * 1024


def test_a_25_mib_upload_raises_the_workers_memory_by_a_few_mib_at_most(tmp_path: Path) -> None:
    """Streamed in 64 KiB chunks, a 25 MiB file raises the worker's peak RSS by 1.3 to
    2.2 MiB in our runs (the local store's 1 MiB batch, the 8 KiB head and the socket's
    buffers): it is never held whole. The bound is 8 MiB, a third of the file."""
    deployment = _embedded(tmp_path)
    form = _form(deployment.env, max_file_size=26 * MIB, max_total_size=26 * MIB)
    digest = hashlib.sha256()

    def body() -> Iterator[bytes]:
        yield _multipart_head("cv", "big.pdf", "application/pdf")
        rng = random.Random(7)
        first = b"%PDF-1.7\n" + rng.randbytes(CHUNK - 9)
        digest.update(first)
        yield first
        for _ in range(BIG_FILE // CHUNK - 1):
            chunk = rng.randbytes(CHUNK)
            digest.update(chunk)
            yield chunk
        yield MULTIPART_END

    with _serve(deployment, tmp_path) as served, httpx.Client(timeout=HTTP_TIMEOUT) as client:
        url = f"{served.base}/f/{form['public_form_key']}"
        headers = {"content-type": MULTIPART_TYPE}
        # A first upload loads what any upload uses (the type sniffer, the store).
        warm = _multipart_head("cv", "small.pdf", "application/pdf") + pdf(2 * MIB)
        warm_up = client.post(url, content=warm + MULTIPART_END, headers=headers)
        assert warm_up.status_code == 201, warm_up.text
        before = _settled_rss(served.pid)

        with PeakRss(served.pid) as sampler:
            response = client.post(url, content=body(), headers=headers)

        assert response.status_code == 201, response.text
        increase = sampler.peak - before
        assert increase < 8 * MIB, f"the worker grew by {increase / MIB:.1f} MiB"
    submission_id = response.json()["submission_id"]
    info = anyio.run(LocalBlobStore(deployment.blobs).stat, file_key(submission_id, 0))
    assert info is not None
    assert (info.size, info.sha256) == (BIG_FILE, digest.hexdigest())


# -- orphans ----------------------------------------------------------------------------


async def _put(store: BlobStore, key: str, content: bytes) -> None:
    async with await store.writer(key, content_type="application/pdf", max_size=len(content)) as w:
        await w.write(content)
        await w.commit()


def _incoming(root: Path) -> list[Path]:
    folder = root / INCOMING_PREFIX.rstrip("/")
    return sorted(folder.iterdir()) if folder.exists() else []


def test_purge_sweeps_a_killed_upload_and_an_orphan_and_keeps_linked_files(
    tmp_path: Path,
) -> None:
    deployment = _embedded(tmp_path)
    root = Path(deployment.blobs)
    form = _form(deployment.env)
    linked_content = pdf(40_000, 1)
    resume = threading.Event()
    failures: list[BaseException] = []

    def slow_body() -> Iterator[bytes]:
        yield _multipart_head("cv", "slow.pdf", "application/pdf")
        yield pdf(2 * MIB, 2)  # more than the local store's 1 MiB batch: on disk
        resume.wait(DEADLINE)  # the server is killed meanwhile
        yield pdf(2 * MIB, 3) + MULTIPART_END

    def slow_upload(url: str) -> None:
        try:
            httpx.post(
                url, content=slow_body(), headers={"content-type": MULTIPART_TYPE}, timeout=5
            )
        except httpx.TransportError:
            return  # the server was killed under it, as intended
        except BaseException as error:
            failures.append(error)
            return
        failures.append(AssertionError("the upload to a killed server got an answer"))

    served = _serve(deployment, tmp_path).start()
    try:
        url = f"{served.base}/f/{form['public_form_key']}"
        linked = httpx.post(
            url,
            data=FIELDS,
            files={"cv": ("kept.pdf", linked_content, "application/pdf")},
            timeout=HTTP_TIMEOUT,
        )
        assert linked.status_code == 201, linked.text
        uploader = threading.Thread(target=slow_upload, args=(url,), name="slow-upload")
        uploader.start()
        wait_for(
            lambda: any(path.stat().st_size >= MIB for path in _incoming(root)),
            DEADLINE,
            "the slow upload to reach the disk",
            served.describe,
        )
        served.kill()  # SIGKILL mid-upload: no cleanup of any kind
    finally:
        resume.set()
        served.stop()
    uploader.join(DEADLINE)
    assert not failures, failures
    (leftover,) = _incoming(root)

    # A file stored for a submission that never committed, as a crash or a lost
    # commit leaves it; and a file intake did not make, in the same folder.
    orphan = file_key(ids.submission_id(int(time.time() * 1000), os.urandom(12)), 0)
    foreign = "backups/readme.txt"
    store = LocalBlobStore(root)
    anyio.run(_put, store, orphan, pdf(5000, 4))
    anyio.run(_put, store, foreign, b"not intake's")
    kept = file_key(linked.json()["submission_id"], 0)
    assert deployment.objects() == {kept, orphan, foreign}
    written = datetime.now(UTC)

    # Within the grace period (an hour by default) nothing is touched: it may belong to
    # an upload still under way.
    young = run_cli(deployment.env, "purge")
    assert (young["orphan_files"], young["incomplete_uploads"]) == (0, 0)
    assert leftover.exists()

    # A short grace, once it has passed. The grace must outlast any upload, so the
    # upload timeout is cut down with it.
    grace = 1
    wait_for(lambda: (datetime.now(UTC) - written).total_seconds() > grace, DEADLINE, "the grace")
    env = {**deployment.env, "INTAKE_UPLOAD_TIMEOUT": "0.5"}
    swept = run_cli(env, "purge", "--upload-grace", str(grace))

    assert (swept["orphan_files"], swept["incomplete_uploads"]) == (1, 1)
    assert _incoming(root) == []
    assert deployment.objects() == {kept, foreign}
    info = anyio.run(store.stat, kept)
    assert info is not None
    assert info.sha256 == hashlib.sha256(linked_content).hexdigest()
