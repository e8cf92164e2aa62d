"""An OpenAI-compatible embeddings endpoint that runs the local all-MiniLM-L6-v2 once per machine.

    python manage.py embeddings_server [--host 127.0.0.1] [--port 8088] [--threads 1]

Web and worker processes then reach it with

    EMBEDDINGS_BACKEND=openai EMBEDDINGS_BASE_URL=http://127.0.0.1:8088/v1 EMBEDDINGS_MODEL=all-MiniLM-L6-v2

and never load the model themselves (about 170 MB of resident memory each). With that model name the
vectors are stored under the local backend's name (memory.search.embeddings.OpenAIEmbedder), so moving
between `local` and this server needs no `reembed`.

Routes:
- `POST /v1/embeddings`: `{"model": ..., "input": str | list[str], "encoding_format": "float" |
  "base64" (optional, the openai SDK asks for base64), "dimensions": 384 (optional)}` ->
  `{"object": "list", "data": [{"object": "embedding", "index": i, "embedding": ...}], "model":
  "sentence-transformers/all-MiniLM-L6-v2", "usage": {"prompt_tokens": n, "total_tokens": n}}`.
  The vectors are those of the local backend: L2-normalised float32. `model` must be
  `sentence-transformers/all-MiniLM-L6-v2` or `all-MiniLM-L6-v2`; the answer always names the
  first, which the openai backend checks before it stores vectors as the local model's. Tokens
  are counted as the model reads them (each text truncated at 256 word pieces).
- `GET /v1/models`, `GET /v1/models/{id}`: the one model. `GET /health`: 200 once the model is
  loaded (503 before), with the requests and inputs embedded since start.

Limits. A request carries at most MAX_INPUTS texts of at most MAX_INPUT_CHARS characters each
(the app's longest text, a 20,000-character message, fits; the model reads only the beginning of
a long text anyway), in a body of at most MAX_BODY_BYTES. The openai backend splits larger batches
(EMBEDDINGS_REQUEST_MAX_INPUTS). Every error has OpenAI's shape, `{"error": {"message": ...,
"type": ..., "param": ..., "code": ...}}`: a body that is not a JSON object, a missing or
mistyped field, an empty input, token arrays instead of text, too many or too long texts, other
dimensions or encodings get 400 `invalid_request_error`; an unknown model 404 `model_not_found`
(as OpenAI answers); a larger body 413; a failure of the model 500 `server_error`.

One process, one model, and requests embedded one at a time in order of arrival on one thread
(the model on `--threads` ONNX Runtime threads, EMBEDDINGS_LOCAL_THREADS by default): a second request
waits for the first rather than sharing the cores with it. Past LIMIT_CONCURRENCY open
connections uvicorn answers 503. There is no authentication: it listens on 127.0.0.1 unless told
otherwise, and must only be reachable by the machine's own processes.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from memory.search.embeddings import LOCAL_DIM, LOCAL_MODEL_ALIASES, LOCAL_MODEL_ID, LocalEmbedder

logger = logging.getLogger(__name__)

MAX_INPUTS = 256
MAX_INPUT_CHARS = 50_000
MAX_BODY_BYTES = 16 * 1024 * 1024
LIMIT_CONCURRENCY = 64
# A fixed creation time: the model's id says which weights these are; the date adds nothing.
MODEL_CREATED = 0

Scope = dict[str, Any]


class RequestError(Exception):
    """A request the server refuses, with its HTTP status and OpenAI-style error fields."""

    def __init__(
        self,
        message: str,
        *,
        status: int = 400,
        param: str | None = None,
        code: str | None = None,
        kind: str = "invalid_request_error",
    ) -> None:
        super().__init__(message)
        self.status = status
        self.param = param
        self.code = code
        self.kind = kind

    def body(self) -> dict[str, Any]:
        return {"error": {"message": str(self), "type": self.kind, "param": self.param, "code": self.code}}


def parse_request(body: bytes) -> tuple[list[str], str]:
    """(texts, encoding format) from a `/v1/embeddings` body. Raises RequestError."""
    try:
        payload = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RequestError(f"The body is not valid JSON: {exc}") from exc
    if not isinstance(payload, dict):
        raise RequestError("The body must be a JSON object.")
    model = payload.get("model")
    if not isinstance(model, str) or not model:
        raise RequestError("'model' is required and must be a string.", param="model")
    if model not in LOCAL_MODEL_ALIASES:
        raise RequestError(
            f"The model '{model}' does not exist here; this server serves '{LOCAL_MODEL_ID}'.",
            status=404,
            param="model",
            code="model_not_found",
        )
    texts = payload.get("input")
    if isinstance(texts, str):
        texts = [texts]
    if not isinstance(texts, list) or not texts:
        raise RequestError("'input' must be a string or a non-empty list of strings.", param="input")
    if not all(isinstance(text, str) for text in texts):
        if all(isinstance(t, int) or (isinstance(t, list) and all(isinstance(i, int) for i in t)) for t in texts):
            raise RequestError("Token arrays are not supported; send the text.", param="input")
        raise RequestError("'input' must be a string or a list of strings.", param="input")
    if len(texts) > MAX_INPUTS:
        raise RequestError(f"At most {MAX_INPUTS} inputs per request (got {len(texts)}).", param="input")
    for i, text in enumerate(texts):
        if len(text) > MAX_INPUT_CHARS:
            raise RequestError(f"Input {i} has {len(text)} characters; at most {MAX_INPUT_CHARS}.", param="input")
    encoding = payload.get("encoding_format") or "float"
    if encoding not in ("float", "base64"):
        raise RequestError("'encoding_format' must be 'float' or 'base64'.", param="encoding_format")
    dimensions = payload.get("dimensions")
    if dimensions is not None and dimensions != LOCAL_DIM:
        raise RequestError(f"This model has {LOCAL_DIM} dimensions only.", param="dimensions")
    return texts, encoding


def embeddings_response(vectors: np.ndarray, tokens: int, encoding: str) -> dict[str, Any]:
    data = []
    for i, vector in enumerate(np.asarray(vectors, dtype="<f4")):
        # float32 -> Python float is exact, and so is the JSON round trip back to float32.
        value: Any = base64.b64encode(vector.tobytes()).decode("ascii") if encoding == "base64" else vector.tolist()
        data.append({"object": "embedding", "index": i, "embedding": value})
    return {
        "object": "list",
        "data": data,
        "model": LOCAL_MODEL_ID,
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }


def model_entry() -> dict[str, Any]:
    return {"id": LOCAL_MODEL_ID, "object": "model", "created": MODEL_CREATED, "owned_by": "tutor"}


class EmbeddingsApp:
    """The ASGI application: the lifespan loads the model, HTTP requests are embedded on one thread."""

    def __init__(self, *, threads: int = 0) -> None:
        self.threads = threads
        self.embedder = LocalEmbedder()
        self.ready = False
        self.requests = 0
        self.inputs = 0
        # One thread: the model runs one request at a time, in order of arrival.
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embed")

    # --- work on the model's thread ---

    def _load(self) -> str:
        started = time.monotonic()
        if self.threads:
            LocalEmbedder.set_threads(self.threads)
        self.embedder.embed(["warm-up"])
        threads = LocalEmbedder.threads()
        return (
            f"embeddings server: {LOCAL_MODEL_ID} on {threads} ONNX Runtime thread{'s' if threads != 1 else ''}, "
            f"loaded in {time.monotonic() - started:.1f} s"
        )

    def _embed(self, texts: list[str]) -> tuple[np.ndarray, int]:
        vectors, tokens = self.embedder.embed(texts), self.embedder.count_tokens(texts)
        self.requests += 1
        self.inputs += len(texts)
        return vectors, tokens

    async def _run(self, fn: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)

    # --- ASGI ---

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            await self._http(scope, receive, send)

    async def _lifespan(self, receive: Any, send: Any) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    logger.info(await self._run(self._load))
                except Exception as exc:
                    logger.exception("embeddings server: the model could not be loaded")
                    await send({"type": "lifespan.startup.failed", "message": f"{type(exc).__name__}: {exc}"})
                    return
                self.ready = True
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                self._executor.shutdown(wait=True, cancel_futures=True)
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _http(self, scope: Scope, receive: Any, send: Any) -> None:
        method = scope["method"]
        path = scope["path"].rstrip("/") or "/"
        try:
            if path == "/v1/embeddings":
                if method != "POST":
                    raise RequestError("Use POST.", status=405, code="method_not_allowed")
                texts, encoding = parse_request(await _read_body(receive))
                try:
                    vectors, tokens = await self._run(self._embed, texts)
                except Exception as exc:
                    logger.exception("embeddings server: the model failed on %d inputs", len(texts))
                    raise RequestError(
                        f"The model failed: {type(exc).__name__}", status=500, kind="server_error"
                    ) from exc
                await _send_json(send, 200, embeddings_response(vectors, tokens, encoding))
            elif method != "GET":
                raise RequestError("Not found.", status=404)
            elif path == "/v1/models":
                await _send_json(send, 200, {"object": "list", "data": [model_entry()]})
            elif path.startswith("/v1/models/") and path.removeprefix("/v1/models/") in LOCAL_MODEL_ALIASES:
                await _send_json(send, 200, model_entry())
            elif path == "/health":
                health = {"status": "ok" if self.ready else "loading", "requests": self.requests, "inputs": self.inputs}
                await _send_json(send, 200 if self.ready else 503, health)
            else:
                raise RequestError(f"Not found: {method} {scope['path']}", status=404)
        except RequestError as exc:
            await _send_json(send, exc.status, exc.body())


async def _read_body(receive: Any) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise RequestError("The client went away.", status=400)
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise RequestError(f"The body is larger than {MAX_BODY_BYTES} bytes.", status=413)
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


async def _send_json(send: Any, status: int, payload: dict[str, Any]) -> None:
    body = json.dumps(payload, separators=(",", ":")).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
