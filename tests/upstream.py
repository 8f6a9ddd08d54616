"""A scripted model server for the proxy's tests: Anthropic Messages, OpenAI Responses and
Chat Completions, streaming (SSE) and not, on loopback. It keeps every request it got (path,
headers, raw body) and every answer's exact bytes, so a test can check what reached it and
that the client got the same bytes back.

A request whose model is `rate-limited` gets 429 with the provider's error body.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TEXT = "Noted: the tests run with pytest -x."


def _sse(events: list[tuple[str | None, dict]]) -> bytes:
    out = []
    for name, data in events:
        head = f"event: {name}\n" if name else ""
        out.append(f"{head}data: {json.dumps(data)}\n\n")
    return "".join(out).encode()


def anthropic(body: dict) -> tuple[str, bytes]:
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": body["model"],
               "content": [{"type": "text", "text": TEXT}], "stop_reason": "end_turn",
               "usage": {"input_tokens": 10, "output_tokens": 8}}  # fmt: skip
    if not body.get("stream"):
        return "application/json", json.dumps(message).encode()
    start = {**message, "content": [], "stop_reason": None}
    return "text/event-stream", _sse([
        ("message_start", {"type": "message_start", "message": start}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "text_delta", "text": TEXT}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                           "usage": {"output_tokens": 8}}),
        ("message_stop", {"type": "message_stop"}),
    ])  # fmt: skip


def responses(body: dict) -> tuple[str, bytes]:
    item = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": TEXT, "annotations": []}]}  # fmt: skip
    done = {"id": "resp_1", "object": "response", "status": "completed", "model": body["model"],
            "output": [item]}  # fmt: skip
    if not body.get("stream"):
        return "application/json", json.dumps(done).encode()
    return "text/event-stream", _sse([
        ("response.created", {"type": "response.created", "response": {**done, "output": [],
                                                                         "status": "in_progress"}}),
        ("response.output_text.delta", {"type": "response.output_text.delta", "delta": TEXT}),
        ("response.completed", {"type": "response.completed", "response": done}),
    ])  # fmt: skip


def chat(body: dict) -> tuple[str, bytes]:
    if not body.get("stream"):
        return "application/json", json.dumps({
            "id": "chatcmpl-1", "object": "chat.completion", "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": TEXT},
                         "finish_reason": "stop"}]}).encode()  # fmt: skip
    chunks = [
        {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "model": body["model"],
            "choices": [{"index": 0, "delta": {"role": "assistant", "content": TEXT}}],
        }
    ]
    return "text/event-stream", _sse([(None, c) for c in chunks]) + b"data: [DONE]\n\n"


ANSWERS = {"/v1/messages": anthropic, "/v1/responses": responses, "/v1/chat/completions": chat}


class Upstream:
    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.sent: list[bytes] = []
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms stall

            def log_message(self, *args: object) -> None:
                pass

            def _answer(self, status: int, ctype: str, data: bytes) -> None:
                upstream.sent.append(data)
                self.send_response(status)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(data)))
                self.send_header("x-request-id", f"req_{len(upstream.sent)}")
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                upstream.requests.append({"method": "GET", "path": self.path,
                                          "headers": dict(self.headers), "raw": b""})  # fmt: skip
                self._answer(200, "application/json", b'{"data":[{"id":"stub-model"}]}')

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                upstream.requests.append({"method": "POST", "path": self.path,
                                          "headers": dict(self.headers), "raw": raw})  # fmt: skip
                body = json.loads(raw) if raw else {}
                if body.get("model") == "rate-limited":
                    error = {"type": "error", "error": {"type": "rate_limit_error",
                                                         "message": "slow down"}}  # fmt: skip
                    self._answer(429, "application/json", json.dumps(error).encode())
                    return
                answer = ANSWERS.get(self.path)
                if answer is None:
                    self._answer(200, "application/json", b'{"input_tokens": 42}')
                    return
                self._answer(200, *answer(body))

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def bodies(self) -> list[dict]:
        return [json.loads(r["raw"]) for r in self.requests if r["raw"]]
