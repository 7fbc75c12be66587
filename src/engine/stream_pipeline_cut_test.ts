/**
 * StreamPipeline and a graceful shutdown's cut (`StreamOptions.cut`, docs/operator-guide.md "Graceful shutdown"): the stream
 * ends at once with one error frame of the cut's code, after what was sent — while the client reads, while it
 * does not, before the first pull — and reports an error outcome that settles like any stream failing after
 * the 200 (billed for what ran).
 */
import assert from "node:assert/strict";
import type { Reservation } from "../billing/ledger.ts";
import { GatewayError } from "../errors/gateway_error.ts";
import { InFlight } from "../util/in_flight.ts";
import { streamSettlement } from "./settle.ts";
import { fakeRelay, finish, pipeline, start, text, upstream } from "./testing/stream_pipeline.ts";

const shutdown = () => new GatewayError("service_unavailable", { retryAfter: 1 });
/** The shutdown's cut, as src/http/shutdown.ts makes it: the grace over at once, nothing waited for after. */
const cutNow = (cut: InFlight, reason = shutdown()) => cut.drain(0, reason, 0);

Deno.test("StreamPipeline cut while an upstream read is outstanding: one service_unavailable frame, settled as an error", async () => {
  const cut = new InFlight();
  const up = upstream([[start, text("abc")], "hang"]);
  const p = pipeline(up.batches, { cut });
  assert.equal(await p.next(), "start\n");
  assert.equal(await p.next(), "text:abc\n");
  const reading = p.rest();
  await cutNow(cut);
  assert.deepEqual(await reading, ["error:service_unavailable:req_t\n"]);
  assert.equal(p.outcomes.length, 1);
  const o = p.outcomes[0]!;
  assert.equal(o.error?.code, "service_unavailable");
  assert.equal(o.cancelled, false);
  assert.equal(o.finished, false);
  assert.equal(o.deliveredChars, 3);
  assert.equal(p.aborts(), 1, "the upstream request is aborted");
  assert.equal(up.state.cancelled, true);
  // Billed for what ran: the delivered output, estimated (no upstream usage came), status error.
  const reservation = { input: { outputBudget: 1_000 } } as unknown as Reservation;
  const s = streamSettlement(reservation, o, 10)!;
  assert.equal(s.status, "error");
  assert.equal(s.usageSource, "estimated");
  assert.equal(s.usage.inputTokens, 10);
  assert.ok(s.usage.outputTokens > 0);
});

Deno.test("StreamPipeline cut while the client is not pulling: settled at once, the frame waits for the client", async () => {
  const cut = new InFlight();
  const up = upstream([[start], [text("a")], [finish]]);
  const p = pipeline(up.batches, { cut });
  await cutNow(cut);
  assert.equal(p.outcomes.length, 1, "settled without a pull");
  assert.equal(p.outcomes[0]!.error?.code, "service_unavailable");
  assert.deepEqual(await p.rest(), ["error:service_unavailable:req_t\n"]);
});

Deno.test("StreamPipeline on a relay: the cut's frame is the surface's error frame, once; a second abort changes nothing", async () => {
  const cut = new InFlight();
  const up = upstream([[start], "hang"]);
  const p = pipeline(up.batches, { cut, mode: { kind: "relay", relay: fakeRelay() } });
  assert.match((await p.next())!, /^relay:/);
  await cutNow(cut);
  await cutNow(cut, new GatewayError("internal_error"));
  assert.deepEqual(await p.rest(), ["relay-error:service_unavailable\n"]);
  assert.equal(p.outcomes.length, 1);
});

Deno.test("StreamPipeline made after the cut (the signal already aborted) ends at once", async () => {
  const cut = new InFlight();
  await cutNow(cut);
  const p = pipeline(upstream([[start], [finish]]).batches, { cut });
  assert.equal(p.outcomes[0]?.error?.code, "service_unavailable");
  assert.deepEqual(await p.rest(), ["error:service_unavailable:req_t\n"]);
});

Deno.test("StreamPipeline: an answer read whole before the 200 is not cut — it closes normally on the cut", async () => {
  const cut = new InFlight();
  const p = pipeline(upstream([[start, text("ok"), finish]]).batches, {
    cut,
    beforeContent: () => undefined,
  });
  assert.equal(await p.start(), undefined);
  await cutNow(cut);
  assert.deepEqual(await p.rest(), ["start\ntext:ok\nfinish\n"]);
  assert.equal(p.outcomes[0]!.error, undefined);
  assert.equal(p.outcomes[0]!.finished, true);
});

Deno.test("StreamPipeline: a stream that ended before the cut is left alone", async () => {
  const cut = new InFlight();
  const p = pipeline(upstream([[start, text("ok"), finish]]).batches, { cut });
  assert.deepEqual(await p.rest(), ["start\n", "text:ok\nfinish\n"]);
  await cutNow(cut);
  assert.equal(p.outcomes.length, 1);
  assert.equal(p.outcomes[0]!.error, undefined);
});
