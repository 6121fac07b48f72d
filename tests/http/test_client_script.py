"""intake.js as intake serves it: at its content's address, immutable, readable from any
origin, the same bytes as the package folder's file, and its SRI value right."""

from __future__ import annotations

import base64
import hashlib
import re

import pytest

from intake.entrypoints.http.client_script import CLIENT_FOLDER, client_asset
from tests.http.conftest import Service, assert_error

SITE = "https://www.example.com"


def test_the_module_is_served_at_its_contents_address_for_good(svc: Service) -> None:
    shipped = (CLIENT_FOLDER / "intake.js").read_bytes()
    digest = hashlib.sha256(shipped).hexdigest()[:16]

    response = svc.client.get(f"/static/intake.{digest}.js", headers={"Origin": SITE})

    assert response.status_code == 200
    assert response.content == shipped
    assert response.headers["content-type"] == "text/javascript; charset=utf-8"
    assert response.headers["cache-control"] == "public, max-age=31536000, immutable"
    # A module script from another origin is fetched with CORS.
    assert response.headers["access-control-allow-origin"] == "*"
    assert response.headers["x-content-type-options"] == "nosniff"


def test_the_integrity_value_is_the_sha384_of_the_served_bytes(svc: Service) -> None:
    asset = client_asset("js")

    served = svc.client.get(asset.path).content

    expected = base64.b64encode(hashlib.sha384(served).digest()).decode("ascii")
    assert asset.integrity == f"sha384-{expected}"
    assert re.fullmatch(r"/static/intake\.[0-9a-f]{16}\.js", asset.path)


def test_the_stylesheet_is_served_the_same_way(svc: Service) -> None:
    asset = client_asset("css")

    response = svc.client.get(asset.path)

    assert response.content == (CLIENT_FOLDER / "intake.css").read_bytes()
    assert response.headers["content-type"] == "text/css; charset=utf-8"
    assert response.headers["cache-control"] == "public, max-age=31536000, immutable"


def test_the_stable_address_gives_the_current_file_cached_briefly(svc: Service) -> None:
    response = svc.client.get("/intake.js")

    assert response.content == client_asset("js").body
    assert response.headers["cache-control"] == "public, max-age=300"
    assert response.headers["content-type"] == "text/javascript; charset=utf-8"


@pytest.mark.parametrize(
    "path", ["/static/intake.0123456789abcdef.js", "/static/intake.{digest}.py"]
)
def test_another_digest_or_kind_is_an_unknown_path(svc: Service, path: str) -> None:
    response = svc.client.get(path.format(digest=client_asset("js").digest))

    assert_error(response, "form_not_found")
