"""Idempotency-Key over HTTP: replays, conflicts, scope and the 24-hour window
(spec parts 3 and 8, decisions.md "Idempotency")."""

from __future__ import annotations

import anyio
import httpx2
import pytest

from tests.http.conftest import PEER_HEADER, PeerFromHeader, Seeded, Service, assert_error

# Also on PostgreSQL (tests/http/conftest.py): the key's claim, one row raced for by
# concurrent requests.
pytestmark = pytest.mark.postgres_smoke

FIELDS = {"name": "Ada", "email": "ada@example.com", "message": "Hello"}
DAY = 24 * 60 * 60


def test_a_replay_answers_200_with_the_original_body_and_stores_nothing_new(
    seeded: Seeded,
) -> None:
    first = seeded.svc.public(seeded.form.public_form_key, data=FIELDS, idempotency_key="k-1")

    replay = seeded.svc.public(seeded.form.public_form_key, data=FIELDS, idempotency_key="k-1")

    assert first.status_code == 201
    assert "idempotent-replayed" not in first.headers
    assert replay.status_code == 200
    assert replay.json() == first.json()
    assert replay.headers["idempotent-replayed"] == "true"
    assert seeded.svc.stored() == (1, 1)


def test_the_same_payload_replays_whatever_the_content_type_or_field_order(
    seeded: Seeded,
) -> None:
    key = seeded.form.public_form_key
    first = seeded.svc.public(
        key,
        content=b"name=Ada&email=ada%40example.com&message=Hello&tags=a&tags=b",
        headers={"content-type": "application/x-www-form-urlencoded"},
        idempotency_key="k-2",
    )
    as_json = seeded.svc.public(
        key,
        json={"tags": ["a", "b"], "message": "Hello", "email": "ada@example.com", "name": "Ada"},
        idempotency_key="k-2",
    )
    as_multipart = seeded.svc.public(
        key,
        files=[
            ("message", (None, b"Hello")),
            ("tags", (None, b"a")),
            ("name", (None, b"Ada")),
            ("tags", (None, b"b")),
            ("email", (None, b"ada@example.com")),
        ],
        idempotency_key="k-2",
    )

    assert first.status_code == 201
    assert (as_json.status_code, as_multipart.status_code) == (200, 200)
    assert as_json.json() == as_multipart.json() == first.json()
    assert seeded.svc.stored() == (1, 1)


def test_a_different_payload_with_the_same_key_conflicts_and_overwrites_nothing(
    seeded: Seeded,
) -> None:
    first = seeded.svc.public(seeded.form.public_form_key, data=FIELDS, idempotency_key="k-3")

    other = seeded.svc.public(
        seeded.form.public_form_key,
        data={**FIELDS, "message": "Something else"},
        idempotency_key="k-3",
    )
    again = seeded.svc.public(seeded.form.public_form_key, data=FIELDS, idempotency_key="k-3")

    assert_error(other, "idempotency_conflict")
    assert seeded.svc.stored() == (1, 1)
    stored = seeded.svc.submission(first.json()["submission_id"])
    assert stored.data["message"] == "Hello"
    assert again.status_code == 200
    assert again.json() == first.json()


def test_repeated_values_in_another_order_are_a_different_payload(seeded: Seeded) -> None:
    key = seeded.form.public_form_key
    first = seeded.svc.public(key, content=b"tags=a&tags=b", headers=_form(), idempotency_key="k-4")

    assert first.status_code == 201, first.text
    response = seeded.svc.public(
        key, content=b"tags=b&tags=a", headers=_form(), idempotency_key="k-4"
    )

    assert_error(response, "idempotency_conflict")


def test_control_fields_are_part_of_the_payload(seeded: Seeded) -> None:
    first = seeded.svc.public(
        seeded.form.public_form_key, data={**FIELDS, "_subject": "A"}, idempotency_key="k-5"
    )

    assert first.status_code == 201, first.text
    response = seeded.svc.public(
        seeded.form.public_form_key, data={**FIELDS, "_subject": "B"}, idempotency_key="k-5"
    )

    assert_error(response, "idempotency_conflict")


def test_keys_are_scoped_per_form(seeded: Seeded) -> None:
    second = seeded.svc.form(seeded.workspace.workspace_id)
    first = seeded.svc.public(seeded.form.public_form_key, data=FIELDS, idempotency_key="shared")

    other_form = seeded.svc.public(second.public_form_key, data=FIELDS, idempotency_key="shared")

    assert other_form.status_code == 201
    assert other_form.json()["submission_id"] != first.json()["submission_id"]
    assert seeded.svc.stored() == (2, 2)


def test_keys_are_scoped_per_endpoint(seeded: Seeded) -> None:
    public = seeded.svc.public(seeded.form.public_form_key, data=FIELDS, idempotency_key="shared")

    server = seeded.svc.server(
        seeded.form.form_id, seeded.key.secret, data=FIELDS, idempotency_key="shared"
    )
    server_again = seeded.svc.server(
        seeded.form.form_id, seeded.key.secret, data=FIELDS, idempotency_key="shared"
    )

    assert server.status_code == 201
    assert server.json()["submission_id"] != public.json()["submission_id"]
    assert server_again.status_code == 200
    assert server_again.json() == server.json()
    assert seeded.svc.stored() == (2, 2)


def test_a_key_replays_for_24_hours_and_not_after(seeded: Seeded) -> None:
    key = seeded.form.public_form_key
    first = seeded.svc.public(key, data=FIELDS, idempotency_key="k-6")

    seeded.svc.clock.advance(DAY - 1)
    within = seeded.svc.public(key, data=FIELDS, idempotency_key="k-6")
    seeded.svc.clock.advance(1)
    after = seeded.svc.public(key, data={**FIELDS, "message": "New"}, idempotency_key="k-6")

    assert within.status_code == 200
    assert within.json() == first.json()
    assert after.status_code == 201
    assert after.json()["submission_id"] != first.json()["submission_id"]
    assert seeded.svc.stored() == (2, 2)


def test_a_new_record_replaces_an_expired_one(seeded: Seeded) -> None:
    key = seeded.form.public_form_key
    expired = seeded.svc.public(key, data=FIELDS, idempotency_key="k-7")
    assert expired.status_code == 201, expired.text
    seeded.svc.clock.advance(DAY + 60)
    renewed = seeded.svc.public(key, data=FIELDS, idempotency_key="k-7")

    replay = seeded.svc.public(key, data=FIELDS, idempotency_key="k-7")

    assert renewed.status_code == 201
    assert replay.status_code == 200
    assert replay.json() == renewed.json()


def test_a_replay_counts_against_the_rate_limit_like_any_request(seeded: Seeded) -> None:
    key = seeded.form.public_form_key
    first = seeded.svc.public(key, data=FIELDS, idempotency_key="k-8")
    for _ in range(4):
        seeded.svc.public(key, data=FIELDS)

    replay = seeded.svc.public(key, data=FIELDS, idempotency_key="k-8")

    # The rate limit comes first in the processing order: a retry is a request too.
    assert first.status_code == 201
    assert_error(replay, "rate_limited")


def test_a_refused_request_leaves_its_key_free(seeded: Seeded) -> None:
    key = seeded.form.public_form_key
    refused = seeded.svc.public(key, data={"email": "not-an-address"}, idempotency_key="k-9")

    accepted = seeded.svc.public(key, data=FIELDS, idempotency_key="k-9")

    assert_error(refused, "validation_failed")
    assert accepted.status_code == 201


# -- the public route's keys belong to the client's network ------------------------------

VICTIM = "198.51.100.7"
STRANGERS = ("192.0.2.44", "2001:db8:bad::1")


def test_another_network_cannot_confirm_a_guess_of_a_victim_s_payload(seeded: Seeded) -> None:
    key = seeded.form.public_form_key
    victim = seeded.svc.public(key, data=FIELDS, idempotency_key="order-17", peer=VICTIM)

    right_guess = seeded.svc.public(key, data=FIELDS, idempotency_key="order-17", peer=STRANGERS[0])
    wrong_guess = seeded.svc.public(
        key, data={**FIELDS, "message": "Other"}, idempotency_key="order-17", peer=STRANGERS[1]
    )
    retry = seeded.svc.public(key, data=FIELDS, idempotency_key="order-17", peer=VICTIM)

    # Neither 200 nor 409: to another network the victim's key is a key never used.
    for guess in (right_guess, wrong_guess):
        assert guess.status_code == 201, guess.text
        assert "idempotent-replayed" not in guess.headers
        assert guess.json()["submission_id"] != victim.json()["submission_id"]
    assert retry.status_code == 200
    assert retry.json() == victim.json()
    assert seeded.svc.stored() == (3, 3)


def test_another_network_cannot_poison_a_key_before_its_victim_uses_it(seeded: Seeded) -> None:
    key = seeded.form.public_form_key
    poison = seeded.svc.public(
        key, data={"name": "Mallory"}, idempotency_key="order-18", peer=STRANGERS[0]
    )

    victim = seeded.svc.public(key, data=FIELDS, idempotency_key="order-18", peer=VICTIM)
    retry = seeded.svc.public(key, data=FIELDS, idempotency_key="order-18", peer=VICTIM)

    assert poison.status_code == 201
    assert victim.status_code == 201, victim.text
    assert victim.json()["submission_id"] != poison.json()["submission_id"]
    assert retry.status_code == 200
    assert retry.json() == victim.json()
    assert seeded.svc.submission(victim.json()["submission_id"]).data == FIELDS


def test_a_retry_from_another_address_of_the_same_client_network_replays(
    seeded: Seeded,
) -> None:
    key = seeded.form.public_form_key
    ipv6 = seeded.svc.public(key, data=FIELDS, idempotency_key="k-64", peer="2001:db8:5:5::1")
    ipv4 = seeded.svc.public(key, data=FIELDS, idempotency_key="k-v4", peer=VICTIM)

    # A new temporary IPv6 address in the same /64; the IPv4 address through a
    # dual-stack socket.
    ipv6_retry = seeded.svc.public(
        key, data=FIELDS, idempotency_key="k-64", peer="2001:db8:5:5:abcd::9"
    )
    ipv4_retry = seeded.svc.public(
        key, data=FIELDS, idempotency_key="k-v4", peer=f"::ffff:{VICTIM}"
    )

    assert (ipv6_retry.status_code, ipv6_retry.json()) == (200, ipv6.json())
    assert (ipv4_retry.status_code, ipv4_retry.json()) == (200, ipv4.json())
    assert seeded.svc.stored() == (2, 2)


def test_a_client_that_changes_network_between_retries_makes_a_new_submission(
    seeded: Seeded,
) -> None:
    key = seeded.form.public_form_key
    first = seeded.svc.public(key, data=FIELDS, idempotency_key="k-move", peer=VICTIM)

    moved = seeded.svc.public(key, data=FIELDS, idempotency_key="k-move", peer="2001:db8:6::1")

    assert moved.status_code == 201
    assert moved.json()["submission_id"] != first.json()["submission_id"]


def test_a_server_route_key_is_the_workspace_s_from_any_network(seeded: Seeded) -> None:
    form_id, secret = seeded.form.form_id, seeded.key.secret
    first = seeded.svc.server(form_id, secret, data=FIELDS, idempotency_key="s-1", peer=VICTIM)

    elsewhere = seeded.svc.server(
        form_id, secret, data=FIELDS, idempotency_key="s-1", peer=STRANGERS[1]
    )

    assert elsewhere.status_code == 200
    assert elsewhere.json() == first.json()


def test_concurrent_uses_of_a_key_commit_once_per_client_network(seeded: Seeded) -> None:
    peers = [VICTIM, f"::ffff:{VICTIM}"] * 2 + [f"2001:db8:bad::{n}" for n in range(1, 5)]
    answers = seeded.svc.run(_all_at_once, seeded.svc, seeded.form.public_form_key, peers)

    by_network = {"ipv4": answers[:4], "ipv6": answers[4:]}
    for network, responses in by_network.items():
        statuses = sorted(r.status_code for r in responses)
        assert statuses == [200, 200, 200, 201], network
        assert len({r.json()["submission_id"] for r in responses}) == 1, network
    ids = {by_network[n][0].json()["submission_id"] for n in by_network}
    assert len(ids) == 2
    assert seeded.svc.stored() == (2, 2)


async def _all_at_once(svc: Service, form_key: str, peers: list[str]) -> list[httpx2.Response]:
    """One request per peer, all in flight together, with the same key and payload; the
    answers in the order of `peers`."""
    answers: dict[int, httpx2.Response] = {}
    transport = httpx2.ASGITransport(app=PeerFromHeader(svc.app))
    async with httpx2.AsyncClient(transport=transport, base_url="http://testserver") as client:

        async def send(index: int, peer: str) -> None:
            answers[index] = await client.post(
                f"/f/{form_key}",
                data=FIELDS,
                headers={PEER_HEADER: peer, "idempotency-key": "k-race"},
            )

        async with anyio.create_task_group() as group:
            for index, peer in enumerate(peers):
                group.start_soon(send, index, peer)
    return [answers[index] for index in range(len(peers))]


def _form() -> dict[str, str]:
    return {"content-type": "application/x-www-form-urlencoded"}
