"""Who a client is, over HTTP: the per-client rate limits count an IPv6 client by its /64
(configurable) and an IPv4 address spelled in IPv6 as that IPv4 client, whether the
address is the socket peer's or a trusted proxy's X-Forwarded-For entry (decisions.md
"Who a client is")."""

from __future__ import annotations

import ipaddress

import httpx2

from intake.config import Settings
from intake.domain.privacy import ClientIpStorage
from intake.domain.ratelimit import RateLimits, RateRule
from tests.http.conftest import Seeded, ServiceFactory, assert_error

FIELDS = {"name": "Ada", "message": "Hello"}
PROXY = ipaddress.ip_network("203.0.113.0/24")  # the suite's peer is 203.0.113.5


def _post(seeded: Seeded, peer: str) -> httpx2.Response:
    return seeded.svc.public(seeded.form.public_form_key, data=FIELDS, peer=peer)


def _forwarded(seeded: Seeded, chain: str) -> httpx2.Response:
    return seeded.svc.public(
        seeded.form.public_form_key, data=FIELDS, headers={"x-forwarded-for": chain}
    )


def test_the_addresses_of_one_64_share_one_client_s_limit(seeded: Seeded) -> None:
    admitted = [_post(seeded, f"2001:db8:1:2::{n:x}").status_code for n in range(1, 6)]

    sixth = _post(seeded, "2001:db8:1:2:dead:beef:0:1")
    other_64 = _post(seeded, "2001:db8:1:3::1")

    assert admitted == [201] * 5
    assert_error(sixth, "rate_limited")
    assert other_64.status_code == 201


def test_one_64_cannot_spend_the_form_s_ceiling_for_everyone(
    make_service: ServiceFactory,
) -> None:
    limits = RateLimits(public_form=RateRule(20, 600))
    seeded = Seeded(make_service(Settings(rate_limits=limits)))

    statuses = [_post(seeded, f"2001:db8:1:2::{n:x}").status_code for n in range(1, 31)]
    someone_else = _post(seeded, "198.51.100.20")

    assert statuses.count(201) == 5
    assert someone_else.status_code == 201


def test_an_ipv4_mapped_address_is_the_same_client_as_the_ipv4_one(seeded: Seeded) -> None:
    spellings = ["::ffff:198.51.100.7", "198.51.100.7", "::ffff:c633:6407"]
    admitted = [_post(seeded, peer).status_code for peer in spellings + spellings[:2]]

    refused = [_post(seeded, peer) for peer in spellings]

    assert admitted == [201] * 5
    for response in refused:
        assert_error(response, "rate_limited")
    assert _post(seeded, "198.51.100.8").status_code == 201


def test_the_ipv6_prefix_is_configurable(make_service: ServiceFactory) -> None:
    seeded = Seeded(make_service(Settings(rate_limits=RateLimits(ipv6_prefix=48))))
    for n in range(5):
        assert _post(seeded, f"2001:db8:1:{n:x}::1").status_code == 201

    assert_error(_post(seeded, "2001:db8:1:ffff::1"), "rate_limited")
    assert _post(seeded, "2001:db8:2::1").status_code == 201


def test_forwarded_addresses_of_one_64_share_one_client_s_limit(
    make_service: ServiceFactory,
) -> None:
    seeded = Seeded(make_service(Settings(trusted_proxies=(PROXY,))))
    for n in range(1, 6):
        assert _forwarded(seeded, f"2001:db8:7:7::{n:x}").status_code == 201

    assert_error(_forwarded(seeded, "2001:db8:7:7::ffff"), "rate_limited")
    assert _forwarded(seeded, "2001:db8:7:8::1").status_code == 201


def test_a_forwarded_ipv4_mapped_address_is_the_ipv4_client(make_service: ServiceFactory) -> None:
    # Stored whole here, to see which address the submission was counted under.
    settings = Settings(trusted_proxies=(PROXY,), store_client_ip=ClientIpStorage.FULL)
    seeded = Seeded(make_service(settings))
    for chain in ["198.51.100.7", "::ffff:198.51.100.7"] * 2 + ["198.51.100.7"]:
        assert _forwarded(seeded, chain).status_code == 201, chain

    assert_error(_forwarded(seeded, "::ffff:198.51.100.7"), "rate_limited")
    stored = {s.client_ip for s in seeded.svc.submissions(seeded.form.form_id)}
    assert stored == {"198.51.100.7"}


def test_a_trusted_ipv4_proxy_behind_a_dual_stack_socket_is_still_trusted(
    make_service: ServiceFactory,
) -> None:
    seeded = Seeded(make_service(Settings(trusted_proxies=(PROXY,))))

    def through_proxy(client: str) -> httpx2.Response:
        return seeded.svc.public(
            seeded.form.public_form_key,
            data=FIELDS,
            peer="::ffff:203.0.113.9",
            headers={"x-forwarded-for": client},
        )

    for n in range(5):
        assert through_proxy(f"198.51.100.{n}").status_code == 201
    # Were the proxy taken for the client, its sixth request would be refused.
    assert through_proxy("198.51.100.99").status_code == 201
