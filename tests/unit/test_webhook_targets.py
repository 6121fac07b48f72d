"""The one rule for webhook URLs, as `Admin.add_webhook` and the sender apply it."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Sequence

import httpx
import pytest

from intake.adapters.memory import FakeClock, InMemoryStore, SeededIdSource
from intake.adapters.webhook_http import HttpWebhookSender
from intake.domain.deliveries import redacted_url
from intake.domain.webhook_targets import (
    Resolver,
    TargetNotPublic,
    TargetRefused,
    address_literal,
    check_target,
)
from intake.service.admin import AdminError, owner_services

pytestmark = pytest.mark.anyio

LOOPBACK_WRITTEN_ODDLY = [
    "https://127.1/hook",
    "https://0x7f000001/hook",
    "https://2130706433/hook",
    "https://0177.0.0.1/hook",
    "https://0x7f.1/hook",
    "https://127.0.0.1./hook",
    "https://[::127.0.0.1]/hook",
    "https://[::ffff:7f00:1]/hook",
    "https://[64:ff9b::7f00:1]/hook",
    "https://localhost./hook",
    "https://LocalHost/hook",
    "https://api.localhost./hook",
]


async def unused_resolver(host: str, port: int) -> Sequence[str]:
    raise AssertionError(f"{host} is not a name to resolve")


def resolving(answers: dict[str, list[str]]) -> tuple[list[str], Resolver]:
    asked: list[str] = []

    async def resolve(host: str, port: int) -> Sequence[str]:
        asked.append(host)
        if host not in answers:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return answers[host]

    return asked, resolve


@pytest.mark.parametrize(
    ("host", "address"),
    [
        ("127.1", "127.0.0.1"),
        ("0x7f000001", "127.0.0.1"),
        ("2130706433", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),
        ("10.1", "10.0.0.1"),
        ("192.168.257", "192.168.1.1"),
        ("8.8.8.8", "8.8.8.8"),
        ("[::1]", "::1"),
    ],
)
def test_an_address_literal_is_read_in_every_form_a_resolver_accepts(
    host: str, address: str
) -> None:
    assert address_literal(host) == ipaddress.ip_address(address)


@pytest.mark.parametrize(
    "host", ["hooks.example.com", "08.1", "1.2.3.4.5", "256.1.1.1", "1.2.3.0xg"]
)
def test_a_name_is_not_an_address_literal(host: str) -> None:
    assert address_literal(host) is None


@pytest.mark.parametrize("url", LOOPBACK_WRITTEN_ODDLY)
async def test_loopback_is_refused_however_it_is_written(url: str) -> None:
    with pytest.raises(TargetNotPublic, match="not a public address"):
        await check_target(url, allow_private=False, resolve=unused_resolver)


@pytest.mark.parametrize("url", LOOPBACK_WRITTEN_ODDLY)
async def test_adding_a_webhook_refuses_what_the_sender_refuses(url: str) -> None:
    store, clock, ids = InMemoryStore(), FakeClock(), SeededIdSource()
    services = owner_services(store, clock, ids, webhook_resolver=unused_resolver)
    workspace = await services.workspaces.create("Acme")
    form = await services.forms.create(workspace.workspace_id, name="Contact")
    calls: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(200)

    async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as client:
        sender = HttpWebhookSender(client, resolver=unused_resolver)

        response = await sender.send(url, {}, b"{}")
        with pytest.raises(AdminError, match="not a public address"):
            await services.webhooks.add(form.form_id, url)

    assert response.error is not None
    assert response.error.startswith("refused: ")
    assert "not a public address" in response.error
    assert calls == []
    assert await services.webhooks.all(form.form_id) == []


async def test_adding_a_webhook_resolves_a_name_and_refuses_a_private_answer() -> None:
    asked, resolve = resolving({"hooks.example.com": ["93.184.215.14", "10.0.0.5"]})
    services = owner_services(
        InMemoryStore(), FakeClock(), SeededIdSource(), webhook_resolver=resolve
    )
    workspace = await services.workspaces.create("Acme")
    form = await services.forms.create(workspace.workspace_id, name="Contact")

    with pytest.raises(AdminError) as refused:
        await services.webhooks.add(form.form_id, "https://hooks.example.com/in?token=t0k")

    assert "hooks.example.com resolves to an address that is not public" in str(refused.value)
    assert "10.0.0.5" not in str(refused.value)
    assert "t0k" not in str(refused.value)
    assert asked == ["hooks.example.com"]


async def test_adding_a_webhook_takes_a_public_name_and_one_that_does_not_resolve_yet() -> None:
    _, resolve = resolving({"hooks.example.com": ["93.184.215.14"]})
    services = owner_services(
        InMemoryStore(), FakeClock(), SeededIdSource(), webhook_resolver=resolve
    )
    workspace = await services.workspaces.create("Acme")
    form = await services.forms.create(workspace.workspace_id, name="Contact")

    public = await services.webhooks.add(form.form_id, "https://hooks.example.com/in")
    later = await services.webhooks.add(form.form_id, "https://not-yet.example.net/in")

    assert public.endpoint.url == "https://hooks.example.com/in"
    assert later.endpoint.url == "https://not-yet.example.net/in"


async def test_allowing_private_targets_lifts_the_rule_at_add_time() -> None:
    services = owner_services(
        InMemoryStore(),
        FakeClock(),
        SeededIdSource(),
        webhook_allow_private=True,
        webhook_resolver=unused_resolver,
    )
    workspace = await services.workspaces.create("Acme")
    form = await services.forms.create(workspace.workspace_id, name="Contact")

    added = await services.webhooks.add(form.form_id, "http://127.1:9/h")

    assert added.endpoint.url == "http://127.1:9/h"


@pytest.mark.parametrize(
    "url", ["https://h.example.com\\@127.0.0.1/", "https://h.example.com/\tx", "ftp://h/"]
)
async def test_what_parsers_disagree_on_is_refused(url: str) -> None:
    with pytest.raises(TargetRefused):
        await check_target(url, allow_private=True, resolve=None)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://hooks.example.com/in?token=t0k", "https://hooks.example.com/…"),
        ("https://user:pa55@hooks.example.com/in", "https://hooks.example.com/…"),
        ("https://hooks.example.com:8443/in#frag", "https://hooks.example.com:8443/…"),
        ("https://[2001:db8::1]/in?token=t0k", "https://[2001:db8::1]/…"),
        ("http://HOOKS.example.com", "http://hooks.example.com/…"),
        ("https://hooks.example.com:99999/in", "…"),
    ],
)
def test_a_redacted_url_keeps_the_scheme_host_and_port_only(url: str, shown: str) -> None:
    assert redacted_url(url) == shown
