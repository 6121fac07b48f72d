"""schemathesis against the document the service publishes, on a running `intake serve`.

Requests are generated from /openapi.json (valid by the document and, some of the time,
invalid by it) and sent over a socket to a real server on a SQLite database. Path
parameters hit the real form key and form id part of the time, and the protected form
and made-up ones otherwise, so that generated bodies also reach the deep steps (parsing,
validation, the commit); the server route gets a working API key part of the time, and a
revoked or malformed one otherwise. Every answer must be one the document describes:
its status, content type, headers and body schema, and never a server error.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeAlias

import pytest
import schemathesis
from attrs import frozen
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from requests.structures import CaseInsensitiveDict
from schemathesis import Case, GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core.result import Ok
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.hostile.live import Seeds, environment, seed, serving

AnyCase: TypeAlias = Case[Any]
Operation: TypeAlias = schemathesis.APIOperation[Any, Any, Any, Any]

pytestmark = pytest.mark.slow

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]
# Per operation; the three together stay well under a minute on a loaded machine.
EXAMPLES = 60
PUBLIC = ("/f/{public_form_key}", "POST")
SERVER = ("/v1/forms/{form_id}/submissions", "POST")
PREFLIGHT = ("/f/{public_form_key}", "OPTIONS")


@frozen
class Live:
    base_url: str
    seeds: Seeds
    log: Path


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    directory = tmp_path_factory.mktemp("schemathesis")
    env = environment(directory / "intake.db")
    seeds = seed(env)
    log = directory / "serve.log"
    with serving(env, log) as base_url:
        yield Live(base_url, seeds, log)
    # The server answered every case; it must also have had no fault of its own.
    text = log.read_text(errors="replace")
    assert "Traceback" not in text, text[-4000:]
    assert "unhandled error" not in text, text[-4000:]


def _cases(
    operation: Operation, parameter: str, real: str, others: tuple[str, ...]
) -> st.SearchStrategy[AnyCase]:
    """Cases for the real form half of the time; for the other forms (the protected one,
    an unknown one) and a generated value otherwise. Invalid data (by the document) is
    generated for the real form only: elsewhere the form's own refusal would come first."""
    return st.one_of(
        operation.as_strategy(path_parameters={parameter: real}),
        operation.as_strategy(path_parameters={parameter: real}),
        operation.as_strategy(
            generation_mode=GenerationMode.NEGATIVE, path_parameters={parameter: real}
        ),
        *(operation.as_strategy(path_parameters={parameter: other}) for other in others),
        operation.as_strategy(),
    )


def _run(
    live: Live,
    cases: st.SearchStrategy[AnyCase],
    authorizations: st.SearchStrategy[str | None],
    examples: int = EXAMPLES,
) -> Counter[int]:
    statuses: Counter[int] = Counter()

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    @given(case=cases, authorization=authorizations)
    def exchange(case: AnyCase, authorization: str | None) -> None:
        headers = CaseInsensitiveDict(case.headers or {})
        headers.pop("Authorization", None)
        if authorization is not None:
            headers["Authorization"] = authorization
        case.headers = headers
        response = case.call_and_validate(base_url=live.base_url, checks=CHECKS, timeout=15)
        statuses[response.status_code] += 1

    exchange()
    return statuses


@pytest.fixture(scope="module")
def schema(live: Live) -> schemathesis.BaseSchema:
    return schemathesis.openapi.from_url(f"{live.base_url}/openapi.json")


def test_the_public_endpoint_answers_as_documented(
    live: Live, schema: schemathesis.BaseSchema
) -> None:
    seeds = live.seeds
    operation = schema[PUBLIC[0]][PUBLIC[1]]

    statuses = _run(
        live,
        _cases(operation, "public_form_key", seeds.public_key, (seeds.protected_key, "nope")),
        st.none(),
    )

    # The deep steps were reached, and so were the early refusals.
    assert statuses[201] > 0, statuses
    assert statuses[401] > 0, statuses  # the protected form
    assert statuses[404] > 0, statuses  # made-up keys


def test_the_server_endpoint_answers_as_documented(
    live: Live, schema: schemathesis.BaseSchema
) -> None:
    seeds = live.seeds
    operation = schema[SERVER[0]][SERVER[1]]
    valid = f"Bearer {seeds.api_key}"

    statuses = _run(
        live,
        _cases(operation, "form_id", seeds.public_form_id, (seeds.protected_form_id, "frm_nope")),
        st.sampled_from(
            [
                valid,
                valid,
                valid,
                valid,
                f"bearer  {seeds.api_key} ",
                f"Bearer {seeds.revoked_api_key}",
                "Bearer intake_sk_unknown",
                f"Basic {seeds.api_key}",
                None,
            ]
        ),
    )

    assert statuses[201] > 0, statuses
    assert statuses[401] > 0, statuses
    assert statuses[404] > 0, statuses  # made-up form ids, with a working key


def test_the_preflight_answers_as_documented(live: Live, schema: schemathesis.BaseSchema) -> None:
    operation = schema[PREFLIGHT[0]][PREFLIGHT[1]]

    statuses = _run(
        live,
        _cases(operation, "public_form_key", live.seeds.public_key, (live.seeds.protected_key,)),
        st.none(),
        examples=30,
    )

    assert set(statuses) == {204}, statuses


def test_every_other_documented_operation_answers_as_documented(
    live: Live, schema: schemathesis.BaseSchema
) -> None:
    submissions = {PUBLIC, SERVER, PREFLIGHT}
    results = list(schema.get_all_operations())
    operations = [result.ok() for result in results if isinstance(result, Ok)]
    assert len(operations) == len(results), "an operation of the document is invalid"
    # The management API's operations have a run of their own, with keys and real ids
    # (test_schemathesis_management.py).
    others = [
        op
        for op in operations
        if (op.path, op.method.upper()) not in submissions and "x-scopes" not in op.definition.raw
    ]

    for operation in others:
        statuses = _run(live, operation.as_strategy(), st.none(), examples=20)
        assert statuses, operation.label
