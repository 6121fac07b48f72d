"""Holds every answer the suite receives against the OpenAPI document the service
publishes. The document is parsed, its `$ref`s resolved and its schemas checked once
per process, not once per service or answer: a test builds hundreds of services."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

import httpx2
import jsonschema
from jsonschema.protocols import Validator


def _resolve_refs(node: Any, document: Mapping[str, Any]) -> Any:
    """The schema with every local `$ref` replaced by what it points at."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/"):
            target: Any = document
            for part in ref[2:].split("/"):
                target = target[part]
            return _resolve_refs(target, document)
        return {key: _resolve_refs(value, document) for key, value in node.items()}
    if isinstance(node, list):
        return [_resolve_refs(item, document) for item in node]
    return node


class PublishedDocument:
    """One published document, with what checking an answer needs kept as it is made."""

    def __init__(self, document: Mapping[str, Any]) -> None:
        self.document = document
        # The template with the most literal segments wins, as a router would choose.
        self._templates = sorted(document["paths"], key=lambda t: t.count("{"))
        self._answers: dict[tuple[str, str], Mapping[str, Any]] = {}
        self._validators: dict[int, Validator] = {}

    def operation(self, method: str, path: str) -> Mapping[str, Any] | None:
        # Not stripped: `/f/KEY/` and `/f/` are other paths than `/f/KEY` (unknown, 404).
        parts = path.split("/")[1:]
        if not all(parts):
            return None
        for template in self._templates:
            segments = template.split("/")[1:]
            if len(segments) == len(parts) and all(
                s.startswith("{") or s == p for s, p in zip(segments, parts, strict=True)
            ):
                operation: Mapping[str, Any] | None = self.document["paths"][template].get(
                    method.lower()
                )
                return operation
        return None

    def answer(self, operation: Mapping[str, Any], status: str) -> Mapping[str, Any]:
        """The documented answer of that status, its references resolved."""
        key = (operation["operationId"], status)
        if key not in self._answers:
            self._answers[key] = _resolve_refs(operation["responses"][status], self.document)
        return self._answers[key]

    def validate(self, value: Any, schema: Mapping[str, Any]) -> None:
        """As `jsonschema.validate`, with the schema itself checked only the first time.
        The schemas are those of `answer`, kept alive here, so their ids stay theirs."""
        validator = self._validators.get(id(schema))
        if validator is None:
            cls = jsonschema.validators.validator_for(schema)
            cls.check_schema(schema)
            validator = self._validators[id(schema)] = cls(schema)
        validator.validate(value)


def validate(value: Any, schema: Mapping[str, Any]) -> None:
    """As `jsonschema.validate`: raises jsonschema.ValidationError unless `value` is valid
    under `schema`, which must itself be a valid schema. Each distinct schema is checked
    once per process, the check being what costs, tens of times what the value's does."""
    _validator(json.dumps(schema, sort_keys=True)).validate(value)


@functools.cache
def _validator(schema_text: str) -> Validator:
    schema = json.loads(schema_text)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


@functools.cache
def published(body: bytes) -> PublishedDocument:
    return PublishedDocument(json.loads(body))


class SpecCheck:
    """Holds every answer against the OpenAPI document the service publishes."""

    def __init__(self, document: PublishedDocument) -> None:
        self.published = document
        self.document = document.document
        # (operationId, status, error code or None) of every answer that was validated.
        self.seen: list[tuple[str, int, str | None]] = []

    @classmethod
    def of(cls, response: httpx2.Response) -> SpecCheck:
        """The check of the document a GET /openapi.json answered with."""
        assert response.status_code == 200, response.text
        return cls(published(response.content))

    def operation(self, method: str, path: str) -> Mapping[str, Any] | None:
        return self.published.operation(method, path)

    def check(self, response: httpx2.Response) -> None:
        request = response.request
        assert response.headers.get("x-request-id"), f"no X-Request-ID on {request.url}"
        operation = self.operation(request.method, request.url.path)
        if operation is None:
            return
        status = str(response.status_code)
        documented = operation["responses"]
        assert status in documented, f"{request.method} {request.url.path}: {status} undocumented"
        spec = self.published.answer(operation, status)
        for name, header in spec.get("headers", {}).items():
            value = response.headers.get(name)
            # CORS: every answer of the public endpoint echoes the request's Origin.
            required = header.get("required", False) or (
                name == "Access-Control-Allow-Origin" and "origin" in request.headers
            )
            if value is None:
                assert not required, f"{status} lacks its documented header {name}"
                continue
            self.published.validate(value, header["schema"])
        media = response.headers.get("content-type", "").split(";")[0].strip()
        content = spec.get("content")
        code = None
        if not content:
            assert not response.content, f"{status} has a body it does not document"
        else:
            # `*/*`: a download, in whatever type its content was found to be.
            documented = media in content or "*/*" in content
            assert documented, f"{status} is {media!r}, documented {sorted(content)}"
            if media == "application/json" and media in content:
                body = response.json()
                self.published.validate(body, content[media]["schema"])
                code = body["error"]["code"] if body.get("ok") is False else None
        self.seen.append((operation["operationId"], response.status_code, code))
