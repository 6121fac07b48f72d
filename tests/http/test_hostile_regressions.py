"""Answers to hostile requests that once came out wrong (found by tests/hostile and the
fuzzers in tests/fuzz): each is now the envelope the specification asks for."""

from __future__ import annotations

from tests.http.conftest import Seeded, assert_error

FORM = "application/x-www-form-urlencoded"
MULTIPART = "multipart/form-data"


def test_a_trailing_slash_is_an_unknown_path_not_a_redirect(seeded: Seeded) -> None:
    svc = seeded.svc
    form = seeded.form

    public = svc.client.post(
        f"/f/{form.public_form_key}/",
        content=b"name=Ada",
        headers={"content-type": FORM, "host": "evil.example"},
    )
    server = svc.client.post(
        f"/v1/forms/{form.form_id}/submissions/",
        content=b"name=Ada",
        headers={"content-type": FORM, "authorization": f"Bearer {seeded.key.secret}"},
    )

    # Unknown paths under /v1 are the management API's: not_found (docs/decisions.md).
    assert_error(public, "form_not_found")
    assert server.status_code == 404
    assert server.json()["error"] == {"code": "not_found", "message": "Not found."}
    for response in (public, server):
        assert "location" not in response.headers
    assert svc.stored() == (0, 0)


def test_a_content_length_of_other_digits_than_ascii_is_no_declared_length(
    seeded: Seeded,
) -> None:
    # `"²".isdigit()` is true, yet int("²") fails: a server other than uvicorn may pass
    # such a header on.
    exchange = seeded.svc.raw(
        f"/f/{seeded.form.public_form_key}",
        [("content-type", FORM), ("content-length", "²")],
        iter([b"name=Ada"]),
    )

    assert exchange.status == 201, exchange.body
    assert seeded.svc.stored() == (1, 1)


def test_a_charset_holding_nul_is_an_unsupported_content_type(seeded: Seeded) -> None:
    exchange = seeded.svc.raw(
        f"/f/{seeded.form.public_form_key}",
        [("content-type", "application/json; charset=utf\x00-8")],
        iter([b'{"name": "Ada"}']),
    )

    assert exchange.status == 415, exchange.body
    assert exchange.json()["error"]["code"] == "unsupported_content_type"


def test_a_multipart_part_charset_holding_nul_is_malformed(seeded: Seeded) -> None:
    body = (
        b'--b\r\nContent-Disposition: form-data; name="name"\r\n'
        b"Content-Type: text/plain; charset=utf\x00-8\r\n\r\nAda\r\n--b--\r\n"
    )

    response = seeded.svc.public(
        seeded.form.public_form_key,
        content=body,
        headers={"content-type": f"{MULTIPART}; boundary=b"},
    )

    assert_error(response, "malformed_request")
    assert seeded.svc.stored() == (0, 0)


def test_a_boundary_longer_than_the_parser_takes_is_malformed(seeded: Seeded) -> None:
    boundary = "b" * 300
    body = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\nAda\r\n'
        f"--{boundary}--\r\n"
    ).encode()

    response = seeded.svc.public(
        seeded.form.public_form_key,
        content=body,
        headers={"content-type": f"{MULTIPART}; boundary={boundary}"},
    )

    assert_error(response, "malformed_request")


def test_of_two_origin_headers_the_one_checked_is_the_one_echoed(seeded: Seeded) -> None:
    svc = seeded.svc
    listed = svc.form(seeded.workspace.workspace_id, allowed_origins=["https://shop.example"])

    exchange = svc.raw(
        f"/f/{listed.public_form_key}",
        [
            ("content-type", FORM),
            ("origin", "https://shop.example"),
            ("origin", "https://evil.example"),
        ],
        iter([b"name=Ada"]),
    )

    assert exchange.status == 201, exchange.body
    assert exchange.headers["access-control-allow-origin"] == "https://shop.example"
