"""The receipt of an erasure on request, one JSON shape whichever entry point prints it:
what went (ids, forms, times), never what it held."""

from __future__ import annotations

from intake.service.admin import ErasureReceipt


def erasure_receipt_view(receipt: ErasureReceipt) -> dict[str, object]:
    return {
        "workspace_id": receipt.workspace_id,
        "dry_run": receipt.dry_run,
        "performed_at": receipt.at.isoformat(),
        "count": len(receipt.submissions),
        "forms": [{"form_id": form_id, "count": n} for form_id, n in receipt.forms.items()],
        "submissions": [
            {
                "submission_id": s.submission_id,
                "form_id": s.form_id,
                "created_at": s.created_at.isoformat(),
            }
            for s in receipt.submissions
        ],
    }


def erasure_receipt_lines(receipt: ErasureReceipt) -> list[str]:
    """The receipt as a person reads it."""
    count = len(receipt.submissions)
    noun = "submission" if count == 1 else "submissions"
    verb = "would erase" if receipt.dry_run else "erased"
    lines = [f"{verb} {count} {noun} at {receipt.at.isoformat()}"]
    lines += [f"  form {form_id}: {n}" for form_id, n in receipt.forms.items()]
    if receipt.dry_run:
        lines += [
            f"  {s.submission_id} form={s.form_id} created_at={s.created_at.isoformat()}"
            for s in receipt.submissions
        ]
    return lines
