"""Spoofed client addresses: a sender rotating X-Forwarded-For (or any header of its
kind) does not escape the per-IP rate limit.

The client address is the socket peer, or the entry a configured trusted proxy added to
X-Forwarded-For (decisions.md "Rate limits"). From an untrusted peer no header counts;
behind a trusted proxy, whatever a client wrote left of the proxy's own entry does not.
Checked on the app over every backend, and on a real `intake serve`, where the peer is
the socket's (127.0.0.1).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterator, Mapping, Sequence

import httpx
import httpx2
import pytest

from intake.config import Network, Settings
from tests.http.conftest import Seeded, ServiceFactory, assert_error
from tests.security.served import Served, serve

FIELDS = {"name": "Ada", "message": "Hello"}
BURST = 5  # the public burst: 5 requests per 30 seconds per IP and form
CLIENT = "198.51.100.7"
OTHER_CLIENT = "198.51.100.8"

# Every header some proxy or CDN uses to name the client; a client can send them all.
SPOOFABLE = (
    "x-forwarded-for",
    "x-real-ip",
    "forwarded",
    "true-client-ip",
    "cf-connecting-ip",
    "x-client-ip",
    "x-cluster-client-ip",
    "client-ip",
    "fastly-client-ip",
    "x-originating-ip",
)


def _spoofed(i: int) -> dict[str, str]:
    address = f"192.0.2.{i + 1}"
    headers = dict.fromkeys(SPOOFABLE, address)
    headers["forwarded"] = f'for="{address}";proto=https'
    return headers


def _networks(*cidrs: str) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(cidr) for cidr in cidrs)


def _post(seeded: Seeded, headers: Mapping[str, str], peer: str | None = None) -> httpx2.Response:
    return seeded.svc.public(seeded.form.public_form_key, data=FIELDS, headers=headers, peer=peer)


def _assert_burst_then_limited(responses: list[httpx2.Response]) -> None:
    assert [r.status_code for r in responses[:BURST]] == [201] * BURST
    for refused in responses[BURST:]:
        assert_error(refused, "rate_limited")
        assert int(refused.headers["retry-after"]) >= 1


# -- the app, on every backend -------------------------------------------------------------


def test_rotating_client_address_headers_from_an_untrusted_peer_do_not_escape_the_limit(
    seeded: Seeded,
) -> None:
    responses = [_post(seeded, _spoofed(i)) for i in range(BURST + 3)]

    _assert_burst_then_limited(responses)


def test_a_peer_outside_the_trusted_proxies_is_the_client_whatever_it_forwards(
    make_service: ServiceFactory,
) -> None:
    seeded = Seeded(make_service(Settings(trusted_proxies=_networks("10.0.0.0/8"))))

    responses = [_post(seeded, _spoofed(i), peer="203.0.113.9") for i in range(BURST + 2)]

    _assert_burst_then_limited(responses)


@pytest.fixture
def behind_proxy(make_service: ServiceFactory) -> Seeded:
    """The service behind two trusted proxies, 10.0.0.1 (the one the app hears) and
    10.0.0.2 in front of it."""
    return Seeded(make_service(Settings(trusted_proxies=_networks("10.0.0.0/8"))))


PROXY = "10.0.0.1"


@pytest.mark.parametrize(
    "chain",
    [
        pytest.param(lambda i: f"192.0.2.{i + 1}, {CLIENT}", id="one address prepended"),
        pytest.param(
            lambda i: ", ".join(f"192.0.2.{n}" for n in range(i + 1)) + f", {CLIENT}",
            id="ever more addresses prepended",
        ),
        pytest.param(lambda i: f"192.0.2.{i + 1}, 10.0.0.{i + 9}, {CLIENT}", id="fake proxy hop"),
        pytest.param(lambda i: f"not-an-ip-{i}, {CLIENT}", id="garbage prepended"),
        pytest.param(lambda i: f"192.0.2.{i + 1}, {CLIENT}, 10.0.0.2", id="two proxies"),
        pytest.param(lambda i: f"2001:db8::{i + 1}, {CLIENT}", id="IPv6 prepended"),
    ],
)
def test_addresses_a_client_prepends_to_x_forwarded_for_do_not_escape_the_limit(
    behind_proxy: Seeded, chain: Callable[[int], str]
) -> None:
    responses = [
        _post(behind_proxy, {"x-forwarded-for": chain(i)}, peer=PROXY) for i in range(BURST + 2)
    ]

    _assert_burst_then_limited(responses)
    # The proxy's own entry does count: another client behind it has its own allowance.
    other = _post(behind_proxy, {"x-forwarded-for": f"192.0.2.1, {OTHER_CLIENT}"}, peer=PROXY)
    assert other.status_code == 201


def test_a_client_header_line_beside_the_proxys_own_does_not_escape_the_limit(
    behind_proxy: Seeded,
) -> None:
    # The client sends its own X-Forwarded-For line; the proxy adds a second line.
    responses = [
        behind_proxy.svc.client.post(
            f"/f/{behind_proxy.form.public_form_key}",
            data=FIELDS,
            headers=[
                ("x-forwarded-for", f"192.0.2.{i + 1}"),
                ("x-forwarded-for", CLIENT),
                ("x-test-peer", PROXY),
            ],
        )
        for i in range(BURST + 2)
    ]

    _assert_burst_then_limited(responses)


def test_other_client_headers_through_a_trusted_proxy_do_not_count(behind_proxy: Seeded) -> None:
    responses = []
    for i in range(BURST + 2):
        headers = _spoofed(i)
        headers["x-forwarded-for"] = CLIENT
        responses.append(_post(behind_proxy, headers, peer=PROXY))

    _assert_burst_then_limited(responses)


# -- a real `intake serve`: the peer is the socket's -----------------------------------------


@pytest.fixture(scope="module")
def untrusting(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """Proxies configured, but not the address the test connects from."""
    with serve(tmp_path_factory.mktemp("untrusting"), INTAKE_TRUSTED_PROXIES="10.0.0.0/8") as s:
        yield s


@pytest.fixture(scope="module")
def proxied(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The test's own address (127.0.0.1) is the trusted proxy."""
    with serve(tmp_path_factory.mktemp("proxied"), INTAKE_TRUSTED_PROXIES="127.0.0.1/32") as s:
        yield s


def _socket_posts(served: Served, headers: Sequence[Mapping[str, str]]) -> list[httpx.Response]:
    form = served.form()
    url = f"{served.base}/f/{form['public_form_key']}"
    with httpx.Client(timeout=10.0) as client:
        return [client.post(url, json=FIELDS, headers=dict(h)) for h in headers]


def _assert_socket_burst_then_limited(responses: list[httpx.Response]) -> None:
    assert [r.status_code for r in responses[:BURST]] == [201] * BURST, responses[-1].text
    for refused in responses[BURST:]:
        assert refused.status_code == 429
        assert refused.json()["error"]["code"] == "rate_limited"
        assert int(refused.headers["retry-after"]) >= 1


@pytest.mark.slow
def test_over_a_socket_rotating_forwarded_headers_from_an_untrusted_peer_are_limited(
    untrusting: Served,
) -> None:
    responses = _socket_posts(untrusting, [_spoofed(i) for i in range(BURST + 2)])

    _assert_socket_burst_then_limited(responses)


@pytest.mark.slow
def test_over_a_socket_addresses_prepended_before_the_trusted_proxys_entry_are_limited(
    proxied: Served,
) -> None:
    chains = [{"x-forwarded-for": f"192.0.2.{i + 1}, {CLIENT}"} for i in range(BURST + 2)]
    chains.append({"x-forwarded-for": f"192.0.2.1, {OTHER_CLIENT}"})

    responses = _socket_posts(proxied, chains)

    _assert_socket_burst_then_limited(responses[:-1])
    assert responses[-1].status_code == 201  # another client behind the proxy
