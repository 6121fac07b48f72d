"""The framework ceiling: the least a Starlette app under uvicorn can do for a submission
(read the body, parse it, answer 201 with JSON), served with the settings of `intake
serve`, so that the difference is intake's own work. The bench runs it twice: on the
event loop and HTTP parser `intake serve` runs on (uvicorn's own protocol for that
parser, without intake's deadlines), and on the fastest uvicorn has (uvloop and
httptools).

Run as `python -m bench.ceiling_app --port P [--loop uvloop] [--http httptools]`.
"""

from __future__ import annotations

import argparse
import json
import logging
import secrets
from urllib.parse import parse_qsl

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from intake.logs import logging_config

CONFIRMATION = "Thank you. Your submission has been received."


async def submit(request: Request) -> Response:
    body = await request.body()
    fields = parse_qsl(body.decode("utf-8"), keep_blank_values=True)
    payload = {
        "ok": True,
        "submission_id": "sub_" + secrets.token_hex(15),
        "message": CONFIRMATION if fields else "",
    }
    return Response(
        json.dumps(payload, separators=(",", ":")).encode("utf-8"),
        status_code=201,
        media_type="application/json",
    )


async def ready(request: Request) -> Response:
    return Response(b'{"ok":true}', media_type="application/json")


def create_app() -> Starlette:
    return Starlette(
        routes=[
            Route("/f/{public_form_key}", submit, methods=["POST"]),
            Route("/readyz", ready, methods=["GET"]),
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.ceiling_app")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--log-level", default="info")
    # Any of uvicorn's names (uvicorn refuses others): the bench passes what it found.
    parser.add_argument("--loop", default="asyncio")
    parser.add_argument("--http", default="h11")
    args = parser.parse_args()
    level = logging.getLevelNamesMapping()[args.log_level.upper()]
    # The settings of `intake serve` (intake.entrypoints.cli.serve), one worker, on the
    # stack asked for.
    uvicorn.run(
        "bench.ceiling_app:create_app",
        factory=True,
        loop=args.loop,
        http=args.http,
        ws="none",
        host=args.host,
        port=args.port,
        workers=1,
        log_level=level,
        log_config=logging_config(level),
        access_log=False,
        server_header=False,
        proxy_headers=False,
        forwarded_allow_ips=[],
    )


if __name__ == "__main__":
    main()
