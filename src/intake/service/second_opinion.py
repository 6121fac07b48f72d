"""Step 10's second opinion: Akismet, asked about a public submission beside the
built-in filter, within its short timeout (docs/scoring.md, "Akismet"). Without an
answer in time the filter decides alone; the submission is stored either way."""

from __future__ import annotations

from intake.domain import validation
from intake.domain.controls import Controls
from intake.domain.model import FieldData, Form
from intake.domain.scoring import Score
from intake.domain.spam.opinion import check_query, with_verdict
from intake.ports.spam_opinion import SpamOpinion
from intake.service.messages import SubmitRequest


async def second_opinion(
    opinion: SpamOpinion | None,
    score: Score,
    *,
    request: SubmitRequest,
    form: Form,
    data: FieldData,
    controls: Controls,
) -> Score:
    """`score` with Akismet's verdict, when it is configured and the visitor gave what
    it judges by (an address and a user agent)."""
    if opinion is None:
        return score
    query = check_query(
        data,
        subject=controls.subject,
        reply_to=validation.reply_address(data, controls.reply_to),
        client_ip=request.client_ip,
        user_agent=request.user_agent,
        referrer=request.referrer,
    )
    if query is None:
        return score
    return with_verdict(score, await opinion.check(query), form.spam_threshold)
