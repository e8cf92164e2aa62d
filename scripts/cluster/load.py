"""Students streaming turns through the load balancer and ending conversations, retrying the way
docs/api.md says: a cut connection, or an error whose envelope says `retry_safe`, is sent again
with the same `client_message_id` (after `Retry-After` when given); any other error is final.
Everything a client saw is recorded with its time, for faults.py to judge.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import httpx2

from bench.sse import sse_events

TURNS_PER_CONVERSATION = 3
BETWEEN_CONVERSATIONS = (20.0, 40.0)  # seconds a student is away before the next conversation
GIVE_UP_SECONDS = 240.0


@dataclass
class ClientError:
    at: float
    where: str  # "send", "stream", "end", "create"
    status: int  # 0: the connection failed or was cut
    code: str
    json: bool  # the body was the API's error envelope
    retry_safe: bool | None


@dataclass
class Record:
    acked: dict[str, int] = field(default_factory=dict)  # client_message_id -> reply id
    sent: set[str] = field(default_factory=set)
    gave_up: set[str] = field(default_factory=set)
    errors: list[ClientError] = field(default_factory=list)
    ended: dict[int, float] = field(default_factory=dict)  # conversation -> when the 202 came
    turn_seconds: list[tuple[float, float]] = field(default_factory=list)  # (finished at, seconds)
    retries: Counter[str] = field(default_factory=Counter)


def _error(where: str, status: int, body: bytes | str) -> ClientError:
    try:
        envelope = json.loads(body)["error"]
        return ClientError(time.monotonic(), where, status, str(envelope["code"]), True, envelope.get("retry_safe"))
    except (ValueError, KeyError, TypeError):
        text = body.decode(errors="replace") if isinstance(body, bytes) else body
        return ClientError(time.monotonic(), where, status, text[:40], False, None)


async def _send(client: httpx2.AsyncClient, url: str, payload: dict[str, Any], key: str) -> int | ClientError:
    """One streamed send: the reply's id, or what went wrong."""
    headers = {"Authorization": f"Token {key}", "Accept": "text/event-stream"}
    try:
        async with client.stream("POST", url, json=payload, headers=headers) as response:
            if response.status_code != 200:
                return _error("send", response.status_code, await response.aread())
            async for event, data in sse_events(response):
                if event == "done":
                    return int(json.loads(data)["id"])
                if event == "error":
                    return _error("stream", 200, data)
            return ClientError(time.monotonic(), "stream", 0, "stream cut", False, None)
    except httpx2.HTTPError as exc:
        return ClientError(time.monotonic(), "send", 0, type(exc).__name__, False, None)


def _retry_after(error: ClientError) -> float | None:
    """Seconds before the next try, or None when the error is final."""
    if error.status == 0 or error.retry_safe:
        return 1.0 + random.random()
    return None


async def turn(client: httpx2.AsyncClient, base: str, key: str, conversation: int, record: Record) -> bool:
    cmid = uuid.uuid4().hex
    record.sent.add(cmid)
    payload = {"content": f"How do I add 2/3 and 3/4? ({cmid[:8]})", "client_message_id": cmid}
    url = f"{base}/api/v1/conversations/{conversation}/messages/"
    started = time.monotonic()
    while time.monotonic() - started < GIVE_UP_SECONDS:
        outcome = await _send(client, url, payload, key)
        if isinstance(outcome, int):
            record.acked[cmid] = outcome
            record.turn_seconds.append((time.monotonic(), time.monotonic() - started))
            return True
        record.errors.append(outcome)
        wait = _retry_after(outcome)
        if wait is None:
            break
        record.retries[outcome.code] += 1
        await asyncio.sleep(wait)
    record.gave_up.add(cmid)
    return False


async def _post(
    client: httpx2.AsyncClient, url: str, key: str, where: str, ok: int, record: Record, body: Any = None
) -> Any:
    """POST with retries; the JSON answer on `ok`, None when it failed for good."""
    started = time.monotonic()
    while time.monotonic() - started < GIVE_UP_SECONDS:
        try:
            response = await client.post(url, json=body, headers={"Authorization": f"Token {key}"})
            if response.status_code == ok:
                return response.json() if response.content else {}
            if where == "end" and response.status_code == 409:
                return {}  # ended by an earlier try whose answer was lost
            error = _error(where, response.status_code, response.content)
        except httpx2.HTTPError as exc:
            error = ClientError(time.monotonic(), where, 0, type(exc).__name__, False, None)
        record.errors.append(error)
        wait = _retry_after(error)
        if wait is None:
            return None
        await asyncio.sleep(wait)
    return None


async def student(client: httpx2.AsyncClient, base: str, key: str, stop: asyncio.Event, record: Record) -> None:
    await asyncio.sleep(random.uniform(0, 10))  # arrive over 10 s
    while not stop.is_set():
        created = await _post(client, f"{base}/api/v1/conversations/", key, "create", 201, record, {"subject": "Maths"})
        if not created:
            await asyncio.sleep(2)
            continue
        conversation = int(created["id"])
        for _ in range(TURNS_PER_CONVERSATION):
            if not await turn(client, base, key, conversation, record) or stop.is_set():
                break
            await asyncio.sleep(random.uniform(0.5, 2.0))  # the student reads and types
        if await _post(client, f"{base}/api/v1/conversations/{conversation}/end/", key, "end", 202, record) is not None:
            record.ended[conversation] = time.monotonic()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), random.uniform(*BETWEEN_CONVERSATIONS))


def make_client(students: int) -> httpx2.AsyncClient:
    limits = httpx2.Limits(max_connections=students + 10, max_keepalive_connections=students, keepalive_expiry=4.0)
    return httpx2.AsyncClient(limits=limits, timeout=httpx2.Timeout(120.0, connect=10.0))
