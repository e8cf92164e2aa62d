from rest_framework import serializers
from rest_framework.pagination import PageNumberPagination


class Pagination(PageNumberPagination):
    page_size = 20
    page_size_query_param = "page_size"
    max_page_size = 100


class StrictCharField(serializers.CharField):
    """A CharField that refuses numbers, lists and objects instead of turning them into text."""

    default_error_messages = {"not_text": "Must be text."}

    def to_internal_value(self, data: object) -> str:
        if not isinstance(data, str):
            self.fail("not_text")
        return super().to_internal_value(data)
