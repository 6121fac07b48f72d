"""Invitations on the dashboard: an owner's invitation becomes a membership only when the
invitee accepts it, signed in as themselves; the inviter learns nothing of whether the
address has an account, and never receives a link that touches one; on every store."""

from __future__ import annotations

import re

import httpx2
import pytest

from intake.accounts_runtime import make_accounts
from intake.adapters.memory import FakeMailer
from intake.domain.users import Role
from tests.http.conftest import ServiceFactory
from tests.http.dashboard_support import CHEAP_ARGON2, PASSWORD, Dashboard, isolated

MEMBERS = "/dashboard/settings/members"
ANY_LINK = re.compile(r"/dashboard/(?:sign-in|invitations)/[0-9a-z]{39}")


@pytest.fixture
def dash(make_service: ServiceFactory) -> Dashboard:
    return Dashboard(make_service())


def _invite(dash: Dashboard, email: str, workspace: str, role: str = "member") -> httpx2.Response:
    return _followed(dash, _post_invite(dash, email, workspace, role))


def _post_invite(
    dash: Dashboard, email: str, workspace: str, role: str = "member"
) -> httpx2.Response:
    return dash.client.post(
        MEMBERS + "/invite",
        data={"csrf": dash.csrf(MEMBERS), "workspace": workspace, "email": email, "role": role},
    )


def _followed(dash: Dashboard, posted: httpx2.Response) -> httpx2.Response:
    """As a browser does: a post's 303 followed, once, to the members page it names."""
    if posted.status_code != 303:
        return posted
    assert posted.headers["location"].startswith(MEMBERS + "?sent=inv_"), posted.headers
    return dash.client.get(posted.headers["location"])


def test_an_owner_of_another_workspace_cannot_take_over_a_user_by_inviting_them(
    dash: Dashboard,
) -> None:
    # boss owns workspace A and has not chosen a password yet.
    boss = dash.svc.run(
        dash.accounts.users.create, "boss@example.com", dash.workspace.workspace_id, Role.OWNER
    )
    other = dash.svc.workspace(name="B")
    dash.svc.run(dash.accounts.users.create, "mallory@example.com", other.workspace_id, Role.OWNER)
    mallory = dash.svc.run(dash.svc.store.users.find_by_email, "mallory@example.com")
    assert mallory is not None
    link = dash.svc.run(dash.accounts.users._new_link, mallory.user_id, dash.svc.clock.now())
    dash.set_password("/" + link.split("/", 3)[3])

    answer = _invite(dash, "boss@example.com", other.workspace_id)

    assert answer.status_code == 200
    assert ANY_LINK.search(answer.text) is None  # nothing that opens boss's account
    memberships = dash.svc.run(dash.svc.store.users.memberships, boss.user.user_id)
    assert [m.workspace_id for m in memberships] == [dash.workspace.workspace_id]
    user = dash.svc.run(dash.svc.store.users.get, boss.user.user_id)
    assert user is not None
    assert user.password_hash is None
    assert PASSWORD  # the owner of B signed in with it, and only into B


def _notice(page: httpx2.Response, address: str) -> str:
    found = re.search(r'<div class="notice" role="status">(.*?)</div>', page.text, re.DOTALL)
    assert found is not None, page.text
    return found.group(1).replace(address, "ADDRESS")


def _owner_of_the_workspace(dash: Dashboard) -> None:
    dash.set_password(dash.link("owner@example.com"))


def _signed_in_elsewhere(dash: Dashboard, email: str) -> str:
    """A user of another workspace, signed in in a new browser; their user id."""
    other = dash.svc.workspace(name="Elsewhere " + email)
    created = dash.svc.run(dash.accounts.users.create, email, other.workspace_id, Role.OWNER)
    assert created.link is not None
    dash.new_browser()
    assert dash.set_password("/" + created.link.split("/", 3)[3]).status_code == 303
    return created.user.user_id


def _invitation_ids(page: httpx2.Response) -> list[str]:
    """Each invitation's id once, in the page's order (each has two forms)."""
    return list(dict.fromkeys(re.findall(r'name="invitation" value="([^"]+)"', page.text)))


def test_the_inviter_gets_the_same_answer_whoever_the_address_is(dash: Dashboard) -> None:
    workspace = dash.workspace.workspace_id
    _signed_in_elsewhere(dash, "has.password@example.com")
    other = dash.svc.workspace(name="Other")
    dash.svc.run(
        dash.accounts.users.create, "no.password@example.com", other.workspace_id, Role.OWNER
    )
    dash.svc.run(dash.accounts.users.create, "member@example.com", workspace, Role.MEMBER)
    dash.new_browser()
    _owner_of_the_workspace(dash)

    addresses = [
        "has.password@example.com",
        "no.password@example.com",
        "member@example.com",
        "owner@example.com",
        "nobody@example.com",
    ]
    answers = [_invite(dash, address, workspace) for address in addresses]

    assert {a.status_code for a in answers} == {200}
    assert len({_notice(a, x) for a, x in zip(answers, addresses, strict=True)}) == 1
    assert all(ANY_LINK.search(a.text) is None for a in answers)
    members = dash.svc.run(dash.svc.store.users.workspace_memberships, workspace)
    assert len(members) == 2  # the owner and the member made by the operator; no one else


def test_an_invitation_declined_makes_no_member(dash: Dashboard) -> None:
    _owner_of_the_workspace(dash)
    _invite(dash, "bob@example.com", dash.workspace.workspace_id)
    owner_browser = dict(dash.client.cookies)
    bob = _signed_in_elsewhere(dash, "bob@example.com")

    forms = dash.client.get("/dashboard")
    (invitation_id,) = _invitation_ids(forms)
    assert isolated("owner@example.com") + " invited you as member" in forms.text
    assert "Acme &lt;b&gt;&amp;&lt;/b&gt;" in forms.text  # the workspace, escaped
    forged = dash.client.post("/dashboard/invitations/accept", data={"invitation": invitation_id})
    declined = dash.post("/dashboard/invitations/decline", invitation=invitation_id)
    accepted = dash.post("/dashboard/invitations/accept", invitation=invitation_id)

    assert forged.status_code == 403
    assert dash.said(declined) == "Invitation declined."
    assert accepted.status_code == 404
    assert _invitation_ids(dash.client.get("/dashboard")) == []
    roles = dash.svc.run(dash.svc.store.users.memberships, bob)
    assert dash.workspace.workspace_id not in {m.workspace_id for m in roles}
    dash.new_browser()
    dash.client.cookies.update(owner_browser)
    assert "Pending invitations" not in dash.client.get(MEMBERS).text


def test_only_the_invited_user_accepts(dash: Dashboard) -> None:
    _owner_of_the_workspace(dash)
    _invite(dash, "bob@example.com", dash.workspace.workspace_id)
    (invitation_id,) = _invitation_ids(dash.client.get(MEMBERS))
    eve = _signed_in_elsewhere(dash, "eve@example.com")

    taken = dash.post("/dashboard/invitations/accept", invitation=invitation_id)
    declined = dash.post("/dashboard/invitations/decline", invitation=invitation_id)

    assert taken.status_code == declined.status_code == 404
    roles = dash.svc.run(dash.svc.store.users.memberships, eve)
    assert dash.workspace.workspace_id not in {m.workspace_id for m in roles}


def test_owners_revoke_and_resend_and_an_invitation_expires(dash: Dashboard) -> None:
    _owner_of_the_workspace(dash)
    _invite(dash, "bob@example.com", dash.workspace.workspace_id)
    _invite(dash, "carol@example.com", dash.workspace.workspace_id)
    bob_id, carol_id = _invitation_ids(dash.client.get(MEMBERS))
    revoked = dash.post(MEMBERS + "/invitations/revoke", invitation=bob_id)
    assert dash.said(revoked) == "Invitation revoked: its link works no more."
    assert dash.post(MEMBERS + "/invitations/revoke", invitation=bob_id).status_code == 404
    dash.svc.clock.advance(7 * 24 * 3600)
    _signed_in_elsewhere(dash, "bob@example.com")
    assert _invitation_ids(dash.client.get("/dashboard")) == []
    assert dash.post("/dashboard/invitations/accept", invitation=bob_id).status_code == 404
    _signed_in_elsewhere(dash, "carol@example.com")
    assert _invitation_ids(dash.client.get("/dashboard")) == []  # expired
    assert dash.post("/dashboard/invitations/accept", invitation=carol_id).status_code == 404
    carol_browser = dict(dash.client.cookies)

    dash.new_browser()
    assert dash.sign_in("owner@example.com", PASSWORD).status_code == 303
    listed = dash.client.get(MEMBERS)
    resent = _followed(dash, dash.post(MEMBERS + "/invitations/resend", invitation=carol_id))

    assert _invitation_ids(listed) == [carol_id]
    assert "expired" in listed.text
    assert resent.status_code == 200
    assert f"Invitation for {isolated('carol@example.com')} saved" in resent.text
    dash.new_browser()
    dash.client.cookies.update(carol_browser)
    assert _invitation_ids(dash.client.get("/dashboard")) == [carol_id]
    assert dash.post("/dashboard/invitations/accept", invitation=carol_id).status_code == 303
    assert dash.form.form_id in dash.client.get("/dashboard").text


def test_a_member_cannot_see_resend_or_revoke_invitations(dash: Dashboard) -> None:
    _owner_of_the_workspace(dash)
    _invite(dash, "bob@example.com", dash.workspace.workspace_id)
    (invitation_id,) = _invitation_ids(dash.client.get(MEMBERS))
    other = dash.svc.workspace(name="Other")
    dash.svc.run(dash.accounts.users.create, "x@example.com", other.workspace_id, Role.OWNER)
    dash.new_browser()
    dash.set_password(dash.link("member@example.com", Role.MEMBER))

    page = dash.client.get(MEMBERS)
    resend = dash.post(MEMBERS + "/invitations/resend", invitation=invitation_id)
    revoke = dash.post(MEMBERS + "/invitations/revoke", invitation=invitation_id)
    unknown = dash.post(MEMBERS + "/invitations/revoke", invitation="inv_nope")

    assert "bob@example.com" not in page.text
    assert resend.status_code == revoke.status_code == 403
    assert unknown.status_code == 404


def test_a_member_leaves_and_the_last_owner_cannot(dash: Dashboard) -> None:
    dash.set_password(dash.link("member@example.com", Role.MEMBER))
    member_browser = dict(dash.client.cookies)
    dash.new_browser()
    _owner_of_the_workspace(dash)
    workspace = dash.workspace.workspace_id

    last = dash.post(MEMBERS + "/leave", workspace=workspace)
    dash.new_browser()
    dash.client.cookies.update(member_browser)
    left = dash.post(MEMBERS + "/leave", workspace=workspace)

    assert last.status_code == 422
    assert "at least one owner" in last.text
    assert dash.said(left) == "You left the workspace."
    home = dash.client.get("/dashboard")
    assert home.status_code == 200  # still signed in, in no workspace
    assert dash.form.form_id not in home.text
    assert dash.post(MEMBERS + "/leave", workspace=workspace).status_code == 404


class MailingDashboard:
    """The dashboard with a mail server: invitations are mailed; their links are read
    from the mails sent."""

    def __init__(self, dash: Dashboard) -> None:
        self.dash = dash
        self.mailer = FakeMailer()
        runtime = dash.app.state.runtime
        dash.accounts = make_accounts(
            runtime.settings,
            dash.svc.store,
            dash.svc.clock,
            dash.svc.ids,
            runtime.rate_limiter,
            hasher=CHEAP_ARGON2,
            mailer=self.mailer,
        )
        dash.app.state.dashboard_accounts = dash.accounts

    def link(self) -> str:
        found = ANY_LINK.search(self.mailer.sent[-1].get_content())
        assert found is not None
        return found.group(0)


@pytest.fixture
def mailing(dash: Dashboard) -> MailingDashboard:
    return MailingDashboard(dash)


def test_a_mailed_invitation_names_the_workspace_and_who_invited(
    dash: Dashboard, mailing: MailingDashboard
) -> None:
    _owner_of_the_workspace(dash)

    answer = _invite(dash, "new@example.com", dash.workspace.workspace_id)

    assert "Invitation sent to " + isolated("new@example.com") in answer.text
    assert ANY_LINK.search(answer.text) is None
    (mail,) = mailing.mailer.sent
    assert mail["To"] == "new@example.com"
    assert "owner@example.com" in mail["Subject"]
    assert '"Acme <b>&</b>"' in mail.get_content()
    assert "/dashboard/invitations/" in mailing.link()


def test_a_mailed_link_makes_an_account_for_a_new_address(
    dash: Dashboard, mailing: MailingDashboard
) -> None:
    _owner_of_the_workspace(dash)
    _invite(dash, "new@example.com", dash.workspace.workspace_id, role="owner")
    link = mailing.link()
    dash.new_browser()

    page = dash.client.get(link)
    token = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert token is not None
    differ = dash.client.post(
        link, data={"csrf": token.group(1), "password": PASSWORD, "confirm": "other"}
    )
    joined = dash.client.post(
        link, data={"csrf": token.group(1), "password": PASSWORD, "confirm": PASSWORD}
    )

    assert page.status_code == 200
    assert 'autocomplete="username" value="new@example.com" readonly' in page.text
    assert differ.status_code == 422
    assert joined.status_code == 303
    assert dash.form.form_id in dash.client.get("/dashboard").text
    dash.new_browser()
    assert dash.client.get(link).status_code == 410
    assert dash.sign_in("new@example.com", PASSWORD).status_code == 303


def test_a_mailed_link_never_sets_an_existing_accounts_password(
    dash: Dashboard, mailing: MailingDashboard
) -> None:
    # ghost has an account and no password yet: the attack of the inviter who holds the
    # mailed link (forwarded, or their own mailbox misread) must find nothing to set.
    other = dash.svc.workspace(name="Other")
    ghost = dash.svc.run(
        dash.accounts.users.create, "ghost@example.com", other.workspace_id, Role.OWNER
    )
    _owner_of_the_workspace(dash)
    _invite(dash, "ghost@example.com", dash.workspace.workspace_id)
    link = mailing.link()
    dash.new_browser()

    page = dash.client.get(link)
    token = dash.csrf("/dashboard/sign-in")
    joined = dash.client.post(link, data={"csrf": token, "password": PASSWORD, "confirm": PASSWORD})

    assert page.status_code == 200
    assert 'type="password"' not in page.text
    assert "sign in" in page.text
    assert joined.status_code == 409
    assert "intake_session" not in joined.headers.get("set-cookie", "")
    user = dash.svc.run(dash.svc.store.users.get, ghost.user.user_id)
    assert user is not None
    assert user.password_hash is None


def test_a_mailed_link_leads_its_signed_in_invitee_to_accept(
    dash: Dashboard, mailing: MailingDashboard
) -> None:
    _owner_of_the_workspace(dash)
    _invite(dash, "bob@example.com", dash.workspace.workspace_id)
    link = mailing.link()
    _signed_in_elsewhere(dash, "eve@example.com")
    as_eve = dash.client.get(link)
    _signed_in_elsewhere(dash, "bob@example.com")

    as_bob = dash.client.get(link)

    assert as_eve.status_code == 200
    assert f"Only {isolated('bob@example.com')} can accept it" in as_eve.text
    assert as_bob.status_code == 303
    assert as_bob.headers["location"] == "/dashboard"
    assert dash.client.get("/dashboard/invitations/abc").status_code == 410


def test_a_workspace_sends_at_most_20_invitations_an_hour(dash: Dashboard) -> None:
    _owner_of_the_workspace(dash)
    workspace = dash.workspace.workspace_id
    for n in range(20):
        assert _invite(dash, f"guest{n}@example.com", workspace).status_code == 200
    (first,) = _invitation_ids(dash.client.get(MEMBERS))[:1]

    refused = _invite(dash, "one.more@example.com", workspace)
    resend = dash.post(MEMBERS + "/invitations/resend", invitation=first)

    for answer in (refused, resend):
        assert answer.status_code == 429
        wait = int(answer.headers["retry-after"])
        assert 0 < wait <= 3600
        assert f"try again in {-(-wait // 60)} minute" in answer.text
    pending = dash.svc.run(dash.svc.store.users.workspace_invitations, workspace)
    assert "one.more@example.com" not in {i.email for i in pending}
    dash.svc.clock.advance(3600)
    dash.new_browser()
    assert dash.sign_in("owner@example.com", PASSWORD).status_code == 303
    assert _invite(dash, "one.more@example.com", workspace).status_code == 200


def test_a_suspended_workspace_sends_no_invitation(dash: Dashboard) -> None:
    _owner_of_the_workspace(dash)
    workspace = dash.workspace.workspace_id
    _invite(dash, "bob@example.com", workspace)
    (pending,) = _invitation_ids(dash.client.get(MEMBERS))
    dash.svc.run(dash.svc.services.workspaces.set_active, workspace, False)

    invited = _invite(dash, "carol@example.com", workspace)
    resent = dash.post(MEMBERS + "/invitations/resend", invitation=pending)

    assert invited.status_code == resent.status_code == 403
    assert "This workspace is suspended" in invited.text
    listed = dash.svc.run(dash.svc.store.users.workspace_invitations, workspace)
    assert [i.email for i in listed] == ["bob@example.com"]
    assert dash.post(MEMBERS + "/invitations/revoke", invitation=pending).status_code == 303


def test_reloading_the_page_an_invitation_leads_to_sends_nothing_more(
    dash: Dashboard, mailing: MailingDashboard
) -> None:
    _owner_of_the_workspace(dash)
    workspace = dash.workspace.workspace_id

    posted = _post_invite(dash, "new@example.com", workspace)
    shown = dash.client.get(posted.headers["location"])
    reloaded = dash.client.get(posted.headers["location"])

    assert posted.status_code == 303
    assert "new@example.com" not in posted.headers["location"]
    assert "Invitation sent to " + isolated("new@example.com") in shown.text
    assert reloaded.status_code == 200
    assert 'class="notice"' not in reloaded.text  # said once
    assert [mail["To"] for mail in mailing.mailer.sent] == ["new@example.com"]
    pending = dash.svc.run(dash.svc.store.users.workspace_invitations, workspace)
    assert [i.email for i in pending] == ["new@example.com"]


def test_reloading_the_page_a_resend_leads_to_sends_nothing_more(
    dash: Dashboard, mailing: MailingDashboard
) -> None:
    _owner_of_the_workspace(dash)
    workspace = dash.workspace.workspace_id
    _invite(dash, "new@example.com", workspace)
    (invitation_id,) = _invitation_ids(dash.client.get(MEMBERS))

    posted = dash.post(MEMBERS + "/invitations/resend", invitation=invitation_id)
    shown = dash.client.get(posted.headers["location"])
    reloaded = dash.client.get(posted.headers["location"])

    assert posted.status_code == 303
    assert "Invitation sent to " + isolated("new@example.com") in shown.text
    assert reloaded.status_code == 200
    assert 'class="notice"' not in reloaded.text
    assert [mail["To"] for mail in mailing.mailer.sent] == ["new@example.com"] * 2
    pending = dash.svc.run(dash.svc.store.users.workspace_invitations, workspace)
    assert [i.email for i in pending] == ["new@example.com"]
