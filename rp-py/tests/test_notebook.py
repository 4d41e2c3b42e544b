"""Notebook pictures: World._repr_html_ (who is where, what they do, their
edges) and the relationship graph drawn as SVG by the package itself."""

import xml.etree.ElementTree as ET
from pathlib import Path

from rp_engine import Graph, GraphNode, World
from rp_engine._notebook import affinity_colour

SVG = "{http://www.w3.org/2000/svg}"


def parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    return root


def test_the_html_shows_places_doings_and_edges(world: World) -> None:
    html = world._repr_html_()
    assert html.startswith('<div class="rp-world">')
    assert "<h3>The Crooked Lantern</h3>" in html
    assert f"seq {world.head} on branch <code>main</code>" in html
    # Who is where, with the container path and slot, and what they do.
    assert (
        "<td>Mira Holt</td><td>The Crooked Lantern › the bar (behind the bar)</td>"
        "<td>standing, polishing tankards</td><td>watchful</td>" in html
    )
    assert "Wren <small>(player)</small>" in html
    assert "<td>carried by Wren</td>" in html
    # The edges, with affinity coloured, and the graph itself.
    assert "<td>Tobias Reed</td><td>Mira Holt</td>" in html
    assert f"color:{affinity_colour(0.6)}" in html
    assert "<svg" in html and html.rstrip().endswith("</div>")


def test_the_html_escapes_names(world: World) -> None:
    world.create_entity("<b>Bram & Co</b>", container="bar")
    html = world._repr_html_()
    assert "&lt;b&gt;Bram &amp; Co&lt;/b&gt;" in html
    assert "<b>Bram" not in html
    parse(world.graph_svg())


def test_the_graph_draws_directed_edges_with_affinity(
    world: World, wren: int, mira: int, tobias: int
) -> None:
    graph = world.graph()
    assert isinstance(graph, Graph)
    assert repr(graph) == "<Graph 'The Crooked Lantern': 3 entities, 5 edges>"
    # The carried letter has no place and no edge: not drawn.
    assert [n.name for n in graph.nodes] == ["Wren", "Tobias Reed", "Mira Holt"]
    assert all(isinstance(n, GraphNode) for n in graph.nodes)
    assert graph.nodes[0].host_controlled and graph.nodes[0].place == "the corner booth, bench"

    root = parse(graph.svg)
    assert graph._repr_svg_() == graph.svg == world.graph_svg()
    nodes = root.findall(f"{SVG}g[@class='node']")
    assert [n.get("data-id") for n in nodes] == [str(wren), str(tobias), str(mira)]
    edges = {
        (int(e.get("data-from", "")), int(e.get("data-to", ""))): e
        for e in root.findall(f"{SVG}g[@class='edge']")
    }
    assert set(edges) == {
        (mira, tobias),
        (tobias, mira),
        (mira, wren),
        (wren, mira),
        (tobias, wren),
    }
    # Each edge: a curve and an arrowhead in its affinity's colour, and the
    # affinity as its label; both directions of a pair are drawn.
    fond = edges[(tobias, mira)]
    path, head, label = fond.find(f"{SVG}path"), fond.find(f"{SVG}polygon"), fond.find(f"{SVG}text")
    assert path is not None and head is not None and label is not None
    assert path.get("stroke") == head.get("fill") == affinity_colour(0.6)
    assert label.text == "+0.60"
    wary = edges[(mira, wren)].find(f"{SVG}text")
    assert wary is not None and wary.text == "-0.10"
    noticed = edges[(tobias, wren)].find(f"{SVG}text")
    assert noticed is not None and noticed.text == "+0.20"
    title = fond.find(f"{SVG}title")
    assert title is not None and (title.text or "").startswith(
        "Tobias Reed → Mira Holt: affinity +0.60, trust +0.70"
    )


def test_the_colour_runs_from_red_through_grey_to_green() -> None:
    assert affinity_colour(-1.0) == "#c0392b"
    assert affinity_colour(0.0) == "#95a5a6"
    assert affinity_colour(1.0) == "#27ae60"
    assert affinity_colour(5.0) == affinity_colour(1.0)


def test_the_graph_follows_the_world(world: World, tobias: int, wren: int) -> None:
    before = world.graph_svg()
    assert world.graph_svg() == before, "the same world draws the same picture"
    world.set_edge(tobias, wren, affinity=-0.8)
    after = parse(world.graph_svg())
    label = after.find(f"{SVG}g[@data-from='{tobias}'][@data-to='{wren}']/{SVG}text")
    assert label is not None and label.text == "-0.80"


def test_an_empty_world_draws_an_empty_graph() -> None:
    with World.in_memory("Nowhere") as world:
        graph = world.graph()
        assert graph.nodes == [] and graph.edges == []
        assert "no entities" in graph.svg
        parse(graph.svg)
        assert "<h3>Nowhere</h3>" in world._repr_html_()


def test_the_graph_saves_as_a_file(world: World, tmp_path: Path) -> None:
    path = tmp_path / "tavern.svg"
    world.graph().save(path)
    parse(path.read_text(encoding="utf-8"))
