// The JavaScript side of the differential test of the fact language (rp-core/tests/facts_vs_node.rs).
//
// Reads JSON lines {expr, ctx, self, draws} on stdin and answers one JSON line each, in order:
//   {"ok": rendered}   the value, rendered as rp_core::facts::evaluate_to_string renders it
//   {"error": msg}     a runtime error (TypeError, or a bad dice notation)
//   {"syntax": msg}    the expression does not compile
//   {"bug": msg}       the case left the subset (a function value): the generator is wrong
//
// The expression is compiled in strict mode with the context bound as parameters. Numbers that
// JSON cannot carry (NaN, ±Infinity, -0) arrive as strings and go through Number().
"use strict";

const PARAMS = [
  "self", "time", "content", "author", "name", "mentioned", "response_ms", "retry_ms",
  "unread_count", "interaction_type", "present", "random", "roll", "has_fact",
];

class Bug extends Error {}

function num(v) {
  return typeof v === "string" ? Number(v) : v;
}

let draws = [];
let next = 0;

function draw() {
  const d = next < draws.length ? draws[next] : 0;
  next += 1;
  return d;
}

// random() is a number in [0, 1); random(p) draws one number d and answers d < Number(p).
function random(p) {
  if (arguments.length === 0) return draw();
  const q = Number(p);
  return draw() < q;
}

// roll(notation): NdS, optional khK / klK, then any number of +K / -K. The notation is
// ToString'd, trimmed and lower-cased (ASCII letters only: nothing else is valid anyway).
const MAX_DICE = 1000;
const MAX_SIDES = 1000000;

function roll(notation) {
  const s = String(notation).trim().replace(/[A-Z]/g, (c) => c.toLowerCase());
  const bad = (why) => {
    throw new Error(`bad dice notation ${JSON.stringify(String(notation))} (${why})`);
  };
  let i = 0;
  const isDigit = (c) => c !== undefined && c >= "0" && c <= "9";
  const number = () => {
    const start = i;
    while (isDigit(s[i])) i += 1;
    if (i === start || i - start > 9) return null;
    return parseInt(s.slice(start, i), 10);
  };
  let count = 1;
  if (isDigit(s[0])) {
    count = number();
    if (count === null) bad("the dice count is too long");
  }
  if (s[i] !== "d") bad("expected d");
  i += 1;
  const sides = number();
  if (sides === null) bad("expected the number of sides");
  if (count === 0 || count > MAX_DICE) bad("dice count");
  if (sides === 0 || sides > MAX_SIDES) bad("sides");
  let keep = null;
  if (s.startsWith("kh", i) || s.startsWith("kl", i)) {
    const highest = s[i + 1] === "h";
    i += 2;
    const n = number();
    if (n === null) bad("expected how many dice to keep");
    if (n === 0 || n > count) bad("keep");
    keep = [highest, n];
  }
  let modifier = 0;
  while (i < s.length) {
    let sign;
    if (s[i] === "+") sign = 1;
    else if (s[i] === "-") sign = -1;
    else bad("unexpected text after the dice");
    i += 1;
    const n = number();
    if (n === null) bad("expected a number after the sign");
    modifier += sign * n;
  }
  const dice = [];
  for (let k = 0; k < count; k += 1) dice.push(Math.floor(draw() * sides) + 1);
  let kept = dice.slice();
  if (keep) {
    kept.sort((a, b) => a - b);
    if (keep[0]) kept.reverse();
    kept = kept.slice(0, keep[1]);
  }
  return kept.reduce((a, b) => a + b, 0) + modifier;
}

// has_fact(pattern): evaluate_to_string has no facts, so always false (the argument is still
// evaluated, and converted to a string, as rp does).
function has_fact(p) {
  if (!(p instanceof RegExp)) String(p);
  return false;
}

function render(v) {
  switch (typeof v) {
    case "undefined":
      return "undefined";
    case "boolean":
      return String(v);
    case "number":
      return Object.is(v, -0) ? "-0" : String(v);
    case "string":
      return JSON.stringify(v);
    case "function":
      throw new Bug("a function value (a built-in method was read as a property)");
    default:
      break;
  }
  if (v === null) return "null";
  if (Array.isArray(v)) return "[" + v.map(render).join(",") + "]";
  if (v instanceof RegExp) return String(v);
  return String(v);
}

function evaluate(msg) {
  let fn;
  try {
    fn = new Function(...PARAMS, '"use strict";\nreturn (' + msg.expr + "\n);");
  } catch (e) {
    return { syntax: String(e && e.message) };
  }
  const c = msg.ctx;
  const hour = num(c.hour);
  const day = 6 <= hour && hour < 18;
  const time = { hour, is_day: day, is_night: !day };
  const self = {};
  for (const [k, v] of msg.self) self[k] = typeof v === "object" && v !== null ? num(v.n) : v;
  draws = msg.draws;
  next = 0;
  let value;
  try {
    value = fn(
      self, time, c.content, c.author, c.name, c.mentioned, num(c.response_ms), num(c.retry_ms),
      num(c.unread_count), c.interaction_type === null ? undefined : c.interaction_type,
      c.present, random, roll, has_fact,
    );
  } catch (e) {
    return { error: String(e && e.name) + ": " + String(e && e.message) };
  }
  try {
    return { ok: render(value) };
  } catch (e) {
    if (e instanceof Bug) return { bug: e.message };
    throw e;
  }
}

let pending = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
  pending += chunk;
  const lines = pending.split("\n");
  pending = lines.pop();
  if (lines.length === 0) return;
  const out = [];
  for (const line of lines) {
    if (line === "") continue;
    let answer;
    try {
      answer = evaluate(JSON.parse(line));
    } catch (e) {
      answer = { bug: "oracle failure: " + String(e && e.stack) };
    }
    out.push(JSON.stringify(answer));
  }
  process.stdout.write(out.join("\n") + "\n");
});
process.stdin.on("end", () => process.exit(0));
