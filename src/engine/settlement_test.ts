/**
 * The settlement guard: the hold settles exactly once whatever the path — a second settlement is a no-op, a
 * path that reached no outcome is released free by `close`, and a stream whose 200 went out keeps the hold
 * until it ends.
 */
import assert from "node:assert/strict";
import type { Reservation, SettleInput } from "../billing/ledger.ts";
import { emptyUsage } from "../ir/usage.ts";
import { Settlement } from "./settlement.ts";

/** A reservation that records what it was settled with (the real one is idempotent too: not relied on). */
function recording() {
  const settled: SettleInput[] = [];
  const reservation = { settle: (s: SettleInput) => (settled.push(s), 0n) } as unknown as Reservation;
  return { reservation, settled };
}

const ok: SettleInput = {
  usage: { ...emptyUsage(), inputTokens: 10, outputTokens: 5 },
  usageSource: "upstream",
  status: "ok",
};

Deno.test("Settlement: settled twice, the reservation settles once, with the first outcome", () => {
  const { reservation, settled } = recording();
  const s = new Settlement(reservation, new AbortController().signal);
  assert.equal(s.settle(ok), true);
  assert.equal(s.settle({ ...ok, status: "error" }), false);
  assert.equal(s.fail(), false);
  s.close(false);
  assert.deepEqual(settled, [ok]);
  assert.equal(s.settled, true);
});

Deno.test("Settlement: closed without an outcome, the hold is released free once", () => {
  const { reservation, settled } = recording();
  const s = new Settlement(reservation, new AbortController().signal);
  s.close(false);
  s.close(false);
  assert.deepEqual(settled, [{ usage: emptyUsage(), usageSource: "upstream", status: "error" }]);
});

Deno.test("Settlement: an answered exchange that never settled is released free, not left held", () => {
  const { reservation, settled } = recording();
  new Settlement(reservation, new AbortController().signal).close(true);
  assert.equal(settled.length, 1);
  assert.equal(settled[0]!.status, "error");
});

Deno.test("Settlement: a client gone while the exchange waits on the upstream cancelled it; after a head, an error", () => {
  for (const [waiting, status] of [[true, "cancelled"], [false, "error"]] as const) {
    const { reservation, settled } = recording();
    const client = new AbortController();
    const s = new Settlement(reservation, client.signal);
    s.waiting = waiting;
    client.abort();
    s.close(false);
    assert.deepEqual(settled.map((x) => [x.status, x.usage.outputTokens]), [[status, 0]]);
  }
});

Deno.test("Settlement: a stream whose 200 went out keeps the hold until its end settles it", () => {
  const { reservation, settled } = recording();
  const s = new Settlement(reservation, new AbortController().signal);
  let abandoned = 0;
  s.streaming({ abandon: () => abandoned++ });
  s.close(true);
  assert.deepEqual([settled.length, abandoned], [0, 0], "the pipeline owns the hold now");
  assert.equal(s.settle(ok), true, "the stream's end settles it");
  assert.deepEqual(settled, [ok]);
});

Deno.test("Settlement: a stream whose exchange failed before its 200 is released free, then ended", () => {
  const { reservation, settled } = recording();
  const s = new Settlement(reservation, new AbortController().signal);
  const order: string[] = [];
  s.streaming({
    abandon: () => {
      order.push("abandon");
      // The pipeline's own end, reported as it is cancelled: finds the hold settled.
      assert.equal(s.settle({ ...ok, status: "cancelled" }), false);
    },
  });
  s.close(false);
  s.close(false);
  assert.deepEqual(order, ["abandon"]);
  assert.deepEqual(settled.map((x) => x.status), ["error"]);
});

Deno.test("Settlement: a refused stream settled before the exchange failed: nothing more", () => {
  const { reservation, settled } = recording();
  const s = new Settlement(reservation, new AbortController().signal);
  let abandoned = 0;
  s.streaming({ abandon: () => abandoned++ });
  const refused: SettleInput = { usage: emptyUsage(), usageSource: "upstream", status: "error" };
  assert.equal(s.settle(refused), true);
  s.close(false);
  assert.deepEqual(settled, [refused]);
  assert.equal(abandoned, 1, "ending a stream that is over already is its own no-op");
});
