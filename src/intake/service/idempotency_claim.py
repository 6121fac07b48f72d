"""A request's Idempotency-Key, as step 6 reads it: where it is looked up, the print of
the payload that may reuse it, and the answer an earlier use of it earns."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from attrs import frozen

from intake.domain.controls import Controls
from intake.domain.errors import ErrorCode, IntakeError
from intake.domain.idempotency import IdempotencyRecord, fingerprint, is_valid_key
from intake.domain.model import FieldData, Form
from intake.domain.uploads import StoredFile
from intake.service.messages import Accepted


@frozen
class IdempotencyClaim:
    key: str | None
    scope: str
    payload_print: str = ""

    @classmethod
    def of(
        cls,
        key: str | None,
        key_scope: str,
        fields: FieldData,
        files: Sequence[StoredFile],
        refused_files: Iterable[str],
    ) -> IdempotencyClaim:
        """`fields` before the control-field split. Only a request with a key is ever
        compared: the others skip hashing their body."""
        if key is None:
            return cls(None, key_scope)
        if not is_valid_key(key):
            raise IntakeError.of(ErrorCode.MALFORMED_REQUEST)
        return cls(key, key_scope, fingerprint(fields, files, refused_files))

    def record(self, submission_id: str, now: datetime) -> IdempotencyRecord | None:
        """What a commit writes for the key; nothing without one."""
        if self.key is None:
            return None
        return IdempotencyRecord(self.scope, self.key, self.payload_print, submission_id, now)

    def replay(self, earlier: IdempotencyRecord, form: Form, controls: Controls) -> Accepted:
        """The earlier submission's answer, when this payload is the one it was for."""
        if earlier.fingerprint != self.payload_print:
            raise IntakeError.of(ErrorCode.IDEMPOTENCY_CONFLICT)
        return Accepted(earlier.submission_id, form, replayed=True, next_url=controls.next_url)
