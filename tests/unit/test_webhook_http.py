"""HttpWebhookSender against a real local receiver, and its public-address checks."""

from __future__ import annotations

import ipaddress
import json
import os
import socket
import time
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from importlib import metadata

import httpx
import pytest
from standardwebhooks import Webhook

from intake.adapters.tls import client_tls
from intake.adapters.webhook_http import (
    HttpWebhookSender,
    Resolver,
    is_public_address,
    parse_retry_after,
)
from intake.domain import ids, webhooks
from intake.ports.senders import WebhookResponse, WebhookSender
from tests.support.names import own_private_name
from tests.support.receiver import Receiver

pytestmark = pytest.mark.anyio

SECRET = ids.webhook_secret(bytes(range(ids.SECRET_RANDOM_BYTES)))
BODY = json.dumps({"type": "submission.created", "data": {"name": "Zoë"}}).encode()


def signed(body: bytes = BODY) -> dict[str, str]:
    return webhooks.headers(SECRET, "evt_" + os.urandom(8).hex(), int(time.time()), body)


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    # With the process's TLS context, as the service's own clients are opened.
    async with httpx.AsyncClient(verify=client_tls()) as http:
        yield http


@pytest.fixture
def sender(client: httpx.AsyncClient) -> HttpWebhookSender:
    # The receiver listens on 127.0.0.1 over plain http: a private setup.
    return HttpWebhookSender(client, timeout=2.0, allow_private=True)


async def test_the_sender_is_a_webhook_sender(sender: HttpWebhookSender) -> None:
    port: WebhookSender = sender
    assert port is sender


# -- against the real receiver ---------------------------------------------------


async def test_a_2xx_answer_is_delivered_and_the_request_arrives_intact(
    sender: HttpWebhookSender, receiver: Receiver
) -> None:
    headers = signed()

    response = await sender.send(receiver.url(), headers, BODY)

    assert response == WebhookResponse(status=200)
    assert response.delivered
    [request] = receiver.requests
    assert request.method == "POST"
    assert request.path == "/hooks/intake"
    assert request.body == BODY
    for name, value in headers.items():
        assert request.headers[name] == value
    assert Webhook(SECRET).verify(request.body, dict(request.headers)) == json.loads(BODY)


async def test_any_2xx_status_counts_as_delivered(
    sender: HttpWebhookSender, receiver: Receiver
) -> None:
    receiver.status = 204
    receiver.body = b""

    response = await sender.send(receiver.url(), signed(), BODY)

    assert response.status == 204
    assert response.delivered


async def test_a_server_error_is_reported_with_its_status(
    sender: HttpWebhookSender, receiver: Receiver
) -> None:
    receiver.status = 500

    response = await sender.send(receiver.url(), signed(), BODY)

    assert response == WebhookResponse(status=500)
    assert not response.delivered
    assert not response.gone


async def test_each_attempt_gets_the_answer_of_its_turn(
    sender: HttpWebhookSender, receiver: Receiver
) -> None:
    receiver.statuses = [500, 500, 200]

    statuses = [(await sender.send(receiver.url(), signed(), BODY)).status for _ in range(3)]

    assert statuses == [500, 500, 200]
    assert len(receiver.requests) == 3


async def test_a_receiver_slower_than_the_timeout_is_an_error(
    client: httpx.AsyncClient, receiver: Receiver
) -> None:
    sender = HttpWebhookSender(client, timeout=0.3, allow_private=True)
    receiver.delay = 5.0
    started = time.monotonic()

    response = await sender.send(receiver.url(), signed(), BODY)

    assert response.status is None
    assert response.error is not None
    assert response.error.startswith("timed out")
    assert time.monotonic() - started < 2.0


async def test_410_means_the_receiver_is_gone(
    sender: HttpWebhookSender, receiver: Receiver
) -> None:
    receiver.status = 410

    response = await sender.send(receiver.url(), signed(), BODY)

    assert response.gone
    assert not response.delivered


async def test_retry_after_in_seconds_is_read(
    sender: HttpWebhookSender, receiver: Receiver
) -> None:
    receiver.status = 503
    receiver.retry_after = "120"

    response = await sender.send(receiver.url(), signed(), BODY)

    assert response == WebhookResponse(status=503, retry_after=120.0)


async def test_retry_after_as_a_date_is_read_as_seconds_from_now(
    sender: HttpWebhookSender, receiver: Receiver
) -> None:
    receiver.status = 429
    receiver.retry_after = format_datetime(datetime.now(UTC) + timedelta(minutes=10), usegmt=True)

    response = await sender.send(receiver.url(), signed(), BODY)

    assert response.status == 429
    assert response.retry_after is not None
    assert 590 <= response.retry_after <= 600


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
async def test_a_redirect_is_not_followed_and_is_a_failure(
    sender: HttpWebhookSender, receiver: Receiver, status: int
) -> None:
    receiver.status = status
    receiver.location = receiver.url("/elsewhere")

    response = await sender.send(receiver.url(), signed(), BODY)

    assert response.status == status
    assert not response.delivered
    assert response.error == "redirect not followed"
    assert [r.path for r in receiver.requests] == ["/hooks/intake"]


async def test_a_large_answer_is_not_read_whole(
    sender: HttpWebhookSender, receiver: Receiver
) -> None:
    receiver.body = b"x" * 2_000_000

    response = await sender.send(receiver.url(), signed(), BODY)

    assert response == WebhookResponse(status=200)


async def test_a_refused_connection_is_an_error_without_the_url(
    sender: HttpWebhookSender,
) -> None:
    url = f"http://127.0.0.1:{closed_port()}/hook?token=s3cr3t-in-url"

    response = await sender.send(url, signed(), BODY)

    assert response.status is None
    assert response.error == "request failed (ConnectError)"


# -- the public-address checks ---------------------------------------------------


class Calls:
    """A MockTransport handler that records what would have been sent."""

    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return httpx.Response(200)


def resolving_to(*addresses: str) -> tuple[list[tuple[str, int]], Resolver]:
    asked: list[tuple[str, int]] = []

    async def resolve(host: str, port: int) -> Sequence[str]:
        asked.append((host, port))
        return list(addresses)

    return asked, resolve


@pytest.fixture
def calls() -> Calls:
    return Calls()


@pytest.fixture
async def mock_client(calls: Calls) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(transport=httpx.MockTransport(calls)) as http:
        yield http


async def test_an_http_url_is_refused(mock_client: httpx.AsyncClient, calls: Calls) -> None:
    sender = HttpWebhookSender(mock_client)

    response = await sender.send("http://hooks.example.com/in", signed(), BODY)

    assert response.status is None
    assert response.error == "refused: webhook URLs must use https"
    assert calls.requests == []


@pytest.mark.parametrize(
    "url",
    [
        "https://127.0.0.1/hook",
        "https://[::1]/hook",
        "https://10.1.2.3/hook",
        "https://169.254.169.254/latest/meta-data",
        "https://[::ffff:127.0.0.1]/hook",
        "https://0.0.0.0/hook",
    ],
)
async def test_an_https_url_to_a_private_address_is_refused(
    mock_client: httpx.AsyncClient, calls: Calls, url: str
) -> None:
    sender = HttpWebhookSender(mock_client)

    response = await sender.send(url, signed(), BODY)

    assert response.status is None
    assert response.error is not None
    assert response.error.startswith("refused: ")
    assert "not a public address" in response.error
    assert calls.requests == []


async def test_a_host_resolving_to_a_private_address_is_refused(
    mock_client: httpx.AsyncClient, calls: Calls
) -> None:
    asked, resolve = resolving_to("10.0.0.5")
    sender = HttpWebhookSender(mock_client, resolver=resolve)

    response = await sender.send("https://hooks.example.com:8443/in?t=1", signed(), BODY)

    assert asked == [("hooks.example.com", 8443)]
    assert response == WebhookResponse(
        status=None, error="refused: hooks.example.com resolves to an address that is not public"
    )
    assert calls.requests == []


async def test_one_private_address_among_public_ones_is_enough_to_refuse(
    mock_client: httpx.AsyncClient, calls: Calls
) -> None:
    _, resolve = resolving_to("93.184.215.14", "192.168.1.10")
    sender = HttpWebhookSender(mock_client, resolver=resolve)

    response = await sender.send("https://hooks.example.com/in", signed(), BODY)

    assert response.error == "refused: hooks.example.com resolves to an address that is not public"
    assert calls.requests == []


async def test_a_public_host_is_called_on_the_checked_address(
    mock_client: httpx.AsyncClient, calls: Calls
) -> None:
    asked, resolve = resolving_to("93.184.215.14")
    sender = HttpWebhookSender(mock_client, resolver=resolve)
    headers = signed()

    response = await sender.send("https://hooks.example.com/in?t=1", headers, BODY)

    assert response == WebhookResponse(status=200)
    assert asked == [("hooks.example.com", 443)]
    [request] = calls.requests
    # Pinned: the connection goes to the address checked, TLS and Host keep the name.
    assert request.url == "https://93.184.215.14/in?t=1"
    assert request.headers["host"] == "hooks.example.com"
    assert request.extensions["sni_hostname"] == "hooks.example.com"
    assert request.headers["connection"] == "close"
    assert request.content == BODY
    for name, value in headers.items():
        assert request.headers[name] == value


async def test_a_non_default_port_stays_in_the_host_header(
    mock_client: httpx.AsyncClient, calls: Calls
) -> None:
    _, resolve = resolving_to("2606:4700:4700::1111")
    sender = HttpWebhookSender(mock_client, resolver=resolve)

    response = await sender.send("https://hooks.example.com:8443/in", signed(), BODY)

    assert response.delivered
    [request] = calls.requests
    assert request.url == "https://[2606:4700:4700::1111]:8443/in"
    assert request.headers["host"] == "hooks.example.com:8443"


async def test_a_public_address_literal_is_called_as_it_is(
    mock_client: httpx.AsyncClient, calls: Calls
) -> None:
    sender = HttpWebhookSender(mock_client)

    response = await sender.send("https://93.184.215.14/in", signed(), BODY)

    assert response.delivered
    [request] = calls.requests
    assert request.url == "https://93.184.215.14/in"


async def test_a_failed_lookup_is_an_error_not_a_refusal(
    mock_client: httpx.AsyncClient, calls: Calls
) -> None:
    async def no_such_name(host: str, port: int) -> Sequence[str]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    sender = HttpWebhookSender(mock_client, resolver=no_such_name)

    response = await sender.send("https://nowhere.invalid/in", signed(), BODY)

    assert response == WebhookResponse(status=None, error="DNS lookup failed (gaierror)")
    assert calls.requests == []


async def test_the_system_resolver_is_used_by_default(
    mock_client: httpx.AsyncClient, calls: Calls
) -> None:
    # The machine's own name resolves from the hosts file, with no network needed.
    name = own_private_name()
    sender = HttpWebhookSender(mock_client)

    response = await sender.send(f"https://{name}/in", signed(), BODY)

    assert response.error is not None
    assert response.error.startswith(f"refused: {name.lower()} resolves to ")
    assert calls.requests == []


async def test_the_request_says_it_comes_from_intake(
    mock_client: httpx.AsyncClient, calls: Calls
) -> None:
    sender = HttpWebhookSender(mock_client, allow_private=True)

    await sender.send("http://relay.internal/in", signed(), BODY)

    [request] = calls.requests
    assert request.headers["user-agent"] == f"intake/{metadata.version('intake')}"


async def test_allow_private_lifts_both_checks(
    mock_client: httpx.AsyncClient, calls: Calls
) -> None:
    _, resolve = resolving_to("10.0.0.5")
    sender = HttpWebhookSender(mock_client, allow_private=True, resolver=resolve)

    response = await sender.send("http://relay.internal/in", signed(), BODY)

    assert response.delivered
    [request] = calls.requests
    assert request.url == "http://relay.internal/in"  # not pinned: nothing was checked


@pytest.mark.parametrize("url", ["ftp://hooks.example.com/in", "https:///in", "not a url"])
async def test_a_url_that_is_not_http_is_refused(
    mock_client: httpx.AsyncClient, calls: Calls, url: str
) -> None:
    sender = HttpWebhookSender(mock_client, allow_private=True)

    response = await sender.send(url, signed(), BODY)

    assert response.status is None
    assert response.error is not None
    assert response.error.startswith("refused: ")
    assert calls.requests == []


@pytest.mark.parametrize("seconds", [0.0, -1.0, float("nan"), float("inf")])
async def test_the_timeout_must_be_a_positive_number(
    client: httpx.AsyncClient, seconds: float
) -> None:
    with pytest.raises(ValueError, match="timeout"):
        HttpWebhookSender(client, timeout=seconds)


# -- which addresses are public --------------------------------------------------


@pytest.mark.parametrize(
    "address",
    [
        "10.0.0.1",
        "172.16.0.1",
        "192.168.1.1",
        "127.0.0.1",
        "169.254.169.254",  # cloud metadata
        "100.64.0.1",  # carrier-grade NAT
        "0.0.0.0",
        "224.0.0.1",
        "240.0.0.1",
        "255.255.255.255",
        "192.0.2.1",  # documentation
        "198.18.0.1",  # benchmarking
        "::1",
        "::",
        "fe80::1",
        "fc00::1",
        "fd12:3456::1",
        "ff02::1",
        "2001:db8::1",
        "::ffff:10.0.0.1",  # IPv4-mapped
        "::ffff:127.0.0.1",
        "64:ff9b::a00:1",  # NAT64 of 10.0.0.1
        "64:ff9b::7f00:1",  # NAT64 of 127.0.0.1
        "64:ff9b:1::a00:1",  # local-use NAT64
        "2002:a00:1::1",  # 6to4 of 10.0.0.1
        "fec0::1",  # site-local, deprecated but routed inside sites
        "feff:ffff::1",  # the end of fec0::/10
    ],
)
def test_private_and_special_addresses_are_not_public(address: str) -> None:
    assert not is_public_address(ipaddress.ip_address(address))


@pytest.mark.parametrize(
    "address",
    [
        "8.8.8.8",
        "1.1.1.1",
        "93.184.215.14",
        "2606:4700:4700::1111",
        "2a00:1450:4001:82a::200e",
        "::ffff:8.8.8.8",
        "64:ff9b::808:808",  # NAT64 of 8.8.8.8
    ],
)
def test_internet_addresses_are_public(address: str) -> None:
    assert is_public_address(ipaddress.ip_address(address))


# -- Retry-After -----------------------------------------------------------------

NOW = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("0", 0.0),
        ("30", 30.0),
        (" 3600 ", 3600.0),
        ("Sun, 01 Mar 2026 12:05:00 GMT", 300.0),
        ("Sun, 01 Mar 2026 11:00:00 GMT", 0.0),  # already past
        ("99999999999999999999999999999999999", 1e9),
        (None, None),
        ("", None),
        ("soon", None),
        ("-5", None),
        ("1.5", None),
        ("٣", None),  # a digit, but not an ASCII one
    ],
)
def test_retry_after_is_parsed_into_seconds(value: str | None, seconds: float | None) -> None:
    assert parse_retry_after(value, NOW) == seconds


def closed_port() -> int:
    """A port nothing listens on: bound once to get a free number, then released."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port
