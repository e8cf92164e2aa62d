"""Building blocks shared by every app's API: pagination, strict text, and the JSON parser."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.utils.translation import gettext_lazy as _
from rest_framework import parsers, serializers
from rest_framework.exceptions import ParseError
from rest_framework.pagination import PageNumberPagination

# The largest id a row can have (a signed 64-bit key): a larger one in a URL or a filter is a
# 404 or a 400, never a database error.
MAX_ID = 2**63 - 1


class IdConverter:
    """`<id:name>` in URLs: a positive integer that fits a 64-bit key; anything else matches no
    URL, so it answers 404 in the error envelope."""

    regex = "[0-9]{1,19}"

    def to_python(self, value: str) -> int:
        number = int(value)
        if not 0 < number <= MAX_ID:
            raise ValueError(value)
        return number

    def to_url(self, value: int) -> str:
        return str(value)


class Pagination(PageNumberPagination):
    page_size = 20
    page_size_query_param = "page_size"
    max_page_size = 100


class StrictCharField(serializers.CharField):
    """A CharField that refuses numbers, lists and objects instead of turning them into text."""

    default_error_messages = {"not_text": _("Must be text.")}

    def to_internal_value(self, data: object) -> str:
        if not isinstance(data, str):
            self.fail("not_text")
        return super().to_internal_value(data)


class JsonTooDeep(ParseError):
    default_code = "json_too_deep"


def json_depth_exceeds(value: Any, limit: int) -> bool:
    """Whether `value` nests objects and arrays more than `limit` levels deep (iterative: a
    hostile document cannot exhaust the stack here)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser, with a bound on nesting: deeper than JSON_MAX_DEPTH is a 400
    `json_too_deep`, before any serializer (or the decoder's own recursion) can fail on it."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        limit = settings.JSON_MAX_DEPTH
        message = _("The JSON body is nested more than %(limit)s levels deep.") % {"limit": limit}
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise JsonTooDeep(message) from None
        if json_depth_exceeds(data, limit):
            raise JsonTooDeep(message)
        return data
