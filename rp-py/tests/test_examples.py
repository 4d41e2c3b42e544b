"""examples/python/tavern.py: the scripted session, and the same session
against an OpenAI-compatible endpoint (a stand-in server on this machine's
loopback, answering from a script)."""

import importlib.util
import io
import json
import threading
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "python" / "tavern.py"
# The picture of the README: what the scripted session draws.
PICTURE = ROOT / "docs" / "tavern-graph.svg"


@pytest.fixture(scope="module")
def tavern() -> ModuleType:
    spec = importlib.util.spec_from_file_location("tavern_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_scripted_session(
    tavern: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RP_LLM_BASE_URL", raising=False)
    out = io.StringIO()
    svg = tmp_path / "tavern.svg"
    assert tavern.main([str(svg)], out=out) == 0
    text = out.getvalue()
    assert "Playing the tavern with a scripted model." in text
    assert "Tobias Reed: Lights. Green ones" in text
    assert "Mira Holt: Another for Tobias?" in text
    assert "(Wren walks over to the bar.)" in text
    assert '"type": "feeling", "who": "Tobias Reed"' in text and "rejected" not in text
    # The world afterwards, a prompt with the reason for each piece, the picture.
    assert "  Wren: the bar (stools); leaning on the counter, curious" in text
    # The world file's Tobias → Wren (affinity 0.2), one step warmer and more trusting.
    assert "  Tobias Reed → Wren: affinity +0.30, trust +0.10" in text
    assert "The prompt of Tobias Reed:" in text
    assert "<- the speaker's state" in text
    drawn = svg.read_text(encoding="utf-8")
    assert ET.fromstring(drawn).tag.endswith("svg")
    assert drawn == PICTURE.read_text(encoding="utf-8"), (
        f"{PICTURE} is stale: python examples/python/tavern.py {PICTURE.relative_to(ROOT)}"
    )


class FakeEndpoint(BaseHTTPRequestHandler):
    """``POST /v1/chat/completions``: a reply, or for a JSON-schema request
    (the state-update pass) a report; every request body is kept."""

    requests: list[tuple[str, dict[str, Any]]] = []

    def do_POST(self) -> None:  # noqa: N802 - the name http.server calls
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        FakeEndpoint.requests.append((self.headers.get("Authorization", ""), body))
        if self.path != "/v1/chat/completions":
            self.send_error(404)
            return
        if "response_format" in body:
            # Two passes in the booth, then one at the bar.
            speaker = "Mira Holt" if len(FakeEndpoint.requests) >= 5 else "Tobias Reed"
            report = {"type": "feeling", "who": speaker, "toward": "Wren", "trust": "more"}
            content = json.dumps({"reports": [report]})
        else:
            content = "Aye, the lights again."
        answer = {
            "model": body["model"],
            "choices": [{"message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 8},
        }
        data = json.dumps(answer).encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def endpoint() -> Iterator[str]:
    FakeEndpoint.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeEndpoint)
    thread = threading.Thread(target=server.serve_forever)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_the_session_against_an_openai_compatible_endpoint(
    tavern: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, endpoint: str
) -> None:
    monkeypatch.setenv("RP_LLM_BASE_URL", endpoint)
    monkeypatch.setenv("RP_LLM_MODEL", "tiny-model")
    monkeypatch.setenv("RP_LLM_API_KEY", "secret")
    out = io.StringIO()
    assert tavern.main([str(tmp_path / "graph.svg")], out=out) == 0
    text = out.getvalue()
    assert f"Playing the tavern with tiny-model at {endpoint}." in text
    assert "Tobias Reed: Aye, the lights again." in text
    assert "Mira Holt: Aye, the lights again." in text
    assert "rejected" not in text

    # Three turns of a reply and a state-update pass each, and the booth's
    # scene closing when Wren leaves it for the bar: a summary per witness.
    assert len(FakeEndpoint.requests) == 8
    summaries = [
        body["messages"][-1]["content"]
        for _, body in FakeEndpoint.requests
        if body["messages"][-1]["content"].endswith("memory of the scene.")
    ]
    assert summaries == [
        "Write Wren's memory of the scene.",
        "Write Tobias Reed's memory of the scene.",
    ]
    for authorization, body in FakeEndpoint.requests:
        assert authorization == "Bearer secret"
        assert body["model"] == "tiny-model"
        assert [m["role"] for m in body["messages"]][0] == "system"
    reply = FakeEndpoint.requests[0][1]
    assert {t["function"]["name"] for t in reply["tools"]} == {"roll_dice", "roll_effects"}
    assert all(t["type"] == "function" for t in reply["tools"])
    update = FakeEndpoint.requests[1][1]
    assert update["response_format"]["type"] == "json_schema"
    assert update["temperature"] == 0.2
    assert "Tobias Reed → Wren: affinity +0.20, trust +0.20" in text
    assert "Mira Holt → Wren: affinity -0.10, trust -0.20" in text


def test_the_chat_completions_client_sends_tool_calls_back(
    tavern: ModuleType, endpoint: str
) -> None:
    client = tavern.ChatCompletions(endpoint, "m")
    result = client(
        {
            "purpose": {"kind": "reply", "speaker": 1},
            "messages": [
                {"role": "user", "content": "roll"},
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [{"id": "a", "name": "roll_dice", "arguments": {"n": "1d6"}}],
                },
                {"role": "tool", "content": '{"total": 4}', "tool_call_id": "a"},
            ],
            "params": {"max_tokens": 50},
        }
    )
    assert result == {
        "text": "Aye, the lights again.",
        "model": "m",
        "prompt_tokens": 120,
        "completion_tokens": 8,
    }
    (_, body), = FakeEndpoint.requests
    assert body["max_tokens"] == 50
    call = body["messages"][1]["tool_calls"][0]
    assert call == {
        "id": "a",
        "type": "function",
        "function": {"name": "roll_dice", "arguments": '{"n": "1d6"}'},
    }
    assert body["messages"][2]["tool_call_id"] == "a"
