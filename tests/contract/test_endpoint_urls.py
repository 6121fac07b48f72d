"""One URL is one webhook endpoint of a form, in every store: a second endpoint at the
same URL (however its scheme, host and default port are written) would have every event
delivered twice, so the store refuses it in the insert's own transaction, also when two
adds come at once. Another form may use the URL."""

from __future__ import annotations

import asyncio

import pytest
from attrs import evolve

from intake.domain.webhook_targets import AlreadyAnEndpoint, same_endpoint_url
from intake.ports.store import Store
from tests.contract.builders import FORM_ID, endpoint, form, seed

pytestmark = pytest.mark.anyio

OTHER_FORM = "frm_2"
URL = "https://hooks.example.com/intake?token=abc"


@pytest.fixture
async def seeded(store: Store) -> Store:
    await seed(store, form(), form(OTHER_FORM, public_form_key="pk0form2"))
    return store


@pytest.mark.parametrize(
    "again",
    [
        URL,
        "HTTPS://Hooks.Example.COM/intake?token=abc",
        "https://hooks.example.com:443/intake?token=abc#x",
    ],
)
async def test_a_second_endpoint_at_the_same_url_is_refused(seeded: Store, again: str) -> None:
    first = evolve(endpoint("whk_1"), url=URL)
    await seeded.destinations.add_endpoint(first)

    with pytest.raises(AlreadyAnEndpoint):
        await seeded.destinations.add_endpoint(evolve(endpoint("whk_2"), url=again))

    assert [e.endpoint_id for e in await seeded.destinations.list_endpoints(FORM_ID)] == ["whk_1"]


async def test_another_url_and_another_form_are_taken(seeded: Store) -> None:
    await seeded.destinations.add_endpoint(evolve(endpoint("whk_1"), url=URL))
    await seeded.destinations.add_endpoint(evolve(endpoint("whk_2"), url=URL + "x"))
    elsewhere = evolve(endpoint("whk_3", form_id=OTHER_FORM), url=URL)
    await seeded.destinations.add_endpoint(elsewhere)

    assert len(await seeded.destinations.list_endpoints(FORM_ID)) == 2
    assert await seeded.destinations.list_endpoints(OTHER_FORM) == [elsewhere]


async def test_two_adds_of_one_url_at_once_add_one(seeded: Store) -> None:
    adds = [
        seeded.destinations.add_endpoint(evolve(endpoint(f"whk_{n}"), url=URL)) for n in range(4)
    ]

    results = await asyncio.gather(*adds, return_exceptions=True)

    assert sum(1 for r in results if r is None) == 1
    assert all(isinstance(r, AlreadyAnEndpoint) for r in results if r is not None)
    assert len(await seeded.destinations.list_endpoints(FORM_ID)) == 1


def test_what_counts_as_the_same_url() -> None:
    assert same_endpoint_url("https://a.example", "https://A.example:443/")
    assert same_endpoint_url("http://a.example:80/x", "HTTP://a.example/x#frag")
    assert not same_endpoint_url("https://a.example/x", "https://a.example/X")
    assert not same_endpoint_url("https://a.example/x?a=1", "https://a.example/x?a=2")
    assert not same_endpoint_url("https://a.example:8443/", "https://a.example/")
    assert not same_endpoint_url("http://a.example/", "https://a.example/")
