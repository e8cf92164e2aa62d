"""Building blocks shared by every app's API: pagination, strict text, and the JSON parser."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.validators import ProhibitNullCharactersValidator, RegexValidator
from django.utils.translation import gettext_lazy as _
from rest_framework import parsers, serializers
from rest_framework.exceptions import ParseError
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.validators import ProhibitSurrogateCharactersValidator

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


def query_params(request: Request) -> dict[str, str]:
    """The request's query parameters, for a serializer to validate as strictly as a JSON body:
    a parameter given empty (`?status=`, `?until=`) is validated as the empty string, a 400 for
    a number, a date or a choice, where DRF's form handling would take it as absent and answer
    another page, another filter or everything. A repeated parameter counts once (its last value)."""
    return request.query_params.dict()


_built: dict[type[serializers.BaseSerializer[Any]], serializers.BaseSerializer[Any]] = {}


def represent(serializer_class: type[serializers.BaseSerializer[Any]], instance: Any) -> dict[str, Any]:
    """`serializer_class(instance).data`, from one serializer of that class built once per
    process: building a serializer's fields (a ModelSerializer's inspects the model) costs more
    than showing a row with them. For output serializers that read no context (no request)."""
    serializer = _built.get(serializer_class)
    if serializer is None:
        serializer = _built.setdefault(serializer_class, serializer_class())
    return dict(serializer.to_representation(instance))


class PageInput(serializers.Serializer[None]):
    page = serializers.IntegerField(required=False, min_value=1, help_text="From 1; past the last page: 404.")
    page_size = serializers.IntegerField(required=False, min_value=1, max_value=100, help_text="Default 20.")


class Pagination(PageNumberPagination):
    """DRF's page numbers, refusing what DRF would ignore: `page_size` outside 1-100 or not a
    number (`null`, empty) and `page` not a positive number are a 400 naming the parameter."""

    page_size = 20
    page_size_query_param = "page_size"
    max_page_size = 100

    def paginate_queryset(self, queryset: Any, request: Request, view: Any = None) -> list[Any] | None:
        PageInput(data=query_params(request)).is_valid(raise_exception=True)
        return super().paginate_queryset(queryset, request, view)

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        bounds = {
            "page": {"minimum": 1},
            "page_size": {"minimum": 1, "maximum": self.max_page_size, "default": self.page_size},
        }
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            parameter["schema"].update(bounds.get(parameter["name"], {}))
        return parameters


# The characters Python's str.split() and str.strip() take for white space (DRF trims text with
# strip()), as a regular expression class that JSON Schema's (ECMA-262) regular expressions read
# the same: their `\s` leaves out U+001C-U+001F and U+0085, which a text of only those is here
# (blank once trimmed), and takes in U+FEFF, which Python keeps.
WHITE_SPACE = r"\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"


class StorableText(RegexValidator):
    """Text PostgreSQL can store and UTF-8 can encode: no NUL (U+0000) and no lone surrogate.
    DRF's own two validators decide, with their messages. The schema's `pattern` says no NUL and
    not blank (a lone surrogate cannot be written in UTF-8, only as a JSON escape; generators
    refuse surrogates in patterns)."""

    def __init__(self) -> None:
        # A character other than white space: the field refuses blank text (once trimmed).
        super().__init__(rf"^[^\x00]*[^{WHITE_SPACE}\x00][^\x00]*$")

    def __call__(self, value: Any) -> None:
        ProhibitNullCharactersValidator()(value)
        ProhibitSurrogateCharactersValidator()(value)


class WordCount(RegexValidator):
    """Declares in the schema, as the field's `pattern`, that the text has `low` to `high` words
    (runs of characters other than white space). It checks nothing itself: the service checks
    the rule, after the role and tenancy checks (a student's refused write stays a 403, not a
    400), with its own translated message."""

    def __init__(self, low: int, high: int) -> None:
        word, space = rf"[^{WHITE_SPACE}\x00]+", f"[{WHITE_SPACE}]"
        super().__init__(rf"^{space}*{word}(?:{space}+{word}){{{low - 1},{high - 1}}}{space}*$")

    def __call__(self, value: Any) -> None:
        return None


class StrictCharField(serializers.CharField):
    """A CharField that refuses numbers, lists and objects instead of turning them into text.
    Text that cannot be stored is refused as by any CharField; the schema says so (`StorableText`)
    for the fields that refuse blank text."""

    default_error_messages = {"not_text": _("Must be text.")}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        drf_own = (ProhibitNullCharactersValidator, ProhibitSurrogateCharactersValidator)
        if not self.allow_blank and self.trim_whitespace:
            # (A field that allows blank text keeps DRF's validators, and no pattern: the schema
            # would give its default, "", a pattern it cannot match.)
            self.validators = [v for v in self.validators if not isinstance(v, drf_own)] + [StorableText()]

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


class StrictBooleanField(serializers.BooleanField):
    """A BooleanField that takes only JSON's true and false (DRF's also takes 1, "yes", "on"...)."""

    def to_internal_value(self, data: object) -> bool:
        if not isinstance(data, bool):
            self.fail("invalid", input=data)
        return data


# Rules between the fields of a request body, which a serializer's fields cannot declare: by
# component, the JSON Schema keys the postprocessing hook adds (tutor.settings: SPECTACULAR_SETTINGS).
BODY_RULES: dict[str, dict[str, Any]] = {
    # PATCH /me/: the language is the one field, and it must be given (`{}` is a 400).
    "PatchedMeInputRequest": {"required": ["language"]},
    # PATCH /memories/{id}/: at least one field (`{}` is a 400). (Not an anyOf of `required`s:
    # openapi-typescript would type the body `unknown`.)
    "PatchedMemoryDetailInputRequest": {"minProperties": 1},
    # POST /tasks/: a classroom or a student, exactly one of the two.
    "TaskListCreateInputRequest": {"oneOf": [{"required": ["classroom"]}, {"required": ["student"]}]},
}


def schema_body_rules(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """drf-spectacular postprocessing hook: adds BODY_RULES to their components, and makes the
    body of their operations required (no body is `{}`). A component that is not there any more
    fails the schema's generation (and `make client`), not silently."""
    schemas = result["components"]["schemas"]
    for name, rules in BODY_RULES.items():
        schemas[name].update(rules)
    refs = {f"#/components/schemas/{name}" for name in BODY_RULES}
    for operations in result["paths"].values():
        for operation in operations.values():
            body = operation.get("requestBody") if isinstance(operation, dict) else None
            if body and any(media.get("schema", {}).get("$ref") in refs for media in body["content"].values()):
                body["required"] = True
    return result
