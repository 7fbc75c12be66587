/**
 * StreamPipeline: the family's run deadline (gamma/eta's delta_run_timeout), a before-content check that
 * passes early, and the family's code for a broken upstream; the settlement of a run the deadline cut.
 */
import assert from "node:assert/strict";
import type { Reservation } from "../billing/ledger.ts";
import { GatewayError } from "../errors/gateway_error.ts";
import { emptyUsage } from "../ir/usage.ts";
import { streamSettlement } from "./settle.ts";
import type { StreamOutcome } from "./stream_pipeline.ts";
import {
  comment,
  finish,
  type Harness,
  pipeline,
  sleep,
  start,
  text,
  upstream,
} from "./testing/stream_pipeline.ts";

const runTimeout = (ms: number) => ({
  at: Date.now() + ms,
  error: () => new GatewayError("delta_run_timeout"),
});

/** The shared ticker's timer is unref'd (a real server keeps the process alive); here a test timer does. */
async function keepAlive<T>(fn: () => Promise<T>): Promise<T> {
  const alive = setInterval(() => {}, 10);
  try {
    return await fn();
  } finally {
    clearInterval(alive);
  }
}

function assertExpired(p: Harness, deliveredChars: number, events: number) {
  assert.equal(p.outcomes.length, 1);
  const o = p.outcomes[0]!;
  assert.equal(o.error?.code, "delta_run_timeout");
  assert.equal(o.expired, true);
  assert.equal(o.finished, false);
  assert.equal(o.cancelled, false);
  assert.equal(o.deliveredChars, deliveredChars);
  assert.equal(o.events, events);
  assert.equal(p.aborts(), 1, "the upstream request is aborted");
}

Deno.test("StreamPipeline ends a run past its deadline with the deadline's error frame, after what was sent", async () => {
  const up = upstream([[start, text("abc")], [text("de")], "hang"]);
  const p = pipeline(up.batches, { deadline: runTimeout(80) });
  const t0 = Date.now();
  const chunks = await keepAlive(() => p.rest());
  const waited = Date.now() - t0;
  assert.deepEqual(chunks, ["start\n", "text:abc\n", "text:de\n", "error:delta_run_timeout:req_t\n"]);
  assert.ok(waited >= 75 && waited < 1_000, `cut after ${waited} ms`);
  assertExpired(p, 5, 3);
  assert.equal(up.state.cancelled, true, "the upstream read is cancelled");
});

Deno.test("StreamPipeline counts the deadline from the run's start, not from the last frame (an upstream that keeps sending)", async () => {
  const script: (ReturnType<typeof text>[] | number)[] = [[start]];
  for (let i = 0; i < 40; i++) script.push(15, [text("x")]);
  script.push([finish]);
  const up = upstream(script);
  // The idle limit never fires (a frame every 15 ms), the run limit does.
  const p = pipeline(up.batches, { idleTimeoutMs: 50, deadline: runTimeout(120) });
  const chunks = await keepAlive(() => p.rest());
  assert.equal(chunks.at(-1), "error:delta_run_timeout:req_t\n");
  const delivered = chunks.filter((c) => c === "text:x\n").length;
  assert.ok(delivered >= 3 && delivered < 40, `${delivered} deltas before the cut`);
  assertExpired(p, delivered, delivered + 1);
});

Deno.test("StreamPipeline ends a run past its deadline while the client is not pulling (backpressure is no excuse)", async () => {
  const up = upstream([[start], [text("a")], [finish]]);
  const p = pipeline(up.batches, { deadline: runTimeout(50) });
  assert.equal(await p.next(), "start\n");
  await keepAlive(() => sleep(150));
  assertExpired(p, 0, 1);
  assert.deepEqual(await p.rest(), ["error:delta_run_timeout:req_t\n"]);
});

Deno.test("StreamPipeline does not cut an answer that already finished, even if the client is slow to read it", async () => {
  const up = upstream([[start, text("a"), finish]]);
  const p = pipeline(up.batches, {
    deadline: runTimeout(40),
    beforeContent: () => undefined,
  });
  assert.equal(await p.start(), undefined); // reads the whole answer before the 200
  await keepAlive(() => sleep(120));
  assert.deepEqual(await p.rest(), ["start\ntext:a\nfinish\n"]);
  assert.equal(p.outcomes[0]!.error, undefined);
  assert.equal(p.outcomes[0]!.expired, undefined);
});

Deno.test("StreamPipeline: a deadline before the first event ends the stream with only the error frame, billed as a run", async () => {
  const up = upstream([[comment], "hang"]);
  const p = pipeline(up.batches, { deadline: runTimeout(50), beforeContent: () => undefined });
  // The 200 is held for the before-content check; the deadline ends the wait, and the 200 carries the error.
  assert.equal(await keepAlive(() => p.start()), undefined);
  assert.deepEqual(await p.rest(), ["error:delta_run_timeout:req_t\n"]);
  assertExpired(p, 0, 0);
  const settled = streamSettlement(holding(500), p.outcomes[0]!, 40);
  assert.deepEqual(settled, {
    usage: { ...emptyUsage(), inputTokens: 40, outputTokens: 0 },
    usageSource: "estimated",
    status: "error",
  }, "a run the deadline cut is paid for, at least its input estimate");
});

Deno.test("StreamPipeline sends what start read before the deadline's error frame when the client pulls late", async () => {
  const up = upstream([[start, text("abc")], "hang"]);
  const p = pipeline(up.batches, { deadline: runTimeout(40), beforeContent: () => undefined });
  assert.equal(await p.start(), undefined);
  await keepAlive(() => sleep(120));
  assert.deepEqual(await p.rest(), ["start\ntext:abc\nerror:delta_run_timeout:req_t\n"]);
  assertExpired(p, 3, 2);
});

Deno.test("StreamPipeline.start: a before-content check that passes ends the wait at that event", async () => {
  const up = upstream([[comment], [start], [comment], [text("a")], [finish]]);
  const seen: string[] = [];
  const p = pipeline(up.batches, {
    beforeContent: (e) => (seen.push(e.type), e.type === "start" ? "pass" : undefined),
  });
  assert.equal(await p.start(), undefined);
  assert.equal(up.state.pulls, 2, "read up to the passing event, no further");
  assert.deepEqual(await p.rest(), ["start\n", "text:a\n", "finish\n"]);
  assert.deepEqual(seen, ["start"], "not called after it passed");
});

Deno.test("StreamPipeline ends a broken upstream with the family's code for it", async () => {
  const orig = console.error;
  console.error = () => {};
  try {
    for (
      const [script, why] of [
        [[[start, text("a")], new Error("connection reset")], "read failure"],
        [[[start, text("a")], [{ data: "{not json" }]], "malformed frame"],
        [[[start, text("a")]], "body ended before the finish"],
      ] as const
    ) {
      const up = upstream([...script] as Parameters<typeof upstream>[0]);
      const p = pipeline(up.batches, { brokenError: () => new GatewayError("delta_upstream_error") });
      const chunks = await p.rest();
      assert.equal(chunks.join("").split("\n").at(-2), "error:delta_upstream_error:req_t", why);
      assert.equal(p.outcomes[0]!.error?.code, "delta_upstream_error", why);
      assert.equal(p.outcomes[0]!.expired, undefined, why);
    }
  } finally {
    console.error = orig;
  }
});

Deno.test("streamSettlement: a stream with no decoded event is free unless the deadline cut it", () => {
  const none: StreamOutcome = {
    usage: undefined,
    deliveredChars: 0,
    events: 0,
    finished: false,
    cancelled: false,
  };
  assert.equal(
    streamSettlement(holding(500), { ...none, error: new GatewayError("delta_upstream_error") }, 40),
    undefined,
  );
  const cut = streamSettlement(holding(500), {
    ...none,
    error: new GatewayError("delta_run_timeout"),
    expired: true,
  }, 40);
  assert.equal(cut?.usage.inputTokens, 40);
  assert.equal(cut?.usageSource, "estimated");
});

/** streamSettlement reads only the reservation's output budget. */
function holding(outputBudget: number): Reservation {
  return { input: { outputBudget } } as unknown as Reservation;
}
