"""Model fields for embedding vectors: pgvector columns on PostgreSQL, bytes on SQLite.

On PostgreSQL recall can rank vectors in the database (memory.search.vector_search), so they are
pgvector's `vector` (one per memory) and `vector[]` (one per sentence) columns, and `halfvec`
for the half-precision copy the scan reads (memory.models.HalfVector). The embedded SQLite
default has no vector type: the same fields store little-endian bytes there (float32, float16
for the half-precision field). Each process decodes a student's vectors once, from either
(memory.search.vector_cache). In Python a value is a float32 numpy array either way: one row of
`dim` values, or for a list, the rows back to back, flat (the caller knows `dim`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pgvector.django import VectorField as PgVectorField


def _as_float32(value: Any) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(value, dtype=np.float32))


def vector_text(value: Any) -> str:
    """pgvector's text form of one vector: `[0.1,0.2]` (float32 values, exact round trip)."""
    return "[" + ",".join(repr(float(x)) for x in _as_float32(value).ravel()) + "]"


def _from_db(value: Any, byte_dtype: str) -> Any:
    """A float32 array from what the database returned: pgvector's text form, or bytes of
    `byte_dtype` (SQLite)."""
    if value is None:
        return None
    if isinstance(value, bytes | memoryview):
        return np.frombuffer(bytes(value), dtype=byte_dtype).astype(np.float32, copy=False)
    if isinstance(value, str):
        numbers = value.strip("[]")
        return np.array(numbers.split(","), dtype=np.float32) if numbers else np.zeros(0, np.float32)
    return _as_float32(value)


class VectorField(PgVectorField):
    """A vector of any dimension: pgvector `vector` on PostgreSQL, float32 bytes elsewhere."""

    def db_type(self, connection: Any) -> str:
        return str(super().db_type(connection)) if connection.vendor == "postgresql" else "blob"

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> Any:
        return _from_db(value, "<f4")

    def to_python(self, value: Any) -> Any:
        return value if value is None or isinstance(value, np.ndarray) else _as_float32(value)

    def get_prep_value(self, value: Any) -> Any:
        return value

    def get_db_prep_value(self, value: Any, connection: Any, prepared: bool = False) -> Any:
        if value is None:
            return None
        if connection.vendor == "postgresql":
            return vector_text(value)
        return _as_float32(value).astype("<f4", copy=False).tobytes()


class VectorListField(VectorField):
    """Several vectors of one dimension: pgvector `vector[]` on PostgreSQL, float32 bytes back to
    back elsewhere. The Python value is the flat float32 array of all their values; written from
    a (n, dim) array."""

    def db_type(self, connection: Any) -> str:
        return "vector[]" if connection.vendor == "postgresql" else "blob"

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> Any:
        if isinstance(value, str):  # `{"[1,2]","[3,4]"}`, or `{}`
            numbers = value.translate(_ARRAY_PUNCTUATION).replace(",,", ",").strip(", ")
            return np.array(numbers.split(","), dtype=np.float32) if numbers else np.zeros(0, np.float32)
        if isinstance(value, list):
            return np.concatenate([_as_float32(v).ravel() for v in value]) if value else np.zeros(0, np.float32)
        return super().from_db_value(value, expression, connection)

    def get_db_prep_value(self, value: Any, connection: Any, prepared: bool = False) -> Any:
        if value is None or connection.vendor != "postgresql":
            return super().get_db_prep_value(value, connection, prepared)
        rows = _as_float32(value)
        if rows.ndim == 1:
            rows = rows[None] if rows.size else rows.reshape(0, 0)
        return "{" + ",".join(f'"{vector_text(row)}"' for row in rows) + "}"


class HalfVectorField(VectorField):
    """A vector of any dimension in half precision: pgvector `halfvec` on PostgreSQL, float16
    bytes elsewhere. The Python value is a float32 array of the half-precision values."""

    def db_type(self, connection: Any) -> str:
        return "halfvec" if connection.vendor == "postgresql" else "blob"

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> Any:
        return _from_db(value, "<f2")

    def get_db_prep_value(self, value: Any, connection: Any, prepared: bool = False) -> Any:
        if value is None or connection.vendor == "postgresql":
            return super().get_db_prep_value(value, connection, prepared)
        return _as_float32(value).astype("<f2").tobytes()


_ARRAY_PUNCTUATION = str.maketrans({"{": "", "}": "", '"': "", "[": "", "]": ""})
