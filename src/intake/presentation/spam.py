"""What a workspace's spam filter knows, in the one shape `intake spam stats`, GET /v1/spam
and the dashboard's settings page show (docs/scoring.md, "What the filter knows")."""

from __future__ import annotations

from intake.domain.spam.model import Statistics
from intake.domain.spam.verdict import confidence
from intake.ports.spam_statistics import SpamSummary


def spam_summary_view(workspace_id: str, summary: SpamSummary) -> dict[str, object]:
    """Counts only: the statistics hold keyed hashes, never a word to show."""
    own = Statistics(summary.spam_messages, summary.ham_messages)
    return {
        "workspace_id": workspace_id,
        "spam_messages": summary.spam_messages,
        "ham_messages": summary.ham_messages,
        "tokens": summary.tokens,
        # 0 until both kinds are taught; 1 once the filter decides alone.
        "confidence": round(confidence(own), 2),
        "instance": {
            "spam_messages": summary.instance_spam_messages,
            "ham_messages": summary.instance_ham_messages,
            "tokens": summary.instance_tokens,
        },
    }


def spam_summary_lines(summary: SpamSummary) -> list[str]:
    own = Statistics(summary.spam_messages, summary.ham_messages)
    return [
        f"spam_messages={summary.spam_messages}",
        f"ham_messages={summary.ham_messages}",
        f"tokens={summary.tokens}",
        f"confidence={round(confidence(own), 2)}",
        f"instance_spam_messages={summary.instance_spam_messages}",
        f"instance_ham_messages={summary.instance_ham_messages}",
        f"instance_tokens={summary.instance_tokens}",
    ]
