"""A scripted OpenAI-compatible server on 127.0.0.1, so tests run the real `openai` SDK over HTTP.

Each request is classified by its system prompt (chat, summary, compression, grading,
extraction, merge) and answered from that kind's script queue, or by a default: a short tutor
reply, a valid JSON summary, a compression summary, a "correct" grading verdict, the facts a
careful model extracts and the merge it writes (`default_extraction`, `default_merge`: rules
the tests write to). A scripted step is a dict:

    {"content": "text"}                                   a normal answer
    {"tool_calls": [{"name": "save_memory", "arguments": "{...}"}], "content": ""}
    {"status": 503, "body": {...}}                        an HTTP error
    {"delay": 2.0, ...}                                   wait first (then the rest of the step)
    {"raw": "not json"}                                   a malformed 200 body
    {"drop": True}                                        close the connection without answering

A request with `"stream": true` is answered as Server-Sent Events (chunked), the way OpenAI,
vLLM and llama.cpp stream: the content in small chunks, tool calls as argument fragments, then
a usage chunk if `stream_options.include_usage` asks for it, then `data: [DONE]`. Streaming
steps may also say:

    {"stream_seconds": 1.5, ...}       spread the chunks over this long (after any "delay")
    {"drop_after": 3, ...}             cut the connection after this many chunks
    {"error_after": 3, ...}            send an error event (`data: {"error": ...}`) after this many
    {"cut_after": 3, ...}              end with `data: [DONE]` after this many, without a finish
    {"hold_after": 3, ...}             after this many, wait for `ScriptedLLM.release()`
                                       (llama-cpp-python does so to a stream a newer request interrupts)

and `ScriptedLLM.stream_seconds` (a (low, high) range) sets a default for every streamed reply.
The server has the quirks of the real ones the product meets: like llama-cpp-python's, it
repeats each tool call's id and name in every chunk (`repeat_tool_ids`, on by default), and it
refuses (HTTP 500) an assistant message whose content is null.

A window can be set (`context_window`, in tokens counted as characters / 4): a longer request is
refused the way each real server words it (`context_error`: "openai", "llama-cpp-python",
"vllm", "llamacpp", "ollama"). `GET /v1/models` lists `models` (one, "scripted", by default;
llama-cpp-python lists its one model by the GGUF's path, Ollama every model pulled), each with
`models_meta` merged in (e.g. vLLM's {"max_model_len": 8192}), and counts the requests in
`models_asked`; `POST /api/show` answers `ollama_show` if set, else 404. Like llama-cpp-python,
each answer names the model the request asked for.

`like_llama_cpp_python()` answers as llama-cpp-python's server does (its model listed by the
GGUF's path, no window said, json_schema refused with a 500, a prompt past its window refused,
an answer past the room it leaves cut without an error, raw line breaks in JSON strings): see
its docstring.

The quirks of a small real model (SmolLM2-135M) can be turned on:
- `summary_title_words`: the default summary's title has this many words (it wrote 11 and 29
  under `json_object`, whose grammar holds the keys but not the lengths), in every answer,
  the re-ask included;
- `extraction_echo`: the default extraction begins with an item that repeats the prompt's
  own placeholders (title "2 to 10 words", content "one or two sentences", confidence 0.7),
  citing the new memory.

Every request body is recorded in `requests` as (kind, body).

POST /v1/embeddings answers deterministic vectors (a hashed bag of words, EMBEDDING_DIM
values), recorded as kind "embeddings"; a scripted "embeddings" step may be an HTTP error.

POST /v1/moderations answers in OpenAI's shape (id, model, results[] each with flagged,
categories, category_scores, category_applied_input_types), recorded as kind "moderations". By
default a deterministic keyword scorer (`default_moderation`): a phrase of MODERATION_KEYWORDS,
or the marker "[moderation:<category>]", scores that category 0.97 (flagged), anything else
0.0001; images (data URLs) are scored on their decoded bytes, for the categories OpenAI reads in
images only, and, like OpenAI, more than one image in a request is refused (400,
"too_many_images"). A scripted "moderations" step may be {"status": ...}, {"delay": ...},
{"drop": True}, {"raw": ...} as above, {"scores": {"self-harm/intent": 0.93, ...}} (the
default's scores with these instead, flagged from 0.5, or as {"categories": {...}} and
{"flagged": ...} say), or {"results": [...]} (answered as they are).

The kinds of chat completion (`classify`): "summary", "compression", "summary_part",
"grading", "extraction", "merge", "safety" (the safety classifier, safety.backends: by default
the keyword scorer's verdict on the student's text as JSON, `default_safety`), "ask" (a question
about a student or a class, insights: by default `default_ask`, citing the evidence shown, and
`ask_forged_ref` if set) and "chat".
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import html
import json
import random
import re
import threading
import time
import uuid
from collections import defaultdict, deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SUMMARY_MARKER = "You write the long-term memory"
COMPRESSION_MARKER = "You compress a long tutoring conversation"
PART_MARKER = "You take notes on one part"
GRADING_MARKER = "You grade a student's short answer"
EXTRACTION_MARKER = "You extract what lasts"
MERGE_MARKER = "You merge near-duplicate memories"
SAFETY_MARKER = "You screen texts for a tutoring service used by children."
ASK_MARKER = "You answer a question about what a tutoring service knows of its students."
DEFAULT_GRADING = {"correct": True, "feedback": "Yes, that is the expected answer."}

DEFAULT_SUMMARY = {
    "title": "Working on fractions with unlike denominators",
    "content": "The student practised adding fractions with unlike denominators. "
    "They answered three of five quiz questions correctly and should review common denominators next time.",
}


EMBEDDING_DIM = 64


def hashed_embedding(text: str) -> list[float]:
    """A bag-of-words vector: texts sharing words are close, as with a real embedder."""
    vector = [0.0] * EMBEDDING_DIM
    for word in re.findall(r"\w+", text.lower()):
        digest = hashlib.sha256(word.encode()).digest()
        vector[digest[0] % EMBEDDING_DIM] += 1.0 if digest[1] % 2 else -1.0
    return vector


def classify(body: dict[str, Any]) -> str:
    messages = body.get("messages") or []
    first = messages[0].get("content", "") if messages else ""
    if isinstance(first, str) and first.startswith(SUMMARY_MARKER):
        return "summary"
    if isinstance(first, str) and first.startswith(COMPRESSION_MARKER):
        return "compression"
    if isinstance(first, str) and first.startswith(PART_MARKER):
        return "summary_part"
    if isinstance(first, str) and first.startswith(GRADING_MARKER):
        return "grading"
    if isinstance(first, str) and first.startswith(EXTRACTION_MARKER):
        return "extraction"
    if isinstance(first, str) and first.startswith(MERGE_MARKER):
        return "merge"
    if isinstance(first, str) and first.startswith(SAFETY_MARKER):
        return "safety"
    if isinstance(first, str) and first.startswith(ASK_MARKER):
        return "ask"
    return "chat"


# --- Questions about a student or a class (insights) -----------------------------------------

_ASK_BLOCK = re.compile(r'<student_memories student="([^"]*)">(.*?)</student_memories>', re.DOTALL)
_ASK_ITEM = re.compile(r'<memory ref="([^"]+)" kind="([a-z]+)"[^>]*>(.*?)</memory>', re.DOTALL)
ASK_INSUFFICIENT = {
    "en": "The evidence does not answer this question.",
    "fr": "Les éléments disponibles ne répondent pas à cette question.",
}


def default_ask(body: dict[str, Any], forged: str | None = None) -> str:
    """The answer a careful model gives to a question (insights.prompts): in the language the
    instructions ask for ("Write in French"), one sentence per cited item, the items sharing the
    most words with the question first (up to 3 for a student, 2 per student of a class, named),
    each citing its ref; "the evidence does not answer" without evidence. `forged` (a ref the
    prompt never showed, e.g. "m999999") is cited in one more sentence."""
    messages = body.get("messages") or [{}]
    system = str(messages[0].get("content") or "")
    question = str(messages[-1].get("content") or "")
    french = "Write in French" in system
    asked = set(re.findall(r"\w+", question.lower()))
    blocks = _ASK_BLOCK.findall(system)
    per_student = 2 if len(blocks) > 1 or "name each student" in system else 3
    sentences = []
    for username, inner in blocks:
        items = _ASK_ITEM.findall(inner)
        items.sort(key=lambda item: -len(asked & set(re.findall(r"\w+", item[2].lower()))))
        for ref, _kind, text in items[:per_student]:
            title = html.unescape(text.strip().split("\n", 1)[0]).rstrip(".")
            who = f"{username}: " if per_student == 2 else ""
            said = f"D'après les éléments, {title}" if french else f"The evidence says: {title}"
            sentences.append(f"{who}{said} [{ref}].")
    if not sentences:
        sentences.append(ASK_INSUFFICIENT["fr" if french else "en"])
    if forged:
        sentences.append(f"C'est aussi noté ici [{forged}]." if french else f"It is also noted here [{forged}].")
    return " ".join(sentences)


# --- Moderation and the safety classifier ----------------------------------------------------

MODERATION_CATEGORIES = (
    "harassment",
    "harassment/threatening",
    "hate",
    "hate/threatening",
    "illicit",
    "illicit/violent",
    "self-harm",
    "self-harm/instructions",
    "self-harm/intent",
    "sexual",
    "sexual/minors",
    "violence",
    "violence/graphic",
)
# The categories OpenAI's omni-moderation scores images for.
IMAGE_CATEGORIES = frozenset(
    {"self-harm", "self-harm/instructions", "self-harm/intent", "sexual", "violence", "violence/graphic"}
)
MODERATION_KEYWORDS: dict[str, tuple[str, ...]] = {
    "self-harm/intent": ("kill myself", "end my life", "want to die", "hurt myself"),
    "self-harm/instructions": ("how to cut yourself",),
    "self-harm": ("kill myself", "end my life", "want to die", "hurt myself", "how to cut yourself"),
    "violence": ("kill you", "beat you up", "stab"),
    "harassment/threatening": ("kill you", "beat you up"),
    "harassment": ("kill you", "beat you up", "you are stupid", "loser"),
}
MATCHED_SCORE = 0.97
BASE_SCORE = 0.0001


def moderation_scores(
    text: str, categories: tuple[str, ...] | frozenset[str] = MODERATION_CATEGORIES
) -> dict[str, float]:
    """The keyword scorer: MATCHED_SCORE for a category whose phrase or "[moderation:<category>]"
    marker the text holds, else BASE_SCORE."""
    lowered = text.lower()
    return {
        name: MATCHED_SCORE
        if f"[moderation:{name}]" in lowered or any(k in lowered for k in MODERATION_KEYWORDS.get(name, ()))
        else BASE_SCORE
        for name in MODERATION_CATEGORIES
        if name in categories
    }


def _image_text(url: str) -> str:
    """What the scorer reads in an image: its data URL's decoded bytes (a URL: the URL itself)."""
    if url.startswith("data:") and "," in url:
        try:
            return base64.b64decode(url.split(",", 1)[1]).decode("latin-1")
        except ValueError:
            return ""
    return url


def moderation_result(text: str, images: list[str], scripted: dict[str, Any] | None = None) -> dict[str, Any]:
    """One result in OpenAI's shape for a text and its images."""
    scores = moderation_scores(text) if text or not images else {name: 0.0 for name in MODERATION_CATEGORIES}
    for image in images:
        for name, score in moderation_scores(_image_text(image), IMAGE_CATEGORIES).items():
            scores[name] = max(scores[name], score)
    step = scripted or {}
    scores.update(step.get("scores") or {})
    categories = {name: score >= 0.5 for name, score in scores.items()}
    categories.update(step.get("categories") or {})
    types = (["text"] if text else []) + (["image"] if images else [])
    applied = {name: [t for t in types if t == "text" or name in IMAGE_CATEGORIES] for name in MODERATION_CATEGORIES}
    return {
        "flagged": bool(step.get("flagged", any(categories.values()))),
        "categories": categories,
        "category_scores": scores,
        "category_applied_input_types": applied,
    }


def default_moderation(body: dict[str, Any], step: dict[str, Any] | None = None) -> tuple[int, dict[str, Any]]:
    """The answer (status, body) to a /v1/moderations request: a result per string of a list of
    strings, one for a multi-modal list (at most one image, as OpenAI)."""
    given = body.get("input")
    if step and "results" in step:
        results = step["results"]
    elif isinstance(given, list) and any(isinstance(part, dict) for part in given):
        text = " ".join(str(p.get("text") or "") for p in given if isinstance(p, dict) and p.get("type") == "text")
        images = [
            str((p.get("image_url") or {}).get("url") or "")
            for p in given
            if isinstance(p, dict) and p.get("type") == "image_url"
        ]
        if len(images) > 1:
            error = {
                "message": f"Number of images ({len(images)}) exceeds maximum of 1",
                "type": "invalid_request_error",
                "param": "input",
                "code": "too_many_images",
            }
            return 400, {"error": error}
        results = [moderation_result(text, images, step)]
    else:
        texts = given if isinstance(given, list) else [str(given or "")]
        results = [moderation_result(str(t), [], step) for t in texts]
    payload = {"id": f"modr-{uuid.uuid4().hex[:12]}", "model": body.get("model") or "omni-moderation-latest"}
    return 200, {**payload, "results": results}


def default_safety(body: dict[str, Any]) -> dict[str, Any]:
    """The classifier's verdict by the keyword scorer, on the last message's text: self-harm
    intent a crisis, a threat a violence concern, harassment a concern, "[moderation:
    sexual/minors]" a crisis; else none."""
    content = (body.get("messages") or [{}])[-1].get("content") or ""
    if isinstance(content, list):
        content = " ".join(str(p.get("text") or "") for p in content if isinstance(p, dict))
    scores = moderation_scores(str(content))
    for source, category, severity in (
        ("sexual/minors", "sexual_minors", "crisis"),
        ("self-harm/intent", "self_harm", "crisis"),
        ("harassment/threatening", "violence", "concern"),
        ("harassment", "harassment", "concern"),
    ):
        if scores[source] >= 0.5:
            return {"category": category, "severity": severity, "confidence": 0.9, "reason": f"Scored {source}."}
    return {"category": "none", "severity": "none", "confidence": 0.9, "reason": "Nothing of concern."}


_SHOWN = re.compile(r'<(memory|new_memory) id="(\d+)" kind="[a-z_]+">(.*?)</\1>', re.DOTALL)
_FACT = re.compile(r"\b(Fact|Approach): ([^|.]+?) \| ([^.]+\.)(?: \((unsure)\))?")


def default_extraction(body: dict[str, Any]) -> dict[str, Any]:
    """The extraction a careful model gives, by a rule the tests can write to: each sentence
    "Fact: <title> | <content>." (or "Approach: ...") of the new memory is a fact (or an
    approach) at confidence 0.9 citing it; one whose title equals a known memory's updates that
    memory, at 0.9, or at 0.5 if the sentence ends "(unsure)". The student card's changes
    (`default_card_changes`) follow."""
    text = body["messages"][-1]["content"]
    shown = [(tag, int(pk), body_text) for tag, pk, body_text in _SHOWN.findall(text)]
    new = next(((pk, t) for tag, pk, t in shown if tag == "new_memory"), None)
    if new is None:
        return {"facts": [], "card": []}
    known = {t.split("\n", 1)[0].strip().lower(): pk for tag, pk, t in shown if tag == "memory"}
    facts = []
    for kind, title, content, unsure in _FACT.findall(new[1]):
        title = " ".join(title.split())
        updates = known.get(title.lower())
        facts.append(
            {
                "tier": "semantic" if kind == "Fact" else "procedural",
                "title": title,
                "content": " ".join(content.split()),
                "confidence": 0.9,
                "evidence": [new[0]],
                "updates": updates,
                "update_confidence": (0.5 if unsure else 0.9) if updates else 0.0,
                "update_reason": "The newer memory says otherwise." if updates else "",
            }
        )
    return {"facts": facts, "card": default_card_changes(new[1], facts)}


def default_card_changes(text: str, facts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The card changes a careful model proposes from the new memory's `text`: an accommodation
    for dyslexia when it says "dyslexi..." (English or French, at 0.9: it still waits for a
    teacher), the interest "football" when it says football (at 0.95: applied). Each names the
    first fact that says it, or none."""

    def fact_saying(word: str) -> int | None:
        return next((i for i, f in enumerate(facts) if word in f"{f['title']} {f['content']}".lower()), None)

    lowered = text.lower()
    changes = []
    if "dyslexi" in lowered:
        value = "Dyslexie" if re.search(r"dyslexi(que|e)", lowered) else "Dyslexia"
        changes.append(
            {"field": "accommodations", "op": "add", "value": value, "confidence": 0.9, "fact": fact_saying("dyslexi")}
        )
    if "football" in lowered:
        football = fact_saying("football")
        changes.append({"field": "interests", "op": "add", "value": "football", "confidence": 0.95, "fact": football})
    return changes


# What SmolLM2-135M answered to the extraction prompt: its placeholders, nearly word for word.
ECHOED_PLACEHOLDERS = {
    "tier": "semantic",
    "title": "2 to 10 words",
    "content": "one or two sentences",
    "confidence": 0.7,
    "updates": None,
    "update_confidence": 0.0,
    "update_reason": "",
}

LONG_TITLE = (
    "Working through fractions with unlike denominators and then checking every answer together "
    "with the tutor before the quiz at the end of a long session today"
)


def default_summary(body: dict[str, Any]) -> dict[str, str]:
    """DEFAULT_SUMMARY, plus (as a model keeps what matters) up to two "Fact: <title> | <content>."
    or "Approach: ..." sentences the transcript holds, word for word."""
    messages = body.get("messages") or []
    transcript = messages[1].get("content", "") if len(messages) > 1 else ""
    kept = [
        f"{kind}: {' '.join(title.split())} | {' '.join(content.split())}"
        for kind, title, content, _ in _FACT.findall(transcript if isinstance(transcript, str) else "")
    ][:2]
    if not kept:
        return DEFAULT_SUMMARY
    return {**DEFAULT_SUMMARY, "content": " ".join([DEFAULT_SUMMARY["content"], *kept])}


def default_merge(body: dict[str, Any]) -> dict[str, Any]:
    """The merge a careful model gives: the first memory's title, the longest content, at 0.9;
    at 0.4 if the memories name different numbers (they differ in substance)."""
    shown = [t for _, _, t in _SHOWN.findall(body["messages"][-1]["content"])]
    parts = [[*t.split("\n", 1), ""] for t in shown]
    numbers = {tuple(re.findall(r"\d+", t)) for t in shown}
    return {
        "title": parts[0][0].strip() if parts else "Merged memory of the student",
        "content": max((p[1].strip() for p in parts), key=len, default=""),
        "confidence": 0.9 if len(numbers) <= 1 else 0.4,
        "reason": "Same memory in other words." if len(numbers) <= 1 else "They name different numbers.",
    }


class ScriptedLLM:
    def __init__(self) -> None:
        self.scripts: dict[str, deque[dict[str, Any]]] = defaultdict(deque)
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.lock = threading.Lock()
        self.stream_seconds: tuple[float, float] = (0.0, 0.0)
        self.repeat_tool_ids = True
        self.context_window: int | None = None
        self.context_error = "openai"
        # Its tokenizer's tokens per 4 characters (real ones differ from the product's tiktoken).
        self.token_scale = 1.0
        # llama-cpp-python style: a failed stream closes the connection mid-body (else: empty body).
        self.cut_failed_streams = True
        self.models: list[str] = ["scripted"]
        self.models_meta: dict[str, Any] = {}
        self.models_asked = 0
        self.ollama_show: dict[str, Any] | None = None
        self.refused_formats: set[str] = set()
        # llama-cpp-python refuses an unknown response_format with a 500 (a pydantic error).
        self.format_refusal_status = 400
        self.summary_title_words: int | None = None
        self.extraction_echo = False
        # llama-cpp-python's quirks (`like_llama_cpp_python`).
        self.cut_at_window = False
        self.raw_line_breaks = False
        # A ref the default answer to a question cites though the prompt never showed it.
        self.ask_forged_ref: str | None = None
        # Set by `release()`: a stream with "hold_after" goes on.
        self.released = threading.Event()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def start(self) -> ScriptedLLM:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def release(self) -> None:
        """Let the streams held by a step's "hold_after" go on."""
        self.released.set()

    def reset(self) -> None:
        self.released.clear()
        with self.lock:
            self.scripts.clear()
            self.requests.clear()
            self.stream_seconds = (0.0, 0.0)
            self.repeat_tool_ids = True
            self.context_window = None
            self.context_error = "openai"
            self.token_scale = 1.0
            self.cut_failed_streams = True
            self.models = ["scripted"]
            self.models_meta = {}
            self.models_asked = 0
            self.ollama_show = None
            self.refused_formats = set()
            self.format_refusal_status = 400
            self.summary_title_words = None
            self.extraction_echo = False
            self.cut_at_window = False
            self.raw_line_breaks = False
            self.ask_forged_ref = None

    def script(self, kind: str, *steps: dict[str, Any]) -> None:
        with self.lock:
            self.scripts[kind].extend(steps)

    def calls(self, kind: str | None = None) -> list[dict[str, Any]]:
        with self.lock:
            return [body for k, body in self.requests if kind is None or k == kind]

    def _next(self, kind: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        with self.lock:
            if self.scripts[kind]:
                return self.scripts[kind].popleft()
        if kind == "summary":
            summary = default_summary(body or {})
            if self.summary_title_words:
                summary = {**summary, "title": " ".join((LONG_TITLE.split() * 3)[: self.summary_title_words])}
            return {"content": json.dumps(summary)}
        if kind == "compression":
            return {"content": "Earlier, the student and tutor worked through many exercises."}
        if kind == "summary_part":
            return {"content": "In this part the student practised adding fractions."}
        if kind == "grading":
            return {"content": json.dumps(DEFAULT_GRADING)}
        if kind == "extraction":
            extracted = default_extraction(body or {"messages": [{"content": ""}]})
            if self.extraction_echo:
                new = _SHOWN.findall(str((body or {"messages": [{}]})["messages"][-1].get("content") or ""))
                cited = [int(pk) for tag, pk, _ in new if tag == "new_memory"]
                extracted = {
                    "facts": [{**ECHOED_PLACEHOLDERS, "evidence": cited}, *extracted["facts"]],
                    "card": [{**c, "fact": None if c["fact"] is None else c["fact"] + 1} for c in extracted["card"]],
                }
            return {"content": json.dumps(extracted)}
        if kind == "merge":
            return {"content": json.dumps(default_merge(body or {"messages": [{"content": ""}]}))}
        if kind == "safety":
            return {"content": json.dumps(default_safety(body or {}))}
        if kind == "ask":
            return {"content": default_ask(body or {}, self.ask_forged_ref)}
        return {"content": "Let's work through it step by step."}

    def prompt_tokens(self, body: dict[str, Any]) -> int:
        """The request's prompt in this server's tokens (characters / 4, times `token_scale`)."""
        # Like llama.cpp's chat templates, the tools' schemas are rendered into the prompt.
        tools = len(json.dumps(body["tools"])) // 4 if body.get("tools") else 0
        return int(
            (sum(len(str(m.get("content") or "")) // 4 + 4 for m in body.get("messages", [])) + tools)
            * self.token_scale
        )

    def like_llama_cpp_python(self, *, n_ctx: int = 2048) -> ScriptedLLM:
        """Answer as llama-cpp-python's server (`python -m llama_cpp.server`, as the README starts
        it) does: its one model listed by the GGUF's path, owned by "me", without its window;
        `json_schema` refused with a 500 (pydantic's validation error), `json_object` with a
        schema taken; a prompt longer than `n_ctx` refused with its "maximum context length"
        400; an answer longer than the room the window leaves cut there without an error
        (finish_reason "length"); and, as its JSON grammar lets a small model write them, raw
        line breaks inside the strings of a `json_object` answer."""
        with self.lock:
            self.models = ["/srv/models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"]
            self.models_meta = {"owned_by": "me", "permissions": []}
            self.refused_formats = {"json_schema"}
            self.format_refusal_status = 500
            self.context_error = "llama-cpp-python"
            self.context_window = n_ctx
            self.cut_at_window = True
            self.raw_line_breaks = True
        return self

    def cut(self, body: dict[str, Any], step: dict[str, Any]) -> dict[str, Any]:
        """The step's answer cut where the server stops it: at `max_tokens`, or, with
        `cut_at_window`, where the window is full (finish "length"); as it was otherwise."""
        content = str(step.get("content") or "")
        if not self.cut_at_window:
            return step
        if self.raw_line_breaks and (body.get("response_format") or {}).get("type") == "json_object":
            content = content.replace(". ", ".\n")
            step = {**step, "content": content}
        room = body.get("max_tokens") or None
        if self.context_window is not None:
            left = self.context_window - self.prompt_tokens(body)
            room = min(room or left, left)
        if room is None or step.get("tool_calls") or len(content) // 4 <= room:
            return step
        return {**step, "content": content[: room * 4], "finish": "length"}

    def context_refusal(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
        """The error a real server gives for a prompt longer than its window, in its words."""
        if self.context_window is None:
            return None
        tokens = self.prompt_tokens(body)
        if tokens <= self.context_window:
            return None
        n = self.context_window
        if self.context_error == "vllm":
            message = (
                f"This model's maximum context length is {n} tokens. However, you requested {tokens + 512} tokens "
                f"({tokens} in the messages, 512 in the completion). Please reduce the length of the messages or "
                "completion."
            )
            return 400, {"object": "error", "message": message, "type": "BadRequestError", "param": None, "code": 400}
        if self.context_error == "llamacpp":
            error = {
                "code": 400,
                "message": "the request exceeds the available context size, try increasing it",
                "type": "exceed_context_size_error",
                "n_prompt_tokens": tokens,
                "n_ctx": n,
            }
            return 400, {"error": error}
        if self.context_error == "ollama":
            return 400, {"error": {"message": "input length exceeds the context length", "type": "api_error"}}
        message = (
            f"This model's maximum context length is {n} tokens. However, you requested {tokens} tokens "
            f"({tokens} in the messages, 0 in the completion). Please reduce the length of the messages or completion."
        )
        error = {"message": message, "type": "invalid_request_error", "param": "messages"}
        error["code"] = "context_length_exceeded"
        return 400, {"error": error}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        llm = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body are written separately: without TCP_NODELAY each answer waits
            # ~40 ms for a delayed ACK.
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(self, status: int, payload: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def _chunk(self, data: bytes) -> None:
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

            def _stream(self, body: dict[str, Any], step: dict[str, Any]) -> None:
                """The step as an SSE stream of chat.completion.chunk objects."""
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                ident = f"chatcmpl-{len(llm.requests)}"
                model = body.get("model", "scripted")

                def chunk(delta: dict[str, Any], finish: str | None = None, usage: Any = None) -> bytes:
                    payload: dict[str, Any] = {
                        "id": ident,
                        "object": "chat.completion.chunk",
                        "created": int(time.time()),
                        "model": model,
                        "choices": [] if usage else [{"index": 0, "delta": delta, "finish_reason": finish}],
                    }
                    if usage:
                        payload["usage"] = usage
                    return b"data: " + json.dumps(payload).encode() + b"\n\n"

                content = str(step.get("content") or "")
                pieces = [chunk({"role": "assistant", "content": ""})]
                pieces += [chunk({"content": w}) for w in re.findall(r"\S+\s*|\s+", content)]
                for i, call in enumerate(step.get("tool_calls") or []):
                    call_id = f"call_{i}_{len(llm.requests)}"
                    args = str(call["arguments"])
                    fragments = [args[j : j + 12] for j in range(0, len(args), 12)] or [""]
                    for n, fragment in enumerate(fragments):
                        entry: dict[str, Any] = {"index": i, "function": {"arguments": fragment}}
                        if n == 0 or llm.repeat_tool_ids:
                            entry.update(id=call_id, type="function")
                            entry["function"]["name"] = call["name"]
                        pieces.append(chunk({"tool_calls": [entry]}))
                pieces.append(chunk({}, step.get("finish") or ("tool_calls" if step.get("tool_calls") else "stop")))
                if (body.get("stream_options") or {}).get("include_usage"):
                    prompt_chars = sum(len(str(m.get("content") or "")) for m in body.get("messages", []))
                    usage = {
                        "prompt_tokens": max(1, prompt_chars // 4),
                        "completion_tokens": max(1, len(content) // 4),
                        "total_tokens": max(1, prompt_chars // 4) + max(1, len(content) // 4),
                    }
                    pieces.append(chunk({}, usage=usage))
                pieces.append(b"data: [DONE]\n\n")
                seconds = step.get("stream_seconds")
                if seconds is None:
                    seconds = random.uniform(*llm.stream_seconds)
                pause = float(seconds) / max(1, len(pieces) - 1)
                drop_after = step.get("drop_after")
                error_after = step.get("error_after")
                cut_after = step.get("cut_after")
                if cut_after is not None:
                    pieces = [*pieces[: int(cut_after)], b"data: [DONE]\n\n"]
                if error_after is not None:
                    error = {"error": {"message": "the model crashed", "type": "server_error"}}
                    pieces = [*pieces[: int(error_after)], b"data: " + json.dumps(error).encode() + b"\n\n"]
                for n, piece in enumerate(pieces):
                    if drop_after is not None and n >= int(drop_after):
                        self.close_connection = True
                        self.connection.shutdown(2)
                        return
                    if n and pause:
                        time.sleep(pause)
                    if n == step.get("hold_after"):
                        llm.released.wait(timeout=600)
                    self._chunk(piece)
                self._chunk(b"")

            def _embeddings(self, body: dict[str, Any]) -> None:
                with llm.lock:
                    llm.requests.append(("embeddings", body))
                    step = llm.scripts["embeddings"].popleft() if llm.scripts["embeddings"] else {}
                if "status" in step:
                    self._send(int(step["status"]), b'{"error": {"message": "scripted error"}}')
                    return
                texts = body.get("input") or []
                texts = [texts] if isinstance(texts, str) else texts
                data = [
                    {"object": "embedding", "index": i, "embedding": hashed_embedding(str(t))}
                    for i, t in enumerate(texts)
                ]
                payload = {
                    "object": "list",
                    "data": data,
                    "model": body.get("model", "scripted-embed"),
                    "usage": {"prompt_tokens": len(texts), "total_tokens": len(texts)},
                }
                self._send(200, json.dumps(payload).encode())

            def _moderations(self, body: dict[str, Any]) -> None:
                with llm.lock:
                    llm.requests.append(("moderations", body))
                    step = llm.scripts["moderations"].popleft() if llm.scripts["moderations"] else {}
                if step.get("delay"):
                    time.sleep(float(step["delay"]))
                if step.get("drop"):
                    self.close_connection = True
                    self.connection.close()
                    return
                if "status" in step:
                    err = step.get("body") or {"error": {"message": "scripted error", "type": "server_error"}}
                    self._send(int(step["status"]), json.dumps(err).encode())
                    return
                if "raw" in step:
                    self._send(200, str(step["raw"]).encode())
                    return
                status, payload = default_moderation(body, step)
                # The client may have given up waiting (a scripted delay past its timeout).
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self._send(status, json.dumps(payload).encode())

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    with llm.lock:
                        llm.models_asked += 1
                    entries = [
                        {"id": name, "object": "model", "owned_by": "tests", **llm.models_meta} for name in llm.models
                    ]
                    self._send(200, json.dumps({"object": "list", "data": entries}).encode())
                    return
                self._send(404, b'{"error": {"message": "not found"}}')

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if self.path.rstrip("/").endswith("/embeddings"):
                    self._embeddings(body)
                    return
                if self.path.rstrip("/").endswith("/moderations"):
                    self._moderations(body)
                    return
                if self.path.rstrip("/").endswith("/api/show"):
                    if llm.ollama_show is None:
                        self._send(404, b'{"error": "not found"}')
                    else:
                        self._send(200, json.dumps(llm.ollama_show).encode())
                    return
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, b'{"error": {"message": "not found"}}')
                    return
                kind = classify(body)
                with llm.lock:
                    llm.requests.append((kind, body))
                    scripted = bool(llm.scripts[kind])
                step = llm._next(kind, body)
                if step.get("delay"):
                    time.sleep(float(step["delay"]))
                if step.get("drop"):
                    self.close_connection = True
                    self.connection.close()
                    return
                if "status" in step:
                    err = step.get("body") or {"error": {"message": "scripted error", "type": "server_error"}}
                    self._send(int(step["status"]), json.dumps(err).encode())
                    return
                if "raw" in step:
                    self._send(200, str(step["raw"]).encode())
                    return
                if any(m.get("role") == "assistant" and m.get("content") is None for m in body.get("messages", [])):
                    # llama-cpp-python's server (pydantic) refuses a null assistant content.
                    err = {"error": {"message": "Input should be a valid string", "type": "server_error"}}
                    self._send(500, json.dumps(err).encode())
                    return
                response_format = (body.get("response_format") or {}).get("type")
                if response_format in llm.refused_formats:
                    detail = (
                        "1 validation error: {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
                        f"'msg': \"Input should be 'text' or 'json_object'\", 'input': '{response_format}'}}"
                    )
                    err = {"error": {"message": detail, "type": "internal_server_error"}}
                    if scripted:  # the refused request does not consume the scripted answer
                        with llm.lock:
                            llm.scripts[kind].appendleft(step)
                    self._send(llm.format_refusal_status, json.dumps(err).encode())
                    return
                refusal = llm.context_refusal(body)
                if refusal is not None and body.get("stream") and llm.context_error == "llama-cpp-python":
                    # It fails the stream after the headers (the error is raised in the
                    # generator): the body ends before its last chunk, or is empty.
                    with llm.lock:
                        llm.scripts[kind].appendleft(step)
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    if llm.cut_failed_streams:
                        self.close_connection = True
                        self.connection.shutdown(2)
                    else:
                        self._chunk(b"")
                    return
                if refusal is not None:
                    with llm.lock:  # the refused prompt does not consume the scripted answer
                        llm.scripts[kind].appendleft(step)
                    self._send(refusal[0], json.dumps(refusal[1]).encode())
                    return
                step = llm.cut(body, step)
                if body.get("stream"):
                    self._stream(body, step)
                    return
                message: dict[str, Any] = {"role": "assistant", "content": step.get("content")}
                finish = step.get("finish") or "stop"
                if step.get("tool_calls"):
                    message["tool_calls"] = [
                        {
                            "id": f"call_{i}_{len(llm.requests)}",
                            "type": "function",
                            "function": {"name": c["name"], "arguments": c["arguments"]},
                        }
                        for i, c in enumerate(step["tool_calls"])
                    ]
                    finish = "tool_calls"
                prompt_chars = sum(len(str(m.get("content") or "")) for m in body.get("messages", []))
                if llm.cut_at_window:
                    prompt_chars = llm.prompt_tokens(body) * 4
                completion = str(step.get("content") or "")
                payload = {
                    "id": f"chatcmpl-{len(llm.requests)}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": body.get("model", "scripted"),
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                    "usage": {
                        "prompt_tokens": max(1, prompt_chars // 4),
                        "completion_tokens": max(1, len(completion) // 4),
                        "total_tokens": max(1, prompt_chars // 4) + max(1, len(completion) // 4),
                    },
                }
                self._send(200, json.dumps(payload).encode())

        return Handler


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="Run the scripted OpenAI-compatible server.")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    llm = ScriptedLLM()
    if args.port:
        llm.server.server_close()
        llm.server = ThreadingHTTPServer(("127.0.0.1", args.port), llm._handler())
    print(llm.base_url, flush=True)
    llm.server.serve_forever()
