"""A scriptable chat-completions server on 127.0.0.1: the real protocol over a real socket."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Step:
    """One reply: a status, headers and a body, after `delay` seconds. `when`: only for requests
    it accepts (others fall through to the next step)."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    when: Callable[[dict[str, Any]], bool] | None = None


def answer(
    content: str | dict[str, Any], *, prompt: int = 1200, completion: int = 300, finish: str = "stop"
) -> Step:
    """A chat completion whose message content is `content` (a dict is sent as its JSON)."""
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    body = {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": 0,
        "model": "stub-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }
    return Step(body=json.dumps(body, ensure_ascii=False).encode())


def status(code: int, headers: dict[str, str] | None = None, body: str = '{"error": "stub"}') -> Step:
    return Step(status=code, body=body.encode(), headers=headers or {})


def rejects_json_schema() -> Step:
    """What a server without json_schema support answers to it (llama.cpp builds before 2024 did)."""
    return Step(
        status=400,
        body=b'{"error": {"message": "response_format type json_schema is not supported"}}',
        when=lambda body: body.get("response_format", {}).get("type") == "json_schema",
    )


class Stub:
    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.default: Step = status(500, body='{"error": "no step scripted"}')
        self.requests: list[dict[str, Any]] = []  # {"path", "headers", "body"}
        self._lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def script(self, *steps: Step, default: Step | None = None) -> None:
        with self._lock:
            self.steps = list(steps)
            if default is not None:
                self.default = default

    def _next(self, body: dict[str, Any]) -> Step:
        with self._lock:
            for i, step in enumerate(self.steps):
                if step.when is None or step.when(body):
                    if step.when is None:
                        return self.steps.pop(i)
                    return step
            return self.default

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:  # http.server's name
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {}
                with stub._lock:
                    stub.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                step = stub._next(body) if self.path.endswith("/chat/completions") else status(404)
                if step.delay:
                    time.sleep(step.delay)
                try:
                    self.send_response(step.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(step.body)))
                    for k, v in step.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(step.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

        return Handler


@contextmanager
def running() -> Iterator[Stub]:
    stub = Stub()
    thread = threading.Thread(target=stub.server.serve_forever, args=(0.05,), name="stub-llm", daemon=True)
    thread.start()
    try:
        yield stub
    finally:
        stub.server.shutdown()
        stub.server.server_close()
        thread.join(5)
