"""The demo model: a small OpenAI-compatible server with scripted answers, so that a first run
(`make run` with no model configured) shows the whole product, memory included, without bringing
a model. It is not a tutor: its chat replies say so, quote the student, and name the memories the
prompt showed it, which is what a first run needs to see.

It answers `GET /v1/models` (one model, DEMO_MODEL_ID) and `POST /v1/chat/completions`, streamed
or not, telling each of the product's prompts apart by its first words (`KIND_MARKERS`: a test
checks them against the prompts themselves):

- the chat: a short reply, in the student's language (English or French); asked for a quiz
  ("quiz" in the message) with the create_quiz tool offered, it calls the tool with a short
  quiz on adding fractions, then says the quiz is below;
- a conversation's summary: JSON {"title", "content"} within the product's rules (4-10 words,
  2-4 sentences), from the student's first message;
- compression and a summary's part notes: one plain sentence;
- grading a short answer: right when it matches the expected answer once case, spaces and
  punctuation are set aside;
- extraction and merges: nothing extracted, the first memory's title kept;
- the safety classifier: nothing of concern (the offline screen still runs);
- a question about a student or a class: one sentence per piece of evidence shown, citing it.

It uses the standard library only and never imports the product: `python -m llm.demo_model
--port 8009` starts it (scripts/run_dev.sh does, and sets LLM_DEMO_MODEL=1 for the pages and
the start-up banner). Every answer is computed from the request alone; nothing is stored.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DEMO_MODEL_ID = "demo"

# The first words of each of the product's system prompts (memory.prompts, conversations.prompts,
# learning.prompts, memory.lifecycle_prompts, safety.backends, insights.prompts); any other
# request is the chat.
KIND_MARKERS = {
    "summary": "You write the long-term memory",
    "compression": "You compress a long tutoring conversation",
    "summary_part": "You take notes on one part",
    "grading": "You grade a student's short answer",
    "extraction": "You extract what lasts",
    "merge": "You merge near-duplicate memories",
    "safety": "You screen texts for a tutoring service used by children.",
    "ask": "You answer a question about what a tutoring service knows of its students.",
}

_MEMORY = re.compile(r"<memory\b[^>]*>(.*?)</memory>", re.DOTALL)
_STUDENT_MESSAGE = re.compile(r'<message\b[^>]*role="student"[^>]*>(.*?)</message>', re.DOTALL)
_ELEMENT = re.compile(r"<(question|expected_answer|student_answer)\b[^>]*>(.*?)</\1>", re.DOTALL)
_ASK_BLOCK = re.compile(r'<student_memories student="([^"]*)">(.*?)</student_memories>', re.DOTALL)
_ASK_ITEM = re.compile(r'<memory ref="([^"]+)"[^>]*>(.*?)</memory>', re.DOTALL)
_SENTENCE_MARKS = re.compile(r"[.!?\u2026\"\u201c\u201d<>]+")


def classify(body: dict[str, Any]) -> str:
    """The kind of a chat completion request, from its first message (a system prompt)."""
    messages = body.get("messages") or []
    first = messages[0].get("content") if messages and isinstance(messages[0], dict) else ""
    if isinstance(first, str):
        for kind, marker in KIND_MARKERS.items():
            if first.startswith(marker):
                return kind
    return "chat"


def _text(content: Any) -> str:
    """A message's text: a string, or the text parts of a multi-part content."""
    if isinstance(content, list):
        return " ".join(str(part.get("text") or "") for part in content if isinstance(part, dict))
    return str(content or "")


def _words(text: str, limit: int) -> str:
    """The first `limit` words of an untrusted text, on one line, with no sentence marks (so that
    a quote never adds a sentence to a summary)."""
    return " ".join(_SENTENCE_MARKS.sub(" ", html.unescape(text)).split()[:limit])


def _french(body: dict[str, Any]) -> bool:
    system = _text((body.get("messages") or [{}])[0].get("content"))
    return "French" in system


def chat_reply(body: dict[str, Any]) -> str:
    """The chat's reply: says it is the demo model, quotes the student's last message, and names
    the memories its prompt showed (or says how one is made)."""
    messages = body.get("messages") or []
    said = next((_text(m.get("content")) for m in reversed(messages) if m.get("role") == "user"), "")
    shown = " ".join(_text(m.get("content")) for m in messages if m.get("role") == "system")
    titles = [html.unescape(t.strip().split("\n", 1)[0]) for t in _MEMORY.findall(shown)]
    titles = [t for t in titles if t][:3]
    quote = _words(said, 25)
    if _french(body):
        lines = [f"(Modèle de démonstration : réponses préparées, pas un vrai tuteur.) Vous avez écrit « {quote} »."]
        if titles:
            lines.append("Je me souviens de nos séances : " + " ; ".join(titles) + ".")
        else:
            lines.append(
                "Je n'ai encore aucun souvenir de vous : terminez cette conversation et son résumé en sera un."
            )
        lines.append("Un vrai modèle vous répondrait pas à pas ; la page dit comment en brancher un.")
    else:
        lines = [f"(Demo model: scripted replies, not a real tutor.) You wrote “{quote}”."]
        if titles:
            lines.append("From our past sessions I remember: " + "; ".join(titles) + ".")
        else:
            lines.append("I have no memories of you yet: end this conversation and its summary becomes one.")
        lines.append("A real model would answer you step by step; the page says how to plug one in.")
    return " ".join(lines)


QUIZ_TOOL = "create_quiz"


def quiz_arguments(french: bool) -> dict[str, Any]:
    """The create_quiz tool's arguments (learning.validation): two questions on adding fractions."""
    return {
        "topic": "Quiz de démonstration" if french else "Demo quiz",
        "skill": "additionner des fractions" if french else "adding fractions",
        "questions": [
            {
                "kind": "multiple_choice",
                "prompt": "Combien font 1/2 + 1/4 ?" if french else "What is 1/2 + 1/4?",
                "choices": ["3/4", "2/6", "1/8"],
                "answer": "3/4",
                "explanation": "1/2 = 2/4, et 2/4 + 1/4 = 3/4." if french else "1/2 = 2/4, and 2/4 + 1/4 = 3/4.",
            },
            {
                "kind": "numeric",
                "prompt": "Combien font 0,5 + 0,25 ?" if french else "What is 0.5 + 0.25?",
                "answer": 0.75,
                "explanation": "0,5 + 0,25 = 0,75." if french else "0.5 + 0.25 = 0.75.",
            },
        ],
    }


def quiz_call(body: dict[str, Any]) -> dict[str, Any] | None:
    """A create_quiz call when the student's last message asks for a quiz and the tool is offered."""
    messages = body.get("messages") or []
    last = messages[-1] if messages else {}
    offered = {str((tool.get("function") or {}).get("name")) for tool in body.get("tools") or []}
    if last.get("role") != "user" or QUIZ_TOOL not in offered or "quiz" not in _text(last.get("content")).lower():
        return None
    arguments = json.dumps(quiz_arguments(_french(body)), ensure_ascii=False)
    function = {"name": QUIZ_TOOL, "arguments": arguments}
    return {"id": f"call_{uuid.uuid4().hex[:12]}", "type": "function", "function": function}


def after_tools(body: dict[str, Any]) -> str:
    """The reply once the tools ran (the last message is a tool's result)."""
    if _french(body):
        return "(Modèle de démonstration.) Voici un petit quiz : répondez ci-dessous, il est corrigé aussitôt."
    return "(Demo model.) Here is a short quiz: answer it below, and it is graded at once."


def summary(body: dict[str, Any]) -> dict[str, str]:
    """A conversation's summary within the product's rules (memory.validation): a title of 4 to
    10 words, a content of 2 sentences, from the student's first message."""
    transcript = _text((body.get("messages") or [{}, {}])[-1].get("content"))
    first = next(iter(_STUDENT_MESSAGE.findall(transcript)), "")
    topic = _words(first, 6)
    if _french(body):
        title = f"Séance de démonstration sur {topic}" if topic else "Séance de démonstration avec le tuteur"
        quoted = f" : « {_words(first, 20)} »" if topic else ""
        content = (
            f"L'élève a commencé par demander{quoted}. Ce résumé a été écrit par le modèle de démonstration, "
            "qui ne juge pas ce que l'élève a trouvé facile ou difficile."
        )
    else:
        title = f"Demo session about {topic}" if topic else "Demo session with the tutor"
        quoted = f": “{_words(first, 20)}”" if topic else ""
        content = (
            f"The student started by asking{quoted}. The demo model wrote this summary, and it does not "
            "judge what the student found easy or hard."
        )
    return {"title": title, "content": content}


def grading(body: dict[str, Any]) -> dict[str, Any]:
    """Right when the answer equals the expected one, case, spaces and punctuation aside."""
    fields = dict(_ELEMENT.findall(_text((body.get("messages") or [{}, {}])[-1].get("content"))))

    def plain(text: str) -> str:
        return " ".join(re.sub(r"[^\w\s]", " ", html.unescape(text).lower()).split())

    correct = bool(fields.get("expected_answer")) and plain(fields.get("student_answer", "")) == plain(
        fields.get("expected_answer", "")
    )
    if _french(body):
        feedback = "C'est la réponse attendue." if correct else "Ce n'est pas la réponse attendue."
    else:
        feedback = "That is the expected answer." if correct else "That is not the expected answer."
    return {"correct": correct, "feedback": feedback}


def merge(body: dict[str, Any]) -> dict[str, Any]:
    """The first memory's title, the longest content, at a confidence that keeps them apart."""
    texts = _MEMORY.findall(_text(body["messages"][-1]["content"]))
    shown = [[*html.unescape(t).split("\n", 1), ""] for t in texts]
    return {
        "title": shown[0][0].strip() if shown else "Memories merged by the demo model",
        "content": max((parts[1].strip() for parts in shown), key=len, default=""),
        "confidence": 0.1,
        "reason": "The demo model does not merge memories.",
    }


def ask(body: dict[str, Any]) -> str:
    """One sentence per piece of evidence shown (at most three per student), each citing it."""
    messages = body.get("messages") or [{}]
    system = _text(messages[0].get("content"))
    french = "Write in French" in system
    sentences = []
    blocks = _ASK_BLOCK.findall(system)
    for username, inner in blocks:
        for ref, text in _ASK_ITEM.findall(inner)[:3]:
            title = html.unescape(text.strip().split("\n", 1)[0]).rstrip(".")
            who = f"{username}: " if len(blocks) > 1 else ""
            said = f"D'après les éléments, {title}" if french else f"The evidence says: {title}"
            sentences.append(f"{who}{said} [{ref}].")
    if not sentences:
        sentences.append(
            "Les éléments disponibles ne répondent pas à cette question."
            if french
            else "The evidence does not answer this question."
        )
    return " ".join(sentences)


def answer(body: dict[str, Any]) -> str:
    """The content of the answer to a chat completion request."""
    kind = classify(body)
    if kind == "summary":
        return json.dumps(summary(body), ensure_ascii=False)
    if kind == "compression":
        return "Earlier, the student and the demo model exchanged a few messages."
    if kind == "summary_part":
        return "In this part the student wrote to the demo model."
    if kind == "grading":
        return json.dumps(grading(body), ensure_ascii=False)
    if kind == "extraction":
        return json.dumps({"facts": [], "card": []})
    if kind == "merge":
        return json.dumps(merge(body), ensure_ascii=False)
    if kind == "safety":
        reason = "The demo model screens nothing."
        return json.dumps({"category": "none", "severity": "none", "confidence": 0.5, "reason": reason})
    if kind == "ask":
        return ask(body)
    messages = body.get("messages") or [{}]
    if messages[-1].get("role") == "tool":
        return after_tools(body)
    return chat_reply(body)


def _usage(body: dict[str, Any], content: str) -> dict[str, int]:
    """Tokens counted as characters / 4, like a rough tokenizer."""
    prompt = max(1, sum(len(_text(m.get("content"))) for m in body.get("messages") or []) // 4)
    completion = max(1, len(content) // 4)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _capped(content: str, body: dict[str, Any]) -> tuple[str, str]:
    """The content cut to the request's max_tokens (4 characters a token), and the finish reason."""
    limit = body.get("max_tokens") or body.get("max_completion_tokens")
    if isinstance(limit, int) and limit > 0 and len(content) > limit * 4:
        return content[: limit * 4], "length"
    return content, "stop"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body are written separately: without TCP_NODELAY each answer waits for a delayed ACK.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the product logs its own calls."""

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            model = {"id": DEMO_MODEL_ID, "object": "model", "owned_by": "tutor-demo"}
            self._send(200, {"object": "list", "data": [model]})
            return
        self._send(404, {"error": {"message": "not found", "type": "not_found"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            self._send(400, {"error": {"message": "the body is not JSON", "type": "invalid_request_error"}})
            return
        if not self.path.rstrip("/").endswith("/chat/completions") or not isinstance(body, dict):
            self._send(404, {"error": {"message": "not found", "type": "not_found"}})
            return
        call = quiz_call(body) if classify(body) == "chat" else None
        content, finish = ("", "tool_calls") if call else _capped(answer(body), body)
        ident = f"chatcmpl-{uuid.uuid4().hex[:12]}"
        model = str(body.get("model") or DEMO_MODEL_ID)
        if body.get("stream"):
            self._stream(body, ident, model, content, finish, call)
            return
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if call:
            message["tool_calls"] = [call]
        choice = {"index": 0, "message": message, "finish_reason": finish}
        payload = {"id": ident, "object": "chat.completion", "created": int(time.time()), "model": model}
        self._send(200, {**payload, "choices": [choice], "usage": _usage(body, content)})

    def _stream(
        self, body: dict[str, Any], ident: str, model: str, content: str, finish: str, call: dict[str, Any] | None
    ) -> None:
        """Server-Sent Events, as OpenAI streams: a word a chunk, the finish, the usage if asked."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

        def event(choices: list[dict[str, Any]], **extra: Any) -> None:
            payload = {"id": ident, "object": "chat.completion.chunk", "created": int(time.time()), "model": model}
            data = b"data: " + json.dumps({**payload, "choices": choices, **extra}).encode() + b"\n\n"
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        event([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])
        for word in re.findall(r"\S+\s*|\s+", content):
            event([{"index": 0, "delta": {"content": word}, "finish_reason": None}])
        if call:
            event([{"index": 0, "delta": {"tool_calls": [{"index": 0, **call}]}, "finish_reason": None}])
        event([{"index": 0, "delta": {}, "finish_reason": finish}])
        if (body.get("stream_options") or {}).get("include_usage"):
            event([], usage=_usage(body, content))
        done = b"data: [DONE]\n\n"
        self.wfile.write(f"{len(done):x}\r\n".encode() + done + b"\r\n0\r\n\r\n")
        self.wfile.flush()


def server(host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    """The demo model's server, bound (port 0: any free port), not yet serving."""
    httpd = ThreadingHTTPServer((host, port), Handler)
    httpd.daemon_threads = True
    return httpd


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve the demo model (scripted answers) on an OpenAI-compatible API.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8009)
    args = parser.parse_args(argv)
    httpd = server(args.host, args.port)
    host, port = httpd.server_address[:2]
    print(f"demo model at http://{host!s}:{port}/v1", flush=True)
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        httpd.server_close()


if __name__ == "__main__":
    main()
