import assert from "node:assert/strict";
import { batchedSink, Logger } from "./log.ts";

Deno.test("logger: one JSON line per call at or above the level, ts/level/msg first", () => {
  const lines: string[] = [];
  const log = new Logger("warn", (l) => lines.push(l), () => Date.UTC(2025, 0, 2, 3, 4, 5));
  log.info("dropped", { a: 1 });
  log.debug("dropped");
  log.warn("kept", { request_id: "req_1", n: 2 });
  log.error("also kept");
  assert.equal(lines.length, 2);
  assert.equal(
    lines[0],
    '{"ts":"2025-01-02T03:04:05.000Z","level":"warn","msg":"kept","request_id":"req_1","n":2}',
  );
  assert.deepEqual(JSON.parse(lines[1]!), {
    ts: "2025-01-02T03:04:05.000Z",
    level: "error",
    msg: "also kept",
  });
  log.warn('a "quoted"\\ message\n');
  assert.deepEqual(JSON.parse(lines[2]!).msg, 'a "quoted"\\ message\n');
  assert.equal(log.enabled("info"), false);
  assert.equal(log.enabled("error"), true);
});

Deno.test("logger: a line that cannot be built or written is dropped, never thrown", () => {
  const failing = new Logger("info", () => {
    throw new Error("stdout closed");
  });
  failing.info("request", { a: 1 });
  const lines: string[] = [];
  new Logger("info", (l) => lines.push(l)).info("request", { money: 1n });
  assert.deepEqual(lines, []);
});

Deno.test("batchedSink: the lines of one turn go out in one write, on the scheduled turn; a full buffer at once", () => {
  const writes: string[] = [];
  let turn: (() => void) | undefined;
  const out = batchedSink((b) => writes.push(new TextDecoder().decode(b)), (fn) => turn = fn);
  out.sink("a");
  out.sink("b");
  assert.deepEqual(writes, [], "nothing is written before the turn");
  turn!();
  assert.deepEqual(writes, ["a\nb\n"]);
  turn = undefined;
  out.sink("x".repeat(64 * 1024));
  assert.equal(writes.length, 2, "a full buffer is written at once");
  out.sink("c");
  out.flush();
  assert.equal(writes[2], "c\n");
  turn!(); // the turn scheduled for "c" finds nothing left
  assert.equal(writes.length, 3);
});

Deno.test("logger: lines of one millisecond share its timestamp; the next millisecond gets its own", () => {
  const lines: string[] = [];
  let now = Date.UTC(2025, 0, 2, 3, 4, 5, 6);
  const log = new Logger("info", (l) => lines.push(l), () => now);
  log.info("a");
  log.info("b");
  now += 1;
  log.info("c");
  now = NaN; // a clock that cannot be written: the line is dropped, and the next good reading written again
  log.info("dropped");
  now = Date.UTC(2025, 0, 2, 3, 4, 5, 6);
  log.info("d");
  assert.deepEqual(lines.map((l) => [JSON.parse(l).ts, JSON.parse(l).msg]), [
    ["2025-01-02T03:04:05.006Z", "a"],
    ["2025-01-02T03:04:05.006Z", "b"],
    ["2025-01-02T03:04:05.007Z", "c"],
    ["2025-01-02T03:04:05.006Z", "d"],
  ]);
});
