"""The dashboard's members page and password change: owners invite, change roles and
remove, members cannot, no one reaches another workspace, and removal and a password change end
sessions; on every store."""

from __future__ import annotations

import re

import httpx2
import pytest

from intake.domain.users import Role
from intake.entrypoints.http.dashboard import members
from tests.http.conftest import ServiceFactory
from tests.http.dashboard_support import PASSWORD, Dashboard, isolated

MEMBERS = "/dashboard/settings/members"
LINK = re.compile(r"http://[^<\s]+/dashboard/sign-in/([0-9a-z]{39})")
EMAIL = re.compile(r"<td><bdi dir=\"auto\">([\w.]+@example\.com)</bdi></td>")


@pytest.fixture
def dash(make_service: ServiceFactory) -> Dashboard:
    return Dashboard(make_service())


def _invite(
    dash: Dashboard, email: str, role: str = "member", workspace: str | None = None
) -> httpx2.Response:
    posted = dash.client.post(
        MEMBERS + "/invite",
        data={
            "csrf": dash.csrf(MEMBERS),
            "workspace": workspace or dash.workspace.workspace_id,
            "email": email,
            "role": role,
        },
    )
    if posted.status_code != 303:
        return posted
    return dash.client.get(posted.headers["location"])  # as a browser follows it


def test_an_owner_invites_a_user_who_accepts_from_their_forms_page(dash: Dashboard) -> None:
    other = dash.svc.workspace(name="Elsewhere")
    dash.set_password(dash.link("owner@example.com"))
    member = dash.svc.run(
        dash.accounts.users.create, "member@example.com", other.workspace_id, Role.OWNER
    )
    assert member.link is not None
    member_link = "/" + member.link.split("/", 3)[3]

    refused = _invite(dash, "<b>m</b>@example.com")
    assert refused.status_code == 422  # not an address: refused, escaped
    assert "<b>m</b>" not in refused.text
    invited = _invite(dash, "Member@example.com")

    assert invited.status_code == 200
    assert LINK.search(invited.text) is None
    assert f"Invitation for {isolated('member@example.com')} saved" in invited.text
    assert "Pending invitations" in dash.client.get(MEMBERS).text
    roles = dash.svc.run(dash.svc.store.users.memberships, member.user.user_id)
    assert [m.workspace_id for m in roles] == [other.workspace_id]  # not a member yet
    dash.new_browser()
    dash.set_password(member_link)
    forms = dash.client.get("/dashboard")
    assert "Invitations" in forms.text
    assert dash.form.form_id not in forms.text
    invitation_id = re.search(r'name="invitation" value="([^"]+)"', forms.text)
    assert invitation_id is not None
    accepted = dash.post("/dashboard/invitations/accept", invitation=invitation_id.group(1))
    assert dash.said(accepted) == "Invitation accepted: the workspace&#39;s forms are below."
    assert dash.form.form_id in dash.client.get("/dashboard").text


def test_a_member_cannot_invite_or_remove(dash: Dashboard) -> None:
    dash.set_password(dash.link("owner@example.com"))
    owner = dash.svc.run(dash.svc.store.users.find_by_email, "owner@example.com")
    assert owner is not None
    dash.new_browser()
    dash.set_password(dash.link("member@example.com", Role.MEMBER))

    page = dash.client.get(MEMBERS)
    invite = _invite(dash, "third@example.com")
    remove = dash.client.post(
        MEMBERS + "/remove",
        data={
            "csrf": dash.csrf(MEMBERS),
            "workspace": dash.workspace.workspace_id,
            "user": owner.user_id,
        },
    )

    assert page.status_code == 200
    assert "Invite" not in page.text
    assert invite.status_code == remove.status_code == 403
    assert dash.svc.run(dash.svc.store.users.find_by_email, "third@example.com") is None


def test_another_workspace_is_not_found(dash: Dashboard) -> None:
    other = dash.svc.workspace(name="Other")
    dash.set_password(dash.link("owner@example.com"))

    answer = _invite(dash, "x@example.com", workspace=other.workspace_id)

    assert answer.status_code == 404
    assert "Other" not in dash.client.get(MEMBERS).text


def test_removing_a_member_ends_their_session(dash: Dashboard) -> None:
    dash.set_password(dash.link("member@example.com", Role.MEMBER))
    member_browser = dict(dash.client.cookies)
    member = dash.svc.run(dash.svc.store.users.find_by_email, "member@example.com")
    assert member is not None
    dash.new_browser()
    dash.set_password(dash.link("owner@example.com"))

    removed = dash.client.post(
        MEMBERS + "/remove",
        data={
            "csrf": dash.csrf(MEMBERS),
            "workspace": dash.workspace.workspace_id,
            "user": member.user_id,
        },
    )

    assert dash.said(removed) == "Member removed: they are signed out."
    assert "member@example.com" not in dash.client.get(MEMBERS).text
    dash.new_browser()
    dash.client.cookies.update(member_browser)
    assert dash.client.get("/dashboard").status_code == 303


def test_changing_the_password_ends_the_other_sessions(dash: Dashboard) -> None:
    dash.set_password(dash.link())
    other_browser = dict(dash.client.cookies)
    dash.new_browser()
    dash.sign_in("ada@example.com", PASSWORD)

    wrong = dash.client.post(
        "/dashboard/password",
        data={
            "csrf": dash.csrf("/dashboard/password"),
            "current_password": "not it",
            "new_password": "a brand new password",
            "confirm": "a brand new password",
        },
    )
    changed = dash.client.post(
        "/dashboard/password",
        data={
            "csrf": dash.csrf("/dashboard/password"),
            "current_password": PASSWORD,
            "new_password": "a brand new password",
            "confirm": "a brand new password",
        },
    )

    assert wrong.status_code == 422
    # This browser goes on, and is told.
    assert dash.said(changed) == "Password changed: every other session of yours has ended."
    dash.new_browser()
    dash.client.cookies.update(other_browser)
    assert dash.client.get("/dashboard").status_code == 303
    dash.new_browser()
    assert dash.sign_in("ada@example.com", "a brand new password").status_code == 303


def _change_role(dash: Dashboard, user_id: str, role: str) -> httpx2.Response:
    return dash.client.post(
        MEMBERS + "/role",
        data={
            "csrf": dash.csrf(MEMBERS),
            "workspace": dash.workspace.workspace_id,
            "user": user_id,
            "role": role,
        },
    )


def test_an_owner_changes_roles_and_keeps_the_last_owner(dash: Dashboard) -> None:
    dash.set_password(dash.link("member@example.com", Role.MEMBER))
    member_browser = dict(dash.client.cookies)
    member = dash.svc.run(dash.svc.store.users.find_by_email, "member@example.com")
    dash.new_browser()
    dash.set_password(dash.link("owner@example.com"))
    owner = dash.svc.run(dash.svc.store.users.find_by_email, "owner@example.com")
    assert member is not None
    assert owner is not None

    last = _change_role(dash, owner.user_id, "member")
    unknown = _change_role(dash, member.user_id, "admin")
    promoted = _change_role(dash, member.user_id, "owner")
    assert dash.said(promoted) == "Role changed: now owner."
    demoted = _change_role(dash, owner.user_id, "member")

    assert last.status_code == unknown.status_code == 422
    assert "at least one owner" in last.text
    assert dash.said(demoted) == "Role changed: now member."
    assert "Invite" not in dash.client.get(MEMBERS).text  # a member now
    assert _change_role(dash, member.user_id, "member").status_code == 403
    dash.new_browser()
    dash.client.cookies.update(member_browser)  # the promoted member's session went on
    assert "Invite" in dash.client.get(MEMBERS).text


def test_a_role_change_needs_the_csrf_token_and_a_member_of_this_workspace(
    dash: Dashboard,
) -> None:
    other = dash.svc.workspace(name="Other")
    stranger = dash.svc.run(
        dash.accounts.users.create, "s@example.com", other.workspace_id, Role.MEMBER
    )
    dash.set_password(dash.link("owner@example.com"))
    owner = dash.svc.run(dash.svc.store.users.find_by_email, "owner@example.com")
    assert owner is not None

    forged = dash.client.post(
        MEMBERS + "/role",
        data={"workspace": dash.workspace.workspace_id, "user": owner.user_id, "role": "member"},
    )
    outsider = _change_role(dash, stranger.user.user_id, "owner")

    assert forged.status_code == 403
    assert outsider.status_code == 404
    roles = dash.svc.run(dash.svc.store.users.memberships, stranger.user.user_id)
    assert [m.role for m in roles] == [Role.MEMBER]


def test_the_members_page_pages_through_a_workspaces_members(
    dash: Dashboard, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(members, "MEMBERS_PER_PAGE", 2)
    dash.set_password(dash.link("owner@example.com"))
    for n in range(2):
        dash.svc.run(
            dash.accounts.users.create,
            f"m{n}@example.com",
            dash.workspace.workspace_id,
            Role.MEMBER,
        )

    first = dash.client.get(MEMBERS)
    more = re.findall(r'href="(/dashboard/settings/members\?[^"]+)">More members', first.text)
    assert len(more) == 1
    second = dash.client.get(more[0].replace("&amp;", "&"))
    shown = [set(EMAIL.findall(page.text)) for page in (first, second)]

    assert second.status_code == 200
    assert shown[0].isdisjoint(shown[1])
    assert shown[0] | shown[1] == {"owner@example.com", "m0@example.com", "m1@example.com"}
    assert "More members" not in second.text
    assert dash.client.get(MEMBERS + "?workspace=ws_unknown").status_code == 404
    workspace = dash.workspace.workspace_id
    refused = dash.client.get(f"{MEMBERS}?workspace={workspace}&cursor=nonsense")
    assert refused.status_code == 422
    assert set(EMAIL.findall(refused.text)) == shown[0]
