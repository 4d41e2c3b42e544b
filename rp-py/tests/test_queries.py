"""World queries and relationship queries from Python: ``World.begin_query``
(a ``Job``), ``World.ask`` (driven by a plain function), ``get_query`` and
``recent_queries``; and ``relationships_of``, ``connected``, ``path``,
``shared_connections`` and ``graph_stats``.

The harbour: Mira runs the Crooked Lantern, Tobias smuggles brandy, Edda
owes him silver. A question is answered in one round, or after the model
asks to look Tobias up; the record survives reopening the save. Bad input is
refused with the exception of its kind and records nothing.
"""

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rp_engine import (
    Conflict,
    Edge,
    GenerationError,
    InvalidInput,
    NotFound,
    ScriptedGenerator,
    World,
)

ROOT = Path(__file__).resolve().parents[2]
TAVERN = ROOT / "examples" / "tavern.toml"


def build(world: World) -> None:
    """The harbour's people, their edges and one memory."""
    world.create_container("The Crooked Lantern", key="lantern")
    world.create_entity("Wren", host_controlled=True, container="lantern")
    world.create_entity(
        "Mira",
        facts="is a character\nMira is an innkeeper.\nRuns the Crooked Lantern.",
        container="lantern",
    )
    world.create_entity(
        "Tobias",
        aliases=["Toby"],
        facts="is a character\nis a smuggler\nMoves casks of brandy through the harbour.",
        container="lantern",
    )
    world.create_entity("Harbour", facts="is a location\nWhere the boats come in.")
    world.create_entity("Edda", facts="is a character\nA fisher who owes money.")
    world.set_edge("Mira", "Tobias", affinity=0.5, summary="An old friend.")
    world.set_edge("Tobias", "Mira", affinity=0.4, summary="Keeps my secrets.")
    world.set_edge("Tobias", "Harbour", summary="Where the work is.")
    world.set_edge("Edda", "Tobias", affinity=-0.2, summary="Owes him silver.")
    world.add_memory(world.entity_id("Mira"), "Tobias paid for the brandy with silver.")


@pytest.fixture
def harbour() -> Iterator[World]:
    with World.in_memory("The Harbour") as world:
        build(world)
        yield world


def answer(content: str, sources: list[int], confidence: str = "high") -> str:
    """The model's JSON answer."""
    return json.dumps(
        {
            "type": "answer",
            "content": content,
            "confidence": confidence,
            "sources": [
                {"entity_id": s, "contribution": "facts", "relevance": 0.9} for s in sources
            ],
            "suggested_follow_ups": ["Who else?"],
        }
    )


def more(capability: str, params: dict[str, Any]) -> str:
    """The model's JSON request for more information."""
    return json.dumps(
        {
            "type": "needs_more_info",
            "reason": "not enough yet",
            "requests": [{"capability_id": capability, "params": params, "reason": "to know"}],
        }
    )


def test_a_query_answered_in_one_round(harbour: World) -> None:
    mira = harbour.entity_id("Mira")
    head = harbour.head
    job = harbour.begin_query("Who runs the Crooked Lantern?", now=50)
    assert (job.kind, job.active) == ("query", True)
    step = job.step()
    assert step["step"] == "generate" and step["purpose"] == {"kind": "query"}
    assert len(step["json_schema"]["anyOf"]) == 2
    assert "SEARCH_ENTITIES" in step["messages"][0]["content"]
    assert "Who runs the Crooked Lantern?" in step["messages"][1]["content"]
    progress = job.progress()
    assert progress["done"] is False and progress["query"]["status"] == "processing"
    assert "EXPAND_ENTITY" in [c["id"] for c in progress["capabilities"]]
    assert harbour.head == head, "nothing is recorded before finish()"

    job.provide(answer("Mira runs the Lantern.", [mira]))
    assert job.step() == {"step": "done"}
    outcome = job.finish()
    assert outcome["seq"] == harbour.head == head + 2, "asked and answered, one commit"
    assert outcome["iterations"] == 0
    record = outcome["query"]
    assert (record["status"], record["text"]) == ("completed", "Who runs the Crooked Lantern?")
    assert record["answer"]["content"] == "Mira runs the Lantern."
    assert record["answer"]["confidence"] == "high"
    assert [s["entity_id"] for s in record["answer"]["sources"]] == [mira]
    kinds = [kind for e in harbour.events(head + 1) for kind in e["event"]]
    assert kinds == ["query_asked", "query_answered"]
    assert harbour.get_query(record["id"]) == record
    assert harbour.recent_queries() == [record]
    with pytest.raises(Conflict, match="the job is over"):
        job.finish()


def test_a_needs_more_info_round_then_an_answer(harbour: World) -> None:
    tobias, edda = harbour.entity_id("Tobias"), harbour.entity_id("Edda")
    replies = [
        more("EXPAND_ENTITY", {"entity_id": tobias}),
        answer("Tobias smuggles brandy; Edda owes him.", [tobias, edda], "medium"),
    ]
    requests: list[dict[str, Any]] = []

    def model(request: dict[str, Any]) -> str:
        assert request["purpose"] == {"kind": "query"}
        requests.append(request)
        return replies[len(requests) - 1]

    outcome = harbour.ask(
        "What does Toby move through the harbour?",
        now=60,
        generate=model,
        config={"max_info_requests": 2, "temperature": 0.2},
    )
    assert len(requests) == 2
    assert requests[0]["params"]["temperature"] == 0.2
    second = "\n".join(m["content"] for m in requests[1]["messages"])
    assert "casks of brandy" in second, "the expanded record is in the next prompt"
    assert outcome["iterations"] == 1
    record = outcome["query"]
    assert record["status"] == "completed" and record["info_requests"] == 1
    assert len(record["rounds"]) == 2
    assert record["rounds"][0]["requests"][0]["request"]["capability_id"] == "EXPAND_ENTITY"
    assert record["answer"]["confidence"] == "medium"
    assert record["config"]["max_info_requests"] == 2


def test_a_query_asked_as_an_entity(harbour: World) -> None:
    mira = harbour.entity_id("Mira")
    model = ScriptedGenerator()
    model.script_purpose("query", [answer("Tobias paid in silver.", [mira])])
    outcome = harbour.ask("How did Tobias pay?", now=70, generate=model, as_entity="Mira")
    assert outcome["query"]["asked_as"] == mira
    assert outcome["query"]["answer"]["content"] == "Tobias paid in silver."


def test_queries_persist_after_reopening_the_save(tmp_path: Path) -> None:
    path = tmp_path / "tavern.rp"
    with World.create(path, TAVERN) as world:
        mira = world.entity_id("Mira Holt")
        first = world.ask(
            "Who keeps the tavern?",
            now=1_000,
            generate=lambda request: answer("Mira Holt.", [mira]),
        )
        second = world.ask(
            "Who is Wren?",
            now=2_000,
            generate=lambda request: answer("A traveller.", [world.entity_id("Wren")], "low"),
        )
        records = world.recent_queries()
    with World.open(path) as world:
        assert world.get_query(first["query"]["id"]) == first["query"]
        assert world.get_query(second["query"]["id"]) == second["query"]
        assert world.recent_queries() == records
        assert [r["id"] for r in records] == [second["query"]["id"], first["query"]["id"]]
        assert world.recent_queries(limit=1) == records[:1]


def test_a_query_that_fails_is_recorded_as_failed(harbour: World) -> None:
    # Unreadable twice: the query fails, and its record says why.
    outcome = harbour.ask("Who is here?", now=80, generate=lambda request: "no JSON here")
    record = outcome["query"]
    assert record["status"] == "failed" and "answer" not in record
    assert "could not be read, twice" in record["error"]
    assert len(record["rounds"]) == 2

    # The host gives up.
    job = harbour.begin_query("Who is here?", now=90)
    job.fail("the model is down")
    with pytest.raises(Conflict, match="already ended"):
        job.fail("again")
    assert job.step() == {"step": "done"}
    failed = job.finish()["query"]
    assert (failed["status"], failed["error"]) == ("failed", "the model is down")
    assert harbour.get_query(failed["id"]) == failed


def test_bad_queries_are_refused_and_record_nothing(harbour: World) -> None:
    head = harbour.head
    with pytest.raises(InvalidInput):
        harbour.begin_query("", now=10)
    with pytest.raises(InvalidInput, match="unknown field"):
        harbour.begin_query("Who?", now=10, config={"max_rounds": 3})
    with pytest.raises(InvalidInput, match="max_info_requests"):
        harbour.ask("Who?", now=10, generate=lambda r: "", config={"max_info_requests": 99})
    with pytest.raises(InvalidInput, match="temperature"):
        harbour.begin_query("Who?", now=10, config={"temperature": 3.0})
    with pytest.raises(NotFound):
        harbour.begin_query("Who?", now=10, as_entity="Nobody")
    with pytest.raises(NotFound, match="query"):
        harbour.get_query(999_999)
    assert harbour.head == head and harbour.recent_queries() == []


def test_an_exception_in_the_generator_records_the_query_as_failed(harbour: World) -> None:
    # As from Rust (run_query) and C (rp_engine_run_job): the question was asked, the model
    # failed, and the record says so.
    head = harbour.head

    def broken(request: dict[str, Any]) -> str:
        raise RuntimeError("no model")

    with pytest.raises(GenerationError, match="RuntimeError: no model") as raised:
        harbour.ask("Who runs the Crooked Lantern?", now=10, generate=broken)
    assert isinstance(raised.value.__cause__, RuntimeError)
    assert harbour.head == head + 2
    [failed] = harbour.recent_queries()
    assert failed["status"] == "failed" and "no model" in failed["error"]

    # A job whose world moves on refuses to record a stale query.
    job = harbour.begin_query("Who runs the Crooked Lantern?", now=10)
    harbour.advance_time(20)
    with pytest.raises(Conflict, match="changed since"):
        job.provide(answer("Mira.", [harbour.entity_id("Mira")]))
    job.abandon()
    assert harbour.recent_queries() == [failed]


def test_relationship_queries(harbour: World) -> None:
    wren, mira, tobias, port, edda = (
        harbour.entity_id(n) for n in ("Wren", "Mira", "Tobias", "Harbour", "Edda")
    )
    edges = harbour.relationships_of(["Toby"])
    assert all(isinstance(e, Edge) for e in edges)
    assert [(e.from_, e.to) for e in edges] == [
        (tobias, mira),
        (tobias, port),
        (mira, tobias),
        (edda, tobias),
    ], "outgoing first, then incoming, each once"
    assert [(e.from_, e.to) for e in harbour.relationships_of([tobias], direction="incoming")] == [
        (mira, tobias),
        (edda, tobias),
    ]
    assert len(harbour.relationships_of(["Tobias", "Mira"], limit=2)) == 2
    assert harbour.relationships_of(["Wren"]) == []

    assert harbour.connected("Edda") == [(tobias, 1), (mira, 2), (port, 2)]
    assert harbour.connected("Edda", max_hops=1) == [(tobias, 1)]
    assert harbour.connected(port, direction="incoming") == [(tobias, 1), (mira, 2), (edda, 2)]
    assert harbour.connected("Edda", limit=1) == [(tobias, 1)]

    assert harbour.path("Edda", "Harbour") == [edda, tobias, port]
    assert harbour.path("Edda", "Harbour", max_hops=1) is None
    assert harbour.path("Harbour", "Edda") is None, "edges have a direction"
    assert harbour.path("Wren", "Mira") is None

    shared = harbour.shared_connections("Mira")
    assert shared == [(port, 1), (edda, 1)], "each shares Tobias with Mira; ties by id"
    assert harbour.shared_connections("Mira", limit=1) == [(port, 1)]

    stats = harbour.graph_stats()
    assert stats["edges"] == 4 and stats["mutual_pairs"] == 1
    assert stats["max_outgoing"] == 2 and stats["max_incoming"] == 2
    assert stats["isolated"] == stats["entities"] - 4
    assert wren not in {e for e, _ in harbour.connected("Mira", direction="both")}


def test_bad_relationship_queries_are_refused(harbour: World) -> None:
    with pytest.raises(NotFound):
        harbour.relationships_of(["Mira", "Nobody"])
    with pytest.raises(NotFound):
        harbour.connected(999_999)
    with pytest.raises(NotFound):
        harbour.path("Mira", "Nobody")
    with pytest.raises(NotFound):
        harbour.shared_connections("Nobody")
    with pytest.raises(InvalidInput, match="direction"):
        harbour.relationships_of(["Mira"], direction="sideways")
    with pytest.raises(InvalidInput, match="direction"):
        harbour.connected("Mira", direction="up")
    for hops in (0, 7):
        with pytest.raises(InvalidInput, match="max_hops"):
            harbour.connected("Mira", max_hops=hops)
        with pytest.raises(InvalidInput, match="max_hops"):
            harbour.path("Mira", "Tobias", max_hops=hops)
    with pytest.raises(InvalidInput, match="limit"):
        harbour.relationships_of(["Mira"], limit=0)
    with pytest.raises(InvalidInput, match="limit"):
        harbour.shared_connections("Mira", limit=100_000)
    with pytest.raises(OverflowError):
        harbour.connected("Mira", limit=-1)
