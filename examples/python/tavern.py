"""The tavern from Python: a short session, the world, a prompt, the picture.

    pip install ./rp-py
    python examples/python/tavern.py [GRAPH.svg]

Plays three lines of the demo world (examples/tavern.toml) as Wren, the
player: two to Tobias in the corner booth, then, after a walk to the bar, one
to Mira. A scripted model writes the characters' lines and the state-update
pass after each turn (Tobias warms to the stranger who buys him a cider), so
no model is needed. Then it prints who is where, the prompt Tobias would be
given now with why each piece is in it, and writes the relationship graph as
an SVG (``tavern.svg``, or the path given).

With ``RP_LLM_BASE_URL`` set to an OpenAI-compatible endpoint (such as
``http://localhost:8080/v1``), the lines and the state-update pass come from
that model instead: ``RP_LLM_MODEL`` names the model (default ``"default"``)
and ``RP_LLM_API_KEY``, when set, is sent as a bearer token. It uses the
standard library only (``urllib``).
"""

from __future__ import annotations

import json
import os
import sys
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Optional, TextIO

from rp_engine import ScriptedGenerator, World

TAVERN = Path(__file__).resolve().parents[1] / "tavern.toml"
MINUTE = 60_000

# What Wren says, and when (host clock, ms).
LINES = [
    (1 * MINUTE, "Evening. Seen anything odd on the marsh, Tobias?"),
    (2 * MINUTE, "A cider for the rest of that tale, Tobias?"),
]
AT_THE_BAR = (3 * MINUTE, "Mira, a cider for the fisherman in the booth, please.")

# The turn options: the state-update pass runs after the replies.
OPTIONS: dict[str, Any] = {"updates": {"enabled": True}}

Generate = Callable[[dict[str, Any]], Any]


def scripted_model(world: World) -> ScriptedGenerator:
    """A stand-in for a model: the characters' lines and the state-update
    passes of the session, in order."""
    model = ScriptedGenerator()
    model.script(
        world.entity_id("Tobias Reed"),
        [
            "Lights. Green ones, low over the reeds, moving against the wind.",
            "Now you're talking. Sit, and mind the draught from that window.",
        ],
    )
    model.script(world.entity_id("Mira Holt"), ["Another for Tobias? On your coin, stranger."])
    passes = [
        {"reports": [{"type": "learned", "who": "Wren", "about": "Tobias Reed",
                      "fact": "saw green lights moving on the marsh"}]},
        {"reports": [{"type": "feeling", "who": "Tobias Reed", "toward": "Wren",
                      "affinity": "warmer", "trust": "more"},
                     {"type": "state", "who": "Tobias Reed", "mood": "expansive"}]},
        {"reports": [{"type": "feeling", "who": "Mira Holt", "toward": "Wren",
                      "affinity": "warmer"}]},
    ]  # fmt: skip
    model.script_purpose("state_update", [json.dumps(p) for p in passes])
    # When a character speaks first, between turns (World.advance).
    model.script_purpose("initiate", ["You're still here, stranger. The rain's not letting up."])
    return model


class ChatCompletions:
    """A ``generate`` callable for an OpenAI-compatible ``/chat/completions``
    endpoint, over ``urllib``: the request's messages, sampling, tools and
    JSON schema go out in that API's form, and its answer comes back as a
    result dict (text, tool calls, token counts, model)."""

    def __init__(
        self, base_url: str, model: str, api_key: Optional[str] = None, timeout: float = 120.0
    ) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.api_key = api_key
        self.timeout = timeout

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [self._message(m) for m in request["messages"]],
        }
        body.update(request.get("params") or {})
        if request.get("tools"):
            body["tools"] = [{"type": "function", "function": t} for t in request["tools"]]
        if request.get("json_schema") is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "answer", "schema": request["json_schema"]},
            }
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        post = urllib.request.Request(
            self.url, data=json.dumps(body).encode("utf-8"), headers=headers, method="POST"
        )
        with urllib.request.urlopen(post, timeout=self.timeout) as response:
            answer: dict[str, Any] = json.load(response)
        message = answer["choices"][0]["message"]
        result: dict[str, Any] = {
            "text": message.get("content") or "",
            "model": answer.get("model") or self.model,
        }
        usage = answer.get("usage") or {}
        for field in ("prompt_tokens", "completion_tokens"):
            if isinstance(usage.get(field), int):
                result[field] = usage[field]
        calls = message.get("tool_calls") or []
        if calls:
            result["tool_calls"] = [
                {
                    "id": call["id"],
                    "name": call["function"]["name"],
                    "arguments": call["function"]["arguments"],
                }
                for call in calls
            ]
        return result

    @staticmethod
    def _message(message: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {"role": message["role"], "content": message["content"]}
        if "tool_call_id" in message:
            out["tool_call_id"] = message["tool_call_id"]
        if message.get("tool_calls"):
            out["tool_calls"] = [
                {
                    "id": call["id"],
                    "type": "function",
                    "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])},
                }
                for call in message["tool_calls"]
            ]
        return out


def model_from_environment(world: World) -> tuple[Generate, str]:
    """The model to play with, and its description: the endpoint of
    ``RP_LLM_BASE_URL`` when set, else the scripted one."""
    base_url = os.environ.get("RP_LLM_BASE_URL")
    if base_url:
        model = os.environ.get("RP_LLM_MODEL", "default")
        key = os.environ.get("RP_LLM_API_KEY")
        return ChatCompletions(base_url, model, key), f"{model} at {base_url}"
    return scripted_model(world), "a scripted model"


def play(world: World, generate: Generate, out: TextIO) -> list[dict[str, Any]]:
    """Plays the session; prints each line and reply; returns the outcomes."""
    wren = world.entity_id("Wren")
    outcomes = []
    for now, text in LINES:
        outcomes.append(_say(world, wren, now, text, generate, out))
    # Wren crosses the room to the bar: a validated event, like any edit.
    world.move_entity("Wren", "the bar", "stools", posture="leaning on the counter")
    print("  (Wren walks over to the bar.)", file=out)
    now, text = AT_THE_BAR
    outcomes.append(_say(world, wren, now, text, generate, out))
    return outcomes


def _say(
    world: World, speaker: int, now: int, text: str, generate: Generate, out: TextIO
) -> dict[str, Any]:
    print(f"> {text}", file=out)
    outcome = world.run_turn(speaker, text, now, generate, options=OPTIONS)
    names = {e.id: e.name for e in world.entities()}
    for reply in outcome["replies"]:
        print(f"{names[reply['speaker']]}: {reply['text']}", file=out)
    for report in outcome["reports"]:
        fate = "applied" if report["rejected"] is None else f"rejected: {report['rejected']}"
        print(f"  [update {report['report']}: {fate}]", file=out)
    return outcome


def describe(world: World) -> str:
    """Who is where and what they do, and how they feel about each other."""
    containers = {c.id: c.name for c in world.containers()}
    names = {e.id: e.name for e in world.entities()}
    lines = [f"{world.name}, seq {world.head} on branch {world.branch}"]
    for e in world.entities():
        if e.container is not None:
            where = containers[e.container] + (f" ({e.slot})" if e.slot else "")
        elif e.carrier is not None:
            where = f"carried by {names[e.carrier]}"
        else:
            where = "nowhere"
        doing = ", ".join(x for x in (e.posture, e.action, e.mood) if x)
        lines.append(f"  {e.name}: {where}" + (f"; {doing}" if doing else ""))
    for edge in world.edges():
        lines.append(
            f"  {names[edge.from_]} → {names[edge.to]}: affinity {edge.affinity:+.2f}, "
            f"trust {edge.trust:+.2f}"
        )
    return "\n".join(lines)


def show_prompt(world: World, name: str) -> str:
    """The prompt ``name`` would be given now, piece by piece, with why each
    piece is there."""
    prompt = world.inspect_prompt(world.entity_id(name))
    lines = [f"The prompt of {name}: {prompt['tokens']} of {prompt['budget_tokens']} tokens"]
    for piece in prompt["pieces"]:
        first = piece["text"].splitlines()[0] if piece["text"] else ""
        lines.append(f"  [{piece['section']}] {first[:70]}  <- {piece['why']}")
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None, out: TextIO = sys.stdout) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    svg_path = Path(args[0]) if args else Path("tavern.svg")
    with World.load(TAVERN) as world:
        generate, described = model_from_environment(world)
        print(f"Playing the tavern with {described}.\n", file=out)
        play(world, generate, out)
        print(f"\n{describe(world)}\n", file=out)
        print(show_prompt(world, "Tobias Reed"), file=out)
        world.graph().save(svg_path)
        print(f"\nThe relationship graph is in {svg_path}.", file=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
