// The V8 column of the `facts` bench (benches/benches/facts.rs; see benches/FACTS.md).
//
// Reads one JSON spec (one line) on stdin, written by the Rust bench:
//   { draws: [number; 2^k], sample_ms: n, warmup_ms: n, verify_iters: n,
//     cases: [ { name, kind: "expr", expr, entities: [ctx] }
//            | { name, kind: "sheet", entities: [ { ctx, sheet } ] } ] }
// where ctx = { name, content, author, mentioned, response_ms (null = Infinity), hour,
//               present, self } and sheet = { has_respond, plain: [fact], lines: [line] },
//       line = { t: "fact", text } | { t: "comment" } | { t: "respond", v }
//            | { t: "if", cond, fact? , respond? }.
// Every expression is compiled once (`new Function`); each case is verified, warmed up and
// calibrated, then node prints one JSON line { node, v8, cases: [ { name, checksum, iters } ] }.
// The checksum (truthy results, or responds + 1e6 × facts of the decisions) over
// `verify_iters` rounds from the first draw must equal rp's: both sides did the same work.
// Then each request line `sample <case>` runs `iters` rounds (every entity once per round)
// over the same contexts and the same fixed sequence of random numbers as the Rust side, and
// answers { wall, cpu } in ns per evaluation (process.hrtime, process.cpuUsage); the Rust side
// interleaves these samples with its own, so all contenders share the machine's noise.
"use strict";

const PARAMS = [
  "self", "mentioned", "content", "author", "response_ms", "time", "name", "present",
  "has_fact", "random",
];

// Synchronous line reader over stdin (the Rust side waits for each answer).
const fs = require("fs");

function* stdinLines() {
  const buf = Buffer.alloc(1 << 16);
  let pending = "";
  for (;;) {
    let n;
    try {
      n = fs.readSync(0, buf, 0, buf.length, null);
    } catch (e) {
      if (e.code === "EAGAIN") continue;
      if (e.code === "EOF") return;
      throw e;
    }
    if (n === 0) return;
    pending += buf.toString("utf8", 0, n);
    let i;
    while ((i = pending.indexOf("\n")) >= 0) {
      yield pending.slice(0, i);
      pending = pending.slice(i + 1);
    }
  }
}

const lines = stdinLines();
const spec = JSON.parse(lines.next().value);
const D = Float64Array.from(spec.draws);
const MASK = D.length - 1;
let cur = 0;

// random() is a number in [0, 1); random(p) is a boolean, true with probability p.
function random(p) {
  const d = D[cur];
  cur = (cur + 1) & MASK;
  return p === undefined ? d : d < Number(p);
}

function compile(expr) {
  return new Function(...PARAMS, `"use strict"; return (${expr});`);
}

function entity(ctx) {
  const hour = ctx.hour;
  const isDay = hour >= 6 && hour < 18;
  return {
    self: ctx.self,
    mentioned: ctx.mentioned,
    content: ctx.content,
    author: ctx.author,
    response_ms: ctx.response_ms === null ? Infinity : ctx.response_ms,
    time: { hour, is_day: isDay, is_night: !isDay },
    name: ctx.name,
    present: ctx.present,
  };
}

const noFacts = () => false;

function exprCase(c) {
  const fn = compile(c.expr);
  const es = c.entities.map(entity);
  // One round: every entity once; returns how many evaluations were truthy.
  const round = () => {
    let n = 0;
    for (let i = 0; i < es.length; i++) {
      const e = es[i];
      if (fn(e.self, e.mentioned, e.content, e.author, e.response_ms, e.time, e.name,
        e.present, noFacts, random)) {
        n++;
      }
    }
    return n;
  };
  return { round, evals: es.length };
}

function compileSheet(sheet) {
  const lines = sheet.lines.map((l) => {
    switch (l.t) {
      case "fact": return { t: 0, text: l.text };
      case "comment": return { t: 3 };
      case "respond": return { t: 1, v: l.v };
      case "if": return l.fact !== undefined
        ? { t: 2, fn: compile(l.cond), fact: l.fact }
        : { t: 4, fn: compile(l.cond), v: l.respond };
      default: throw new Error(`unknown line kind ${l.t}`);
    }
  });
  return { lines, plain: sheet.plain, has_respond: sheet.has_respond };
}

// Response control as rp defines it (DESIGN §4, docs/facts.md §4): top to bottom, the last
// fired $respond wins, has_fact sees every unconditional fact and the conditional facts fired
// so far, a condition that throws counts as false.
function decide(sheet, e) {
  const facts = [];
  const searchable = sheet.plain.slice();
  let respond = null;
  const has_fact = (p) => {
    if (p instanceof RegExp) {
      for (let i = 0; i < searchable.length; i++) if (p.test(searchable[i])) return true;
      return false;
    }
    const q = String(p).toLowerCase();
    for (let i = 0; i < searchable.length; i++) {
      if (searchable[i].toLowerCase().includes(q)) return true;
    }
    return false;
  };
  const lines = sheet.lines;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    switch (l.t) {
      case 0: facts.push(l.text); break;
      case 1: respond = l.v; break;
      case 2: case 4: {
        let fired;
        try {
          fired = l.fn(e.self, e.mentioned, e.content, e.author, e.response_ms, e.time, e.name,
            e.present, has_fact, random);
        } catch (_) {
          fired = false;
        }
        if (fired) {
          if (l.t === 2) {
            facts.push(l.fact);
            searchable.push(l.fact);
          } else {
            respond = l.v;
          }
        }
        break;
      }
      default: break;
    }
  }
  return { respond: respond === null ? !sheet.has_respond : respond, facts };
}

function sheetCase(c) {
  const es = c.entities.map((x) => ({ e: entity(x.ctx), sheet: compileSheet(x.sheet) }));
  // One round: every entity decides once; returns responds + 1e6 * facts.
  const round = () => {
    let responds = 0;
    let facts = 0;
    for (let i = 0; i < es.length; i++) {
      const d = decide(es[i].sheet, es[i].e);
      if (d.respond) responds++;
      facts += d.facts.length;
    }
    return responds + 1e6 * facts;
  };
  return { round, evals: es.length };
}

const hr = () => process.hrtime.bigint();
const cpuUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

// Rounds per sample, so that a sample lasts about `sample_ms`.
function calibrate(round) {
  const t0 = hr();
  let n = 0;
  let sink = 0;
  while (Number(hr() - t0) < 20e6) {
    for (let i = 0; i < 10; i++) sink += round();
    n += 10;
  }
  const perRound = Number(hr() - t0) / n;
  return { iters: Math.max(1, Math.ceil((spec.sample_ms * 1e6) / perRound)), sink };
}

const cases = new Map();
const ready = { node: process.version, v8: process.versions.v8, cases: [] };
let sink = 0;
for (const c of spec.cases) {
  const k = c.kind === "expr" ? exprCase(c) : sheetCase(c);
  // Verification run from the first draw: must match rp's.
  cur = 0;
  let check = 0;
  for (let i = 0; i < spec.verify_iters; i++) check += k.round();
  // Warm-up (lets V8 optimise the functions), then calibration.
  const until = Date.now() + spec.warmup_ms;
  while (Date.now() < until) for (let i = 0; i < 100; i++) sink += k.round();
  const cal = calibrate(k.round);
  sink += cal.sink;
  k.iters = cal.iters;
  cases.set(c.name, k);
  ready.cases.push({ name: c.name, checksum: check, iters: cal.iters });
}
fs.writeSync(1, JSON.stringify(ready) + "\n");

// One sample per request line `sample <case>`: the wall-clock and CPU ns per evaluation.
function sample(name) {
  const k = cases.get(name);
  const c0 = cpuUs();
  const t0 = hr();
  for (let i = 0; i < k.iters; i++) sink += k.round();
  const t1 = hr();
  const c1 = cpuUs();
  const evals = k.iters * k.evals;
  return { wall: Number(t1 - t0) / evals, cpu: ((c1 - c0) * 1000) / evals, sink: sink % 1000 };
}

for (const line of lines) {
  const [cmd, name] = line.split(" ");
  if (cmd !== "sample") break;
  fs.writeSync(1, JSON.stringify(sample(name)) + "\n");
}
