"""The rule a destination's URL passes before it is saved: the one the relay applies at
every delivery (domain/webhook_targets.py), so an owner learns of a refusal at once. The
webhook endpoints and the chat destinations both ask it."""

from __future__ import annotations

from intake.domain.webhook_targets import (
    Resolver,
    TargetNotPublic,
    TargetRefused,
    TargetUnresolved,
    check_target,
)
from intake.service.admin.errors import AdminError


class TargetCheck:
    def __init__(self, *, allow_private: bool = False, resolve: Resolver | None = None) -> None:
        self._allow_private = allow_private
        # Without one, a host name is left for the relay to resolve and check.
        self._resolve = resolve

    async def check(self, url: str, field: str) -> None:
        """AdminError on `field` for a URL the relay would refuse. A name that cannot be
        resolved just now is taken: the relay resolves it again anyway. The refusal
        never repeats the URL: its path or query may carry a token."""
        try:
            await check_target(url, allow_private=self._allow_private, resolve=self._resolve)
        except TargetNotPublic as refused:
            raise AdminError(
                f"{refused} (INTAKE_WEBHOOK_ALLOW_PRIVATE=true allows private and http URLs)",
                field=field,
            ) from None
        except TargetRefused as refused:
            raise AdminError(str(refused), field=field) from None
        except TargetUnresolved:
            pass
