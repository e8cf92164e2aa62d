"""The floor of the chat turn: the least a server can do for it, to measure the product against.

A Starlette application over the product's own tables (migrated and seeded by bench/load.py),
a psycopg connection pool (autocommit: each statement is one round trip) and the model's stream
passed through. A turn is three statements:

1. the token's user (`authtoken_token`);
2. the claim, one statement: the conversation's lease taken (if free, and the conversation is
   the user's and not ended), its counters moved and the student's message inserted;
3. the finish, one statement: the reply inserted, the counters moved and the lease released;

and between 2 and 3 the model's SSE stream (httpx), each chunk's text sent on as a `delta`
event, then a `done` event with the reply's id. No history, memories, learning record, tools,
metering, throttles, retries or drain: what is left is the turn's irreducible cost (HTTP in and
out, three round trips to PostgreSQL, the model's stream). bench/load.py serves it with uvicorn
(`--phases floor,...`) beside the product, in the same run. It also answers what load.py needs
around the turns: `GET /api/v1/me/`, `POST /api/v1/conversations/` and `.../end/`.

    DATABASE_URL=postgres://... LLM_BASE_URL=http://.../v1 LLM_MODEL=... \\
        .venv/bin/python -m uvicorn bench.floor:app --port 8001
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
from psycopg_pool import AsyncConnectionPool
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

POOL_SIZE = int(os.environ.get("DB_POOL_MAX_SIZE", "6"))
LEASE_SECONDS = 30

USER_SQL = "SELECT user_id FROM authtoken_token WHERE key = %s"

CLAIM_SQL = """
WITH claimed AS (
    UPDATE conversations_conversation
    SET message_count = message_count + 1, last_activity_at = now(), turn_token = %(token)s,
        turn_expires_at = now() + make_interval(secs => %(lease)s),
        turn_message_id = nextval(pg_get_serial_sequence('conversations_message', 'id'))
    WHERE id = %(conversation)s AND student_id = %(user)s AND status = 'active'
      AND (turn_token = '' OR turn_expires_at IS NULL OR turn_expires_at < now())
    RETURNING id, message_count, turn_message_id
)
INSERT INTO conversations_message
    (id, conversation_id, seq, role, content, client_message_id, token_count, prompt_tokens,
     completion_tokens, model, tool_events, created_at)
SELECT turn_message_id, id, message_count, 'student', %(content)s, %(client_message_id)s, 0, 0, 0, '',
       '[]'::jsonb, now()
FROM claimed
RETURNING id
"""

FINISH_SQL = """
WITH released AS (
    UPDATE conversations_conversation
    SET message_count = message_count + 1, last_activity_at = now(), turn_token = '',
        turn_expires_at = NULL, turn_message_id = NULL
    WHERE id = %(conversation)s AND turn_token = %(token)s
    RETURNING id, message_count
)
INSERT INTO conversations_message
    (conversation_id, seq, role, content, reply_to_id, token_count, prompt_tokens, completion_tokens,
     model, tool_events, created_at)
SELECT id, message_count, 'tutor', %(content)s, %(reply_to)s, 0, 0, 0, %(model)s, '[]'::jsonb, now()
FROM released
RETURNING id
"""


def _dsn() -> str:
    return os.environ["DATABASE_URL"].replace("postgres://", "postgresql://", 1)


@asynccontextmanager
async def lifespan(app: Starlette) -> AsyncIterator[None]:
    app.state.pool = AsyncConnectionPool(
        _dsn(), min_size=POOL_SIZE, max_size=POOL_SIZE, kwargs={"autocommit": True}, open=False
    )
    await app.state.pool.open()
    app.state.http = httpx2.AsyncClient(
        base_url=os.environ["LLM_BASE_URL"].rstrip("/"),
        headers={"Authorization": f"Bearer {os.environ.get('LLM_API_KEY', 'floor')}"},
        timeout=httpx2.Timeout(120.0, connect=30.0),
        limits=httpx2.Limits(max_connections=1000, max_keepalive_connections=1000),
    )
    try:
        yield
    finally:
        await app.state.http.aclose()
        await app.state.pool.close()


async def _user(request: Request) -> int | None:
    header = request.headers.get("authorization", "")
    if not header.startswith("Token "):
        return None
    async with request.app.state.pool.connection() as conn:
        row = await (await conn.execute(USER_SQL, (header[6:],))).fetchone()
    return int(row[0]) if row else None


def _error(status: int, code: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": code, "details": {}, "retry_safe": False}}, status)


async def me(request: Request) -> Response:
    user = await _user(request)
    return _error(401, "not_authenticated") if user is None else JSONResponse({"id": user})


async def conversation_create(request: Request) -> Response:
    user = await _user(request)
    if user is None:
        return _error(401, "not_authenticated")
    body = await request.json()
    async with request.app.state.pool.connection() as conn:
        row = await (
            await conn.execute(
                "INSERT INTO conversations_conversation (student_id, subject, status, created_at, last_activity_at, "
                "message_count, history_tokens, summary_status, summary_attempts, summary_error, summary_owner, "
                "turn_token) VALUES (%s, %s, 'active', now(), now(), 0, 0, 'not_requested', 0, '', '', '') "
                "RETURNING id",
                (user, str(body.get("subject", ""))[:200]),
            )
        ).fetchone()
    return JSONResponse({"id": row[0]}, 201)


async def conversation_end(request: Request) -> Response:
    user = await _user(request)
    if user is None:
        return _error(401, "not_authenticated")
    async with request.app.state.pool.connection() as conn:
        await conn.execute(
            "UPDATE conversations_conversation SET status = 'ended', ended_at = now() "
            "WHERE id = %s AND student_id = %s",
            (int(request.path_params["pk"]), user),
        )
    return JSONResponse({}, 202)


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


async def message_send(request: Request) -> Response:
    user = await _user(request)
    if user is None:
        return _error(401, "not_authenticated")
    body = await request.json()
    conversation, content = int(request.path_params["pk"]), str(body["content"])
    token = secrets.token_hex(16)
    async with request.app.state.pool.connection() as conn:
        row = await (
            await conn.execute(
                CLAIM_SQL,
                {
                    "token": token,
                    "lease": LEASE_SECONDS,
                    "conversation": conversation,
                    "user": user,
                    "content": content,
                    "client_message_id": str(body["client_message_id"]),
                },
            )
        ).fetchone()
    if row is None:
        return _error(409, "conversation_busy")
    student_message = int(row[0])
    app = request.app

    async def events() -> AsyncIterator[bytes]:
        yield _sse("message", {"id": student_message})
        model = os.environ.get("LLM_MODEL", "")
        parts: list[str] = []
        request_body = {"model": model, "stream": True, "messages": [{"role": "user", "content": content}]}
        async with app.state.http.stream("POST", "/chat/completions", json=request_body) as response:
            async for line in response.aiter_lines():
                if not line.startswith("data:") or line.endswith("[DONE]"):
                    continue
                chunk = json.loads(line[5:])
                choices = chunk.get("choices") or [{}]
                text = (choices[0].get("delta") or {}).get("content")
                if text:
                    parts.append(text)
                    yield _sse("delta", {"content": text})
        reply = "".join(parts)
        async with app.state.pool.connection() as conn:
            done = await (
                await conn.execute(
                    FINISH_SQL,
                    {
                        "conversation": conversation,
                        "token": token,
                        "content": reply,
                        "reply_to": student_message,
                        "model": model,
                    },
                )
            ).fetchone()
        yield _sse("done", {"id": done[0] if done else None, "content": reply, "replayed": False})

    return StreamingResponse(events(), media_type="text/event-stream")


app = Starlette(
    routes=[
        Route("/api/v1/me/", me),
        Route("/api/v1/conversations/", conversation_create, methods=["POST"]),
        Route("/api/v1/conversations/{pk:int}/messages/", message_send, methods=["POST"]),
        Route("/api/v1/conversations/{pk:int}/end/", conversation_end, methods=["POST"]),
    ],
    lifespan=lifespan,
)
