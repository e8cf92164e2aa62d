"""Serve the student memory's MCP tools over stdio, for a local agent acting as one student.

    python manage.py mcp_server --student ID

The agent (Claude Desktop, an SDK client) starts this command and speaks MCP on its stdin and
stdout; logs go to stderr. See memory.mcp and docs/mcp.md.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection

from accounts.models import User
from memory.mcp import run_stdio


class Command(BaseCommand):
    help = "Serve the memory MCP tools (recall, write, forget) over stdio, acting as one student."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--student", type=int, required=True, help="the id of the student to act as")

    def handle(self, *args: Any, **options: Any) -> None:
        student = User.objects.filter(pk=options["student"], role=User.Role.STUDENT, is_active=True).first()
        if student is None:
            raise CommandError(f"No active student with id {options['student']}.")
        # The tools take their own connections, one short step at a time (memory.mcp).
        connection.close()
        run_stdio(student)
