"""Pictures of a world for notebooks: ``World._repr_html_`` (who is where,
what they do, their relationships) and ``World.graph()``, the relationship
graph as an SVG drawn here, with no dependency (no graphviz).

The graph puts the entities on a circle, those who share a place side by
side, and draws every directed edge as a curve with an arrowhead: ``a → b``
and ``b → a`` bend to opposite sides, so both are seen. An edge's colour is
its affinity (red at -1, grey at 0, green at +1), its label the affinity as a
number, its width the strength of its trust; hovering shows the summary.
The drawing is deterministic: the same world gives the same SVG.

Call these through the ``World`` methods; this module is not public.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from html import escape
from typing import Optional, Union

from rp_engine._rp import Container, Edge, Entity, World

_NODE_RADIUS = 22.0
# Room above and below the circle for the names, which are written outward
# (the room at the sides is as wide as the longest name or place).
_MARGIN_Y = 80.0


@dataclass(frozen=True)
class GraphNode:
    """An entity of the graph and where it is drawn."""

    id: int
    name: str
    place: str
    """Where it is, in words ("the corner booth, bench"); may be empty."""
    host_controlled: bool
    x: float
    y: float
    angle: float
    """Where on the circle, in radians (0: to the right, clockwise); its
    name is written outward, away from the edges."""


class Graph:
    """The relationship graph of a world (``World.graph()``): its entities
    (``nodes``) and directed edges (``edges``, ``Edge`` snapshots), drawn as
    ``svg``. A notebook shows it as the picture (``_repr_svg_``)."""

    def __init__(
        self, title: str, nodes: list[GraphNode], edges: list[Edge], *, width: float = 0.0
    ) -> None:
        self.title = title
        self.nodes = nodes
        self.edges = edges
        self._width = width
        self._svg: Optional[str] = None

    @property
    def svg(self) -> str:
        """The picture, a standalone SVG document."""
        if self._svg is None:
            self._svg = _draw(self.title, self.nodes, self.edges, self._width)
        return self._svg

    def _repr_svg_(self) -> str:
        return self.svg

    def save(self, path: Union[str, os.PathLike[str]]) -> None:
        """Writes the SVG to ``path`` (UTF-8)."""
        with open(path, "w", encoding="utf-8") as out:
            out.write(self.svg)

    def __repr__(self) -> str:
        return f"<Graph {self.title!r}: {len(self.nodes)} entities, {len(self.edges)} edges>"


def _places(containers: list[Container]) -> dict[int, str]:
    """Each container's name, with its enclosing containers before it."""
    by_id = {c.id: c for c in containers}
    paths: dict[int, str] = {}
    for c in containers:
        names: list[str] = []
        current: Optional[Container] = c
        seen: set[int] = set()
        while current is not None and current.id not in seen:
            seen.add(current.id)
            names.append(current.name)
            current = by_id.get(current.parent) if current.parent is not None else None
        paths[c.id] = " › ".join(reversed(names))
    return paths


def _place_of(entity: Entity, containers: dict[int, Container]) -> str:
    if entity.container is None:
        return ""
    container = containers.get(entity.container)
    name = container.name if container is not None else f"container {entity.container}"
    return f"{name}, {entity.slot}" if entity.slot else name


def graph(world: World) -> Graph:
    """The relationship graph of ``world``."""
    entities = world.entities()
    edges = world.edges()
    containers = {c.id: c for c in world.containers()}
    linked = {e.from_ for e in edges} | {e.to for e in edges}
    shown = [e for e in entities if e.container is not None or e.id in linked]
    # Those who share a place side by side, places in id order, then the rest.
    shown.sort(key=lambda e: (e.container is None, e.container or 0, e.id))
    count = len(shown)
    radius = max(120.0, count * 34.0) if count > 1 else 0.0
    places = {e.id: _place_of(e, containers) for e in shown}
    # About 7 px a character of a name, 5.6 of a place (in a smaller font).
    widest = max((max(len(e.name) * 7.2, len(places[e.id]) * 5.6) for e in shown), default=0)
    margin_x = max(120.0, widest + _NODE_RADIUS + 24)
    nodes = []
    for i, entity in enumerate(shown):
        angle = -math.pi / 2 + 2 * math.pi * i / max(count, 1)
        nodes.append(
            GraphNode(
                id=entity.id,
                name=entity.name,
                place=places[entity.id],
                host_controlled=entity.host_controlled,
                x=round(radius + margin_x + radius * math.cos(angle), 1),
                y=round(radius + _MARGIN_Y + radius * math.sin(angle), 1),
                angle=angle,
            )
        )
    ids = {n.id for n in nodes}
    drawn = [e for e in edges if e.from_ in ids and e.to in ids]
    return Graph(world.name, nodes, drawn, width=2 * (radius + margin_x))


def affinity_colour(affinity: float) -> str:
    """Red at -1, grey at 0, green at +1, as ``#rrggbb``."""
    grey = (149, 165, 166)
    end = (39, 174, 96) if affinity >= 0 else (192, 57, 43)
    t = min(abs(affinity), 1.0)
    r, g, b = (round(a + (z - a) * t) for a, z in zip(grey, end))
    return f"#{r:02x}{g:02x}{b:02x}"


def _fmt(value: float) -> str:
    return f"{value:.1f}"


def _draw(title: str, nodes: list[GraphNode], edges: list[Edge], width: float) -> str:
    size_y = max((n.y for n in nodes), default=_MARGIN_Y) + _MARGIN_Y
    legend_y = size_y
    height = legend_y + 50
    width = max(width, 440.0)
    where = {n.id: n for n in nodes}
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_fmt(width)}" '
        f'height="{_fmt(height)}" viewBox="0 0 {_fmt(width)} {_fmt(height)}" '
        'font-family="sans-serif" font-size="12">',
        f"<title>{escape(title)}: relationships</title>",
        f'<rect width="{_fmt(width)}" height="{_fmt(height)}" fill="#ffffff"/>',
    ]
    if not nodes:
        out.append(
            f'<text x="{_fmt(width / 2)}" y="{_fmt(size_y / 2)}" text-anchor="middle" '
            'fill="#7f8c8d">no entities</text>'
        )
    names = {n.id: n.name for n in nodes}
    for edge in edges:
        out.extend(_edge(edge, where[edge.from_], where[edge.to], names))
    for node in nodes:
        out.extend(_node(node))
    out.extend(_legend(legend_y))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _edge(edge: Edge, a: GraphNode, b: GraphNode, names: dict[int, str]) -> list[str]:
    colour = affinity_colour(edge.affinity)
    width = 1.5 + 2.5 * min(abs(edge.trust), 1.0)
    dx, dy = b.x - a.x, b.y - a.y
    length = math.hypot(dx, dy) or 1.0
    ux, uy = dx / length, dy / length
    # Bend to the left of the direction of travel: a→b and b→a part ways.
    nx, ny = uy, -ux
    bend = min(40.0, length / 4)
    cx, cy = (a.x + b.x) / 2 + nx * bend, (a.y + b.y) / 2 + ny * bend

    def towards(px: float, py: float, qx: float, qy: float, by: float) -> tuple[float, float]:
        d = math.hypot(qx - px, qy - py) or 1.0
        return px + (qx - px) / d * by, py + (qy - py) / d * by

    sx, sy = towards(a.x, a.y, cx, cy, _NODE_RADIUS + 2)
    ex, ey = towards(b.x, b.y, cx, cy, _NODE_RADIUS + 4)
    # The arrowhead points along the curve's last tangent (control → end).
    tx, ty = ex - cx, ey - cy
    t = math.hypot(tx, ty) or 1.0
    tx, ty = tx / t, ty / t
    head = 9.0 + width
    left = (ex - tx * head + ty * head * 0.5, ey - ty * head - tx * head * 0.5)
    right = (ex - tx * head - ty * head * 0.5, ey - ty * head + tx * head * 0.5)
    # The label sits at the middle of the curve (t = 1/2 of the Bézier).
    mx, my = 0.25 * sx + 0.5 * cx + 0.25 * ex, 0.25 * sy + 0.5 * cy + 0.25 * ey
    tip = (
        f"{names[edge.from_]} → {names[edge.to]}: affinity {edge.affinity:+.2f}, "
        f"trust {edge.trust:+.2f}"
    )
    if edge.summary:
        tip += f". {edge.summary}"
    return [
        f'<g class="edge" data-from="{edge.from_}" data-to="{edge.to}">',
        f"<title>{escape(tip)}</title>",
        f'<path d="M {_fmt(sx)} {_fmt(sy)} Q {_fmt(cx)} {_fmt(cy)} {_fmt(ex)} {_fmt(ey)}" '
        f'fill="none" stroke="{colour}" stroke-width="{width:.2f}"/>',
        f'<polygon points="{_fmt(ex)},{_fmt(ey)} {_fmt(left[0])},{_fmt(left[1])} '
        f'{_fmt(right[0])},{_fmt(right[1])}" fill="{colour}"/>',
        f'<text x="{_fmt(mx)}" y="{_fmt(my)}" text-anchor="middle" dy="4" fill="{colour}" '
        'font-weight="bold" stroke="#ffffff" stroke-width="3" paint-order="stroke">'
        f"{edge.affinity:+.2f}</text>",
        "</g>",
    ]


def _node(node: GraphNode) -> list[str]:
    fill = "#2e86de" if node.host_controlled else "#f39c12"
    tip = node.name + (f", in {node.place}" if node.place else "")
    # The name goes outward from the circle: right of a node on the right,
    # left of one on the left, above or below one at the top or bottom.
    cos, sin = math.cos(node.angle), math.sin(node.angle)
    anchor = "start" if cos > 0.35 else "end" if cos < -0.35 else "middle"
    lx = node.x + cos * (_NODE_RADIUS + 8)
    ly = node.y + sin * (_NODE_RADIUS + 8) + (4 if abs(sin) < 0.35 else 0)
    if sin < -0.35:
        ly -= 16 if node.place else 2
    elif sin > 0.35:
        ly += 12
    lines = [
        f'<g class="node" data-id="{node.id}">',
        f"<title>{escape(tip)}</title>",
        f'<circle cx="{_fmt(node.x)}" cy="{_fmt(node.y)}" r="{_NODE_RADIUS:.0f}" '
        f'fill="{fill}" stroke="#34495e" stroke-width="1.5"/>',
        f'<text x="{_fmt(node.x)}" y="{_fmt(node.y)}" text-anchor="middle" dy="4" '
        f'fill="#ffffff" font-weight="bold">{escape(_initials(node.name))}</text>',
        f'<text x="{_fmt(lx)}" y="{_fmt(ly)}" text-anchor="{anchor}" fill="#2c3e50" '
        f'font-weight="bold">{escape(node.name)}</text>',
    ]
    if node.place:
        lines.append(
            f'<text x="{_fmt(lx)}" y="{_fmt(ly + 14)}" text-anchor="{anchor}" '
            f'fill="#7f8c8d" font-size="10">{escape(node.place)}</text>'
        )
    lines.append("</g>")
    return lines


def _initials(name: str) -> str:
    words = [w for w in name.replace("-", " ").split() if w[:1].isalnum()]
    if not words:
        return name[:1].upper()
    if words[0].lower() == "the" and len(words) > 1:
        words = words[1:]
    return "".join(w[0].upper() for w in words[:2])


def _legend(y: float) -> list[str]:
    out = ['<g class="legend" font-size="10" fill="#2c3e50">']
    out.append(f'<text x="12" y="{_fmt(y + 12)}">affinity</text>')
    for i, value in enumerate((-1.0, -0.5, 0.0, 0.5, 1.0)):
        x = 62 + i * 40
        out.append(
            f'<line x1="{x}" y1="{_fmt(y + 8)}" x2="{x + 30}" y2="{_fmt(y + 8)}" '
            f'stroke="{affinity_colour(value)}" stroke-width="4"/>'
        )
        out.append(
            f'<text x="{x + 15}" y="{_fmt(y + 24)}" text-anchor="middle">{value:+.1f}</text>'
        )
    out.append(
        f'<text x="12" y="{_fmt(y + 42)}">an arrow a → b: what a feels for b; '
        "thicker: more trust (or distrust); blue: the player</text>"
    )
    out.append("</g>")
    return out


def _clock(ms: int) -> str:
    """Host time as the demo prints it: ``day 1, 00:01:00``."""
    seconds, _ = divmod(ms, 1000)
    days, seconds = divmod(seconds, 86_400)
    hours, seconds = divmod(seconds, 3600)
    minutes, seconds = divmod(seconds, 60)
    return f"day {days + 1}, {hours:02d}:{minutes:02d}:{seconds:02d}"


def world_html(world: World) -> str:
    """The world as HTML: a header, who is where and what they do, the
    relationships as a table and as the graph."""
    containers = world.containers()
    by_id = {c.id: c for c in containers}
    places = _places(containers)
    entities = world.entities()
    names = {e.id: e.name for e in entities}
    edges = world.edges()
    out = [
        '<div class="rp-world">',
        f"<h3>{escape(world.name)}</h3>",
        f"<p>seq {world.head} on branch <code>{escape(world.branch)}</code> · "
        f"{_clock(world.now)} · {len(entities)} entities, {len(containers)} places, "
        f"{len(edges)} relationships</p>",
        "<table>",
        "<thead><tr><th>who</th><th>where</th><th>doing</th><th>mood</th><th>carries</th>"
        "</tr></thead><tbody>",
    ]
    ordered = sorted(
        entities, key=lambda e: (e.container is None, places.get(e.container or 0, ""), e.id)
    )
    for e in ordered:
        if e.container is not None:
            where = places.get(e.container, f"container {e.container}")
            if e.slot:
                where += f" ({e.slot})"
        elif e.carrier is not None:
            where = f"carried by {names.get(e.carrier, e.carrier)}"
        else:
            where = "nowhere"
        doing = ", ".join(x for x in (e.posture, e.action) if x)
        carries = ", ".join(str(names.get(i, i)) for i in e.inventory)
        who = escape(e.name) + (" <small>(player)</small>" if e.host_controlled else "")
        out.append(
            f"<tr><td>{who}</td><td>{escape(where)}</td><td>{escape(doing)}</td>"
            f"<td>{escape(e.mood or '')}</td><td>{escape(carries)}</td></tr>"
        )
    out.append("</tbody></table>")
    if edges:
        out.append(
            "<table><thead><tr><th>from</th><th>to</th><th>affinity</th><th>trust</th>"
            "<th>summary</th></tr></thead><tbody>"
        )
        for edge in edges:
            colour = affinity_colour(edge.affinity)
            out.append(
                f"<tr><td>{escape(names.get(edge.from_, str(edge.from_)))}</td>"
                f"<td>{escape(names.get(edge.to, str(edge.to)))}</td>"
                f'<td style="color:{colour};font-weight:bold">{edge.affinity:+.2f}</td>'
                f"<td>{edge.trust:+.2f}</td><td>{escape(edge.summary)}</td></tr>"
            )
        out.append("</tbody></table>")
    if by_id or entities:
        out.append(graph(world).svg)
    out.append("</div>")
    return "\n".join(out)
