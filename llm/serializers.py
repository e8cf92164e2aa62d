"""Fields the apps' serializers share for what the model layer records."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from llm.windows import model_id


class ModelIdField(serializers.CharField):
    """A model's name as its id (llm.windows.model_id): a row recorded with the path a server
    named its model by shows the file's name, never the host's path."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("read_only", True)
        kwargs.setdefault("help_text", "The model that wrote it, by its id ('' if none).")
        super().__init__(**kwargs)

    def to_representation(self, value: Any) -> str:
        return model_id(str(value or ""))
