"""The mailbox an address reaches, where its provider documents how spellings map to
mailboxes: what the autoresponder's one-per-address limit counts, so that spellings of
one inbox cannot earn it a confirmation each.

Only documented rules are applied, and conservatively: one that is wrong would merge two
people's mailboxes (no harm but a confirmation fewer); one that is missing lets a
visitor spell one inbox several ways (a few more mails to it, never more than the form's
hourly limit).

- Every address: in any case (providers treat local parts without case in practice),
  and without a `+tag` (sub-addressing, RFC 5233: Gmail, Outlook.com, iCloud, Fastmail,
  Proton and most others deliver alice+anything@ to alice@).
- Gmail: dots in the local part are ignored (`v.i.c.t.i.m@` is `victim@`), and
  `googlemail.com` is `gmail.com` (Google's help: "Dots don't matter in Gmail
  addresses"; googlemail.com addresses are the same accounts).

Not applied, as no provider documents them as the same mailbox for every account:
dots elsewhere (Outlook.com and others count them), Proton's several domains, Yahoo's
`-keyword` disposable addresses, Fastmail's subdomain addressing.
"""

from __future__ import annotations

_GMAIL = "gmail.com"
_GMAIL_DOMAINS = frozenset({_GMAIL, "googlemail.com"})


def mailbox(address: str) -> str:
    """The address as its mailbox: `local@domain`, lower case, by the rules above. An
    address without `@` is only lower-cased and stripped."""
    local, at, domain = address.strip().lower().rpartition("@")
    if not at:
        return domain
    # A local part that starts with + stays whole: it has no mailbox before its tag.
    local = local.split("+", 1)[0] or local
    if domain in _GMAIL_DOMAINS:
        domain = _GMAIL
        local = local.replace(".", "") or local
    return f"{local}@{domain}"
