"""A local fake of each chat app's API, checking a request as the real one would.

One server on a free 127.0.0.1 port answers for all four apps, each at the path its real
API uses:

- Slack, `POST /services/T.../B.../secret` (an incoming webhook): Block Kit's schema and
  limits (50 blocks; header text 150, section text 3000, plain_text objects), `200 ok`,
  else `400 invalid_blocks`;
- Discord, `POST /api/webhooks/<id>/<token>`: the embed's schema and limits (10 embeds,
  title 256, description 4096, 25 fields, name 256, value 1024 and neither empty,
  footer 2048, 6000 characters in all), `204`, else `400` with code 50035;
- Microsoft Teams, `POST /webhookb2/...`: the message envelope with one Adaptive Card,
  at most 28 KB, `200 1`, else `400` (`413` when too large);
- Telegram, `POST /bot<token>/sendMessage`: a known token (else 401) and chat (else 400
  "chat not found"), HTML parse mode whose tags are Telegram's and balanced (else 400
  "can't parse entities"), 1 to 4096 characters once the entities are parsed.

`answers`: statuses to give before checking, one per request (`[429]` with
`retry_after` set: a rate limit, said as each real API says it: a Retry-After header,
or for Telegram `parameters.retry_after` in the JSON answer). Every
request is kept in `requests`, with its JSON and what the check found (`problem`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from html.parser import HTMLParser
from http.server import BaseHTTPRequestHandler
from typing import Any

from attrs import frozen

from tests.support.local_server import LocalHttpServer, QuietServer

TELEGRAM_TOKEN = "123456789:AAH-test-token_abcdefghijklmnopqrstu"
TELEGRAM_CHAT = "-1001234567890"
SLACK_PATH = "/services/T0000/B0000/slacksecret"
DISCORD_PATH = "/api/webhooks/1234567890/discordsecret"
TEAMS_PATH = "/webhookb2/teams-secret/IncomingWebhook/abc/def"
TELEGRAM_PATH = f"/bot{TELEGRAM_TOKEN}/sendMessage"
_TELEGRAM_TAGS = {"b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "a", "code", "pre"}


@frozen
class ChatRequest:
    app: str
    path: str
    headers: Mapping[str, str]
    payload: Any
    problem: str | None  # what the real API would refuse, None when it would take it


class ChatApps(LocalHttpServer):
    thread_name = "chat-apps"

    def __init__(self) -> None:
        super().__init__()
        self.retry_after = "7"
        self._answers: list[int] = []
        self._requests: list[ChatRequest] = []

    def url(self, app: str) -> str:
        path = {"slack": SLACK_PATH, "discord": DISCORD_PATH, "teams": TEAMS_PATH}[app]
        return self.base_url + path

    @property
    def answers(self) -> list[int]:
        with self._lock:
            return list(self._answers)

    @answers.setter
    def answers(self, codes: Iterable[int]) -> None:
        with self._lock:
            self._answers = list(codes)

    @property
    def requests(self) -> list[ChatRequest]:
        with self._lock:
            return list(self._requests)

    def _take(self, request: ChatRequest) -> int | None:
        with self._lock:
            self._requests.append(request)
            return self._answers.pop(0) if self._answers else None


def check_slack(payload: Any) -> str | None:
    blocks = payload.get("blocks") if isinstance(payload, dict) else None
    if not isinstance(blocks, list) or not blocks or len(blocks) > 50:
        return "invalid_blocks: 1 to 50 blocks"
    if not isinstance(payload.get("text"), str) or len(payload["text"]) > 40000:
        return "invalid text"
    limits = {"header": 150, "section": 3000}
    for block in blocks:
        kind = block.get("type")
        if kind in limits:
            problem = _slack_text(block.get("text"), limits[kind], plain_only=kind == "header")
        elif kind == "context":
            elements = block.get("elements")
            if not isinstance(elements, list) or not 1 <= len(elements) <= 10:
                return "invalid_blocks: context elements"
            problem = next((p for e in elements if (p := _slack_text(e, 3000))), None)
        elif kind == "actions":
            problem = _slack_actions(block.get("elements"))
        else:
            return f"invalid_blocks: unknown block type {kind!r}"
        if problem:
            return f"invalid_blocks: {problem}"
    return None


def _slack_text(value: Any, limit: int, *, plain_only: bool = False) -> str | None:
    if not isinstance(value, dict) or value.get("type") not in ("plain_text", "mrkdwn"):
        return "a text object is required"
    if plain_only and value["type"] != "plain_text":
        return "must be plain_text"
    text = value.get("text")
    if not isinstance(text, str) or not 1 <= len(text) <= limit:
        return f"text must be 1 to {limit} characters"
    return None


def _slack_actions(elements: Any) -> str | None:
    if not isinstance(elements, list) or not 1 <= len(elements) <= 25:
        return "actions elements"
    for button in elements:
        if button.get("type") != "button" or len(str(button.get("url", ""))) > 3000:
            return "button"
        if _slack_text(button.get("text"), 75, plain_only=True):
            return "button text"
    return None


def check_discord(payload: Any) -> str | None:
    if not isinstance(payload, dict) or payload.get("allowed_mentions") != {"parse": []}:
        return "allowed_mentions must parse nothing"
    embeds = payload.get("embeds")
    if not isinstance(embeds, list) or not 1 <= len(embeds) <= 10:
        return "embeds: 1 to 10"
    total = 0
    for embed in embeds:
        fields = embed.get("fields", [])
        if len(fields) > 25:
            return "embeds.fields: at most 25"
        parts = [
            (embed.get("title", ""), 256),
            (embed.get("description", ""), 4096),
            (embed.get("footer", {}).get("text", ""), 2048),
        ]
        for field in fields:
            for key, limit in (("name", 256), ("value", 1024)):
                text = field.get(key)
                if not isinstance(text, str) or not text.strip():
                    return f"embeds.fields.{key}: required"
                parts.append((text, limit))
        for text, limit in parts:
            if len(text) > limit:
                return f"a text over {limit} characters"
            total += len(text)
    return "embeds: over 6000 characters in all" if total > 6000 else None


def check_teams(payload: Any, size: int) -> str | None:
    if size > 28 * 1024:
        return "413: payload too large"
    if not isinstance(payload, dict) or payload.get("type") != "message":
        return "not a message"
    attachments = payload.get("attachments")
    if not isinstance(attachments, list) or len(attachments) != 1:
        return "one attachment"
    attachment = attachments[0]
    if attachment.get("contentType") != "application/vnd.microsoft.card.adaptive":
        return "not an Adaptive Card"
    card = attachment.get("content", {})
    if card.get("type") != "AdaptiveCard" or not re.fullmatch(r"1\.[0-5]", card.get("version", "")):
        return "card type or version"
    if not isinstance(card.get("body"), list) or not card["body"]:
        return "card body"
    for element in card["body"]:
        if element.get("type") not in ("TextBlock", "FactSet"):
            return f"unknown element {element.get('type')!r}"
    return None


class _TelegramText(HTMLParser):
    """Telegram's HTML: its tags only, balanced; the text as a user sees it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.open: list[str] = []
        self.problem: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in _TELEGRAM_TAGS:
            self.problem = f"Unsupported start tag {tag!r}"
        self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.open or self.open.pop() != tag:
            self.problem = f"unmatched end tag {tag!r}"

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def check_telegram(path: str, payload: Any) -> tuple[int, str | None]:
    if path != TELEGRAM_PATH:
        return 401, "Unauthorized"
    if not isinstance(payload, dict) or payload.get("chat_id") != TELEGRAM_CHAT:
        return 400, "Bad Request: chat not found"
    if payload.get("parse_mode") != "HTML":
        return 400, "Bad Request: parse_mode"
    text = payload.get("text")
    if not isinstance(text, str):
        return 400, "Bad Request: message text is empty"
    parsed = _TelegramText()
    parsed.feed(text)
    parsed.close()
    if parsed.problem or parsed.open or re.search(r"&(?!(amp|lt|gt|quot);)", text):
        return 400, f"Bad Request: can't parse entities: {parsed.problem or 'entity'}"
    shown = "".join(parsed.text)
    if not 1 <= len(shown) <= 4096:
        return 400, "Bad Request: message is too long"
    return 200, None


class _Server(QuietServer):
    owner: ChatApps


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    timeout = 5.0

    def do_POST(self) -> None:
        apps = self.server.owner
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = {name.lower(): value for name, value in self.headers.items()}
        app, status, problem, payload = self._check(body, headers)
        forced = apps._take(ChatRequest(app, self.path, headers, payload, problem))
        if forced is not None:
            status = forced
        self._answer(app, status, problem, apps.retry_after if status == 429 else None)

    def _check(self, body: bytes, headers: Mapping[str, str]) -> tuple[str, int, str | None, Any]:
        app = _app_of(self.path)
        try:
            payload = json.loads(body)
        except ValueError:
            return app, 400, "not JSON", None
        if headers.get("content-type") != "application/json":
            return app, 400, "not application/json", payload
        if app == "telegram":
            status, problem = check_telegram(self.path, payload)
            return app, status, problem, payload
        if app == "unknown":
            return app, 404, "no such webhook", payload
        checks = {"slack": check_slack, "discord": check_discord}
        if app == "teams":
            problem = check_teams(payload, len(body))
            status = 413 if problem and problem.startswith("413") else 400
        else:
            problem = checks[app](payload)
            status = 400
        ok = {"slack": 200, "discord": 204, "teams": 200}[app]
        return app, ok if problem is None else status, problem, payload

    def _answer(self, app: str, status: int, problem: str | None, retry_after: str | None) -> None:
        if app == "telegram":
            answer: dict[str, Any] = {"ok": status == 200}
            if status == 200:
                answer["result"] = {"message_id": 1}
            else:
                answer.update(error_code=status, description=problem or "Too Many Requests")
                if retry_after is not None:
                    answer["parameters"] = {"retry_after": int(retry_after)}
            raw = json.dumps(answer).encode()
        elif status == 204:
            raw = b""
        else:
            raw = (problem or ("ok" if app == "slack" else "1")).encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(raw)))
        self.send_header("Connection", "close")
        if retry_after is not None and app != "telegram":
            # Telegram says it in the JSON answer only (parameters.retry_after).
            self.send_header("Retry-After", retry_after)
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, format: str, *args: Any) -> None:
        return


def _app_of(path: str) -> str:
    if path.startswith("/services/"):
        return "slack"
    if path.startswith("/api/webhooks/"):
        return "discord"
    if path.startswith("/webhookb2/"):
        return "teams"
    if path.startswith("/bot") and path.endswith("/sendMessage"):
        return "telegram"
    return "unknown"


ChatApps.handler = _Handler
ChatApps.server_class = _Server
