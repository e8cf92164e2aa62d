"""The memory's MCP server (memory.mcp) through the SDK's own client, over both transports:
stdio (`manage.py mcp_server` in a subprocess) and streamable HTTP under /mcp/ (the production
server, `scripts/serve.sh`, two worker processes), against the test database."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from mcp import Client, ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from rest_framework.authtoken.models import Token

from memory.models import AIMemory
from memory.services.notes import memory_agent_write
from memory.validation import CONTENT_MAX_CHARS, REASON_MAX_CHARS, TITLE_MAX_CHARS
from tests.conftest import ROOT, headers

TITLE = "Alice adds fractions with common denominators"
CONTENT = "She finds the least common denominator first, then adds the numerators."

Call = tuple[str, dict[str, Any]]


async def _run(open_transport: Any, calls: list[Call]) -> list[CallToolResult]:
    async with open_transport as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        results = []
        for name, arguments in calls:
            result = await session.call_tool(name, arguments)
            assert isinstance(result, CallToolResult)
            results.append(result)
        return results


def over_http(base: str, auth: dict[str, str], *calls: Call) -> list[CallToolResult]:
    """One MCP session over streamable HTTP, making `calls` in order; their results."""

    async def go() -> list[CallToolResult]:
        async with httpx2.AsyncClient(headers=auth, timeout=30) as client:
            return await _run(streamable_http_client(f"{base}/mcp/", http_client=client), list(calls))

    return anyio.run(go)


def tool_names_over_http(base: str, auth: dict[str, str]) -> list[str]:
    async def go() -> list[str]:
        async with (
            httpx2.AsyncClient(headers=auth, timeout=30) as client,
            streamable_http_client(f"{base}/mcp/", http_client=client) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return sorted(tool.name for tool in (await session.list_tools()).tools)

    return anyio.run(go)


def data(result: CallToolResult) -> Any:
    assert not result.is_error, result.content
    structured = result.structured_content
    assert structured is not None
    return structured.get("result", structured)  # a list comes wrapped as {"result": [...]}


def error(result: CallToolResult) -> str:
    assert result.is_error
    text = getattr(result.content[0], "text", "")
    assert isinstance(text, str)
    return text


def test_http_lists_writes_recalls_and_forgets(server, school):
    """Over HTTP as a student: the three tools are listed; `write` stores a note (kind note,
    source mcp_tool) that `recall` then finds; `forget` archives it (the row stays, with its
    reason) and recall no longer returns it; forgetting it again changes nothing."""
    alice = school["alice"]
    auth = headers(alice)
    assert tool_names_over_http(server, auth) == ["forget", "recall", "write"]

    written, found = over_http(
        server,
        auth,
        ("write", {"title": TITLE, "content": CONTENT}),
        ("recall", {"query": "common denominator", "k": 3}),
    )
    memory = AIMemory.objects.get(student=alice, title=TITLE)
    assert (memory.kind, memory.source, memory.status, memory.author_id) == ("note", "mcp_tool", "active", None)
    assert data(written)["id"] == memory.pk and data(written)["content"] == memory.content
    assert [m["id"] for m in data(found)] == [memory.pk]
    assert set(data(found)[0]) == {"id", "title", "content", "kind", "created_at"}

    forgotten, again, after = over_http(
        server,
        auth,
        ("forget", {"memory_id": memory.pk, "reason": "No longer true."}),
        ("forget", {"memory_id": memory.pk, "reason": "A second reason."}),
        ("recall", {"query": "common denominator"}),
    )
    memory.refresh_from_db()
    assert (memory.status, memory.archived_reason) == ("archived", "No longer true.")
    assert data(forgotten) == {"id": memory.pk, "status": "archived", "archived_reason": "No longer true."}
    assert data(again) == data(forgotten)
    assert data(after) == []


def test_http_bounds_and_validation_are_tool_errors(server, school):
    """Invalid arguments are tool errors (isError) with the reason, and store nothing: a title
    too short, a reason left empty, k outside 1..20. `k` caps the number of memories recalled."""
    alice = school["alice"]
    for n in range(3):
        memory_agent_write(
            user=alice, student_id=None, title=f"Fractions note number {n}", content="Common denominators."
        )
    short_title, empty_reason, k_zero, k_two = over_http(
        server,
        headers(alice),
        ("write", {"title": "Too short", "content": CONTENT}),
        ("forget", {"memory_id": AIMemory.objects.filter(student=alice).first().pk, "reason": "  "}),
        ("recall", {"query": "common denominators", "k": 0}),
        ("recall", {"query": "common denominators", "k": 2}),
    )
    assert "title" in error(short_title) and "4 to 10 words" in error(short_title)
    assert "reason" in error(empty_reason)
    assert error(k_zero)
    assert len(data(k_two)) == 2
    assert AIMemory.objects.filter(student=alice).count() == 3
    assert not AIMemory.objects.filter(status="archived").exists()


def test_http_write_refuses_a_nul_and_texts_over_the_limits(server, school):
    """`write` with a NUL byte in the title or the content (PostgreSQL cannot store it: the API
    answers 400), content past CONTENT_MAX_CHARS (one 2.4 MB word included) or a title past
    TITLE_MAX_CHARS, and `forget` with a reason past REASON_MAX_CHARS: each is a tool error
    naming the problem; nothing is stored and nothing archived. The tools' input schema gives
    the limits (maxLength), as the API's schema does."""
    alice = school["alice"]
    kept = memory_agent_write(user=alice, student_id=None, title=TITLE, content=CONTENT)
    nul_title, nul_content, over, huge, long_title, long_reason = over_http(
        server,
        headers(alice),
        ("write", {"title": "Alice adds \x00 fractions with ease", "content": CONTENT}),
        ("write", {"title": "Alice adds fractions with ease", "content": "Common \x00 denominators."}),
        ("write", {"title": "Alice adds fractions with ease", "content": "w" * (CONTENT_MAX_CHARS + 1)}),
        ("write", {"title": "Alice adds fractions with ease", "content": "x" * 2_400_000}),
        ("write", {"title": "Alice adds fractions " + "t" * TITLE_MAX_CHARS, "content": CONTENT}),
        ("forget", {"memory_id": kept.pk, "reason": "r" * (REASON_MAX_CHARS + 1)}),
    )
    assert "null" in error(nul_title).lower() and "null" in error(nul_content).lower()
    for result, limit in ((over, CONTENT_MAX_CHARS), (huge, CONTENT_MAX_CHARS), (long_title, TITLE_MAX_CHARS)):
        assert str(limit) in error(result), error(result)
    assert str(REASON_MAX_CHARS) in error(long_reason), error(long_reason)
    assert list(AIMemory.objects.values_list("pk", "status")) == [(kept.pk, "active")]

    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    accept = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}
    tools = httpx2.post(f"{server}/mcp/", json=body, headers={**accept, **headers(alice)}).json()["result"]["tools"]
    schemas = {tool["name"]: tool["inputSchema"]["properties"] for tool in tools}
    assert schemas["write"]["title"]["maxLength"] == TITLE_MAX_CHARS
    assert schemas["write"]["content"]["maxLength"] == CONTENT_MAX_CHARS
    assert schemas["forget"]["reason"]["maxLength"] == REASON_MAX_CHARS


@pytest.fixture
def memory_write_rate(worker_env):
    """The server started after this fixture counts 3 memory writes per user and minute."""
    worker_env["THROTTLE_MEMORY_WRITE_RATE"] = "3/minute"


def test_http_writes_share_the_apis_memory_write_rate(memory_write_rate, server, school):
    """MCP `write` and `forget` count against THROTTLE_MEMORY_WRITE_RATE with the API's memory
    writes, per user: past it, the tool call is an error saying when to retry and stores
    nothing, and the API's next memory write is a 429 with Retry-After. Reads are not counted,
    and another user still writes."""
    alice, teacher = school["alice"], school["teacher_a"]
    note = {"student": alice.pk, "title": "Prefers drawings before symbols in fractions", "content": "Bars first."}
    first = httpx2.post(f"{server}/api/v1/memories/", json=note, headers=headers(teacher))
    assert first.status_code == 201, first.text
    recalled, wrote, forgot, refused = over_http(
        server,
        headers(teacher),
        ("recall", {"query": "fractions", "student_id": alice.pk}),
        ("write", {"title": "Alice should review equivalent fractions", "content": "Soon.", "student_id": alice.pk}),
        ("forget", {"memory_id": first.json()["id"], "reason": "Done."}),
        ("write", {"title": "One note too many for this minute", "content": "Refused.", "student_id": alice.pk}),
    )
    assert data(recalled) and data(wrote)["id"] and data(forgot)["status"] == "archived"
    assert "too many memory writes" in error(refused).lower()
    assert not AIMemory.objects.filter(title="One note too many for this minute").exists()

    again = httpx2.post(f"{server}/api/v1/memories/", json=note, headers=headers(teacher))
    assert again.status_code == 429 and again.json()["error"]["code"] == "throttled", again.text
    assert int(again.headers["Retry-After"]) > 0
    assert httpx2.get(f"{server}/api/v1/memories/?student={alice.pk}", headers=headers(teacher)).status_code == 200
    (own,) = over_http(server, headers(alice), ("write", {"title": TITLE, "content": CONTENT}))
    assert data(own)["id"]


# Who must not reach alice's memories: a student of her class, a teacher of another class of her
# school, the other school's administrator, teacher and student (the `schools` fixture).
MCP_OUTSIDERS = ("bob", "teacher_b", "admin_b", "teacher_c", "dave")


def test_http_tenancy(server, schools):
    """Another student, a teacher of another class, and the other school's administrator,
    teacher and student get the same "not found" for the student's memory as for a missing id,
    and for recalling that student; the memory is untouched. The administrator of her school
    recalls it. The student's own teacher (with `Bearer <key>`) recalls, writes for the student
    (a note without author) and forgets it; a teacher who names no student is told to."""
    school = schools
    alice = school["alice"]
    (written,) = over_http(server, headers(alice), ("write", {"title": TITLE, "content": CONTENT}))
    memory_id = data(written)["id"]
    (recalled,) = over_http(
        server, headers(school["admin_a"]), ("recall", {"query": "common denominator", "student_id": alice.pk})
    )
    assert [m["id"] for m in data(recalled)] == [memory_id]

    for outsider in MCP_OUTSIDERS:
        forget, missing, recall = over_http(
            server,
            headers(school[outsider]),
            ("forget", {"memory_id": memory_id, "reason": "Not mine."}),
            ("forget", {"memory_id": 10**9, "reason": "Not mine."}),
            ("recall", {"query": "common denominator", "student_id": alice.pk}),
        )
        assert "not found" in error(forget).lower()
        assert error(forget) == error(missing)
        assert "not found" in error(recall).lower()
    assert AIMemory.objects.get(pk=memory_id).status == "active"

    token, _ = Token.objects.get_or_create(user=school["teacher_a"])
    found, wrote, no_student, forgot = over_http(
        server,
        {"Authorization": f"Bearer {token.key}"},
        ("recall", {"query": "common denominator", "student_id": alice.pk}),
        ("write", {"title": "Alice should review equivalent fractions", "content": "Teacher.", "student_id": alice.pk}),
        ("write", {"title": "A note for nobody in particular", "content": "Nobody."}),
        ("forget", {"memory_id": memory_id, "reason": "Corrected by her teacher."}),
    )
    assert [m["id"] for m in data(found)] == [memory_id]
    note = AIMemory.objects.get(pk=data(wrote)["id"])
    assert (note.student_id, note.kind, note.source, note.author_id) == (alice.pk, "note", "mcp_tool", None)
    assert "student" in error(no_student)
    assert not AIMemory.objects.filter(title="A note for nobody in particular").exists()
    assert data(forgot)["status"] == "archived"
    assert AIMemory.objects.get(pk=memory_id).archived_reason == "Corrected by her teacher."


def test_http_needs_a_valid_token(server, school):
    """/mcp/ without a token, or with an unknown one, is a 401 in the API's error envelope,
    before any MCP handling; with a valid token the same request is answered."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    accept = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}
    missing = httpx2.post(f"{server}/mcp/", json=body, headers=accept)
    wrong = httpx2.post(f"{server}/mcp/", json=body, headers={**accept, "Authorization": "Token not-a-key"})
    wrong_bearer = httpx2.post(f"{server}/mcp", json=body, headers={**accept, "Authorization": "Bearer nope"})
    assert (missing.status_code, missing.json()["error"]["code"]) == (401, "not_authenticated")
    assert (wrong.status_code, wrong.json()["error"]["code"]) == (401, "authentication_failed")
    assert wrong_bearer.status_code == 401
    ok = httpx2.post(f"{server}/mcp/", json=body, headers={**accept, **headers(school["alice"])})
    assert ok.status_code == 200, ok.text
    assert sorted(t["name"] for t in ok.json()["result"]["tools"]) == ["forget", "recall", "write"]


def test_stdio_acts_as_the_student(worker_env, school, tmp_path: Path):
    """`manage.py mcp_server --student ID` serves the tools on stdio as that student: a write
    is stored for them, recalled, forgotten (archived, not deleted); another student's memory
    is "not found"."""
    alice, bob = school["alice"], school["bob"]
    bobs = memory_agent_write(user=bob, student_id=None, title="Bob likes geometry puzzles a lot", content="Triangles.")
    params = StdioServerParameters(
        command=sys.executable,
        args=[str(ROOT / "manage.py"), "mcp_server", "--student", str(alice.pk)],
        env=worker_env,
        cwd=ROOT,
    )
    log = tmp_path / "stdio.log"

    async def go() -> list[CallToolResult]:
        with log.open("w") as errlog:
            written, found = await _run(
                stdio_client(params, errlog=errlog),
                [("write", {"title": TITLE, "content": CONTENT}), ("recall", {"query": "common denominator"})],
            )
            memory_id = data(written)["id"]
            return [
                written,
                found,
                *await _run(
                    stdio_client(params, errlog=errlog),
                    [
                        ("forget", {"memory_id": memory_id, "reason": "Asked to forget."}),
                        ("recall", {"query": "common denominator"}),
                        ("forget", {"memory_id": bobs.pk, "reason": "Not mine."}),
                    ],
                ),
            ]

    written, found, forgot, after, other = anyio.run(go)
    memory = AIMemory.objects.get(pk=data(written)["id"])
    assert (memory.student_id, memory.source, memory.status) == (alice.pk, "mcp_tool", "archived")
    assert memory.archived_reason == "Asked to forget."
    assert [m["id"] for m in data(found)] == [memory.pk]
    assert data(forgot)["status"] == "archived" and data(after) == []
    assert "not found" in error(other).lower()
    assert AIMemory.objects.get(pk=bobs.pk).status == "active"
    assert "Traceback" not in log.read_text()


def test_stdio_command_refuses_anyone_but_a_student(school):
    """The stdio command acts only as an active student: a teacher's id or an unknown id is
    refused before anything is served."""
    for pk in (school["teacher_a"].pk, 10**9):
        with pytest.raises(CommandError, match="No active student"):
            call_command("mcp_server", "--student", str(pk))


def test_http_modern_client_negotiates_and_acts_as_the_token_user(server, school):
    """The SDK's `Client` (mode auto: `server/discover`, then the single-exchange protocol when
    the server offers it) gets the same tools as the same user: its write is the student's."""
    alice = school["alice"]
    auth = headers(alice)

    async def go() -> tuple[str | None, Any]:
        async with (
            httpx2.AsyncClient(headers=auth, timeout=30) as http,
            Client(streamable_http_client(f"{server}/mcp/", http_client=http)) as client,
        ):
            result = await client.call_tool("write", {"title": TITLE, "content": CONTENT})
            return client.protocol_version, result

    version, result = anyio.run(go)
    memory = AIMemory.objects.get(pk=data(result)["id"])
    assert (memory.student_id, memory.source) == (alice.pk, "mcp_tool")
    assert version in MODERN_PROTOCOL_VERSIONS
