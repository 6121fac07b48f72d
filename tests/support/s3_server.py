"""A local S3-compatible server (moto's server mode) on a free 127.0.0.1 port, in this
process: the S3 blob store's tests need no outside service.

Each test takes a bucket of its own (`new_bucket()`); `stop()` shuts the server down and
closes its socket, so no thread or port outlives it.
"""

from __future__ import annotations

import logging
import secrets
from typing import TYPE_CHECKING, Self

import boto3
from botocore.config import Config
from moto.server import ThreadedMotoServer

from tests.support.processes import Background

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

REGION = "us-east-1"
# moto accepts any credentials; these are only ever sent to the local server.
ACCESS_KEY = "intake-test-access-key"
SECRET_KEY = "intake-test-secret-key"


def fake_credentials_session() -> boto3.Session:
    return boto3.Session(
        aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY, region_name=REGION
    )


class S3Server(Background):
    def __init__(self) -> None:
        self._server: ThreadedMotoServer | None = None
        self._werkzeug_level = logging.NOTSET
        self._session: boto3.Session | None = None
        self._client: S3Client | None = None
        self.endpoint = ""

    def start(self) -> Self:
        if self._server is not None:
            raise RuntimeError("S3 server already started")
        # The server logs every request through werkzeug's logger; keep the output quiet.
        werkzeug = logging.getLogger("werkzeug")
        self._werkzeug_level = werkzeug.level
        werkzeug.setLevel(logging.WARNING)
        server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        server.start()
        self._server = server
        host, port = server.get_host_and_port()
        self.endpoint = f"http://{host}:{port}"
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        if self._client is not None:
            self._client.close()
            self._client = None
        server.stop()
        # stop() shuts the loop down but leaves the listening socket open.
        wsgi = server._server
        if wsgi is not None:
            wsgi.server_close()
        logging.getLogger("werkzeug").setLevel(self._werkzeug_level)

    def session(self) -> boto3.Session:
        """A boto3 session with the test credentials, so that nothing is read from the
        environment or the user's AWS configuration. One for the server's life: it caches
        the service description that every new client would otherwise load again."""
        if self._session is None:
            self._session = fake_credentials_session()
        return self._session

    def client(self) -> S3Client:
        """A plain S3 client, to look at the buckets from outside the store."""
        if self._client is None:
            self._client = self.session().client(
                "s3", endpoint_url=self.endpoint, config=Config(s3={"addressing_style": "path"})
            )
        return self._client

    def new_bucket(self) -> str:
        name = f"intake-test-{secrets.token_hex(6)}"
        self.client().create_bucket(Bucket=name)
        return name

    def drop_bucket(self, name: str) -> None:
        """Empties the bucket (objects and unfinished uploads) and deletes it."""
        client = self.client()
        for uploads in client.get_paginator("list_multipart_uploads").paginate(Bucket=name):
            for upload in uploads.get("Uploads", []):
                client.abort_multipart_upload(
                    Bucket=name, Key=upload["Key"], UploadId=upload["UploadId"]
                )
        for objects in client.get_paginator("list_objects_v2").paginate(Bucket=name):
            for entry in objects.get("Contents", []):
                client.delete_object(Bucket=name, Key=entry["Key"])
        client.delete_bucket(Bucket=name)
