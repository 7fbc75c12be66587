import assert from "node:assert/strict";
import { GatewayError } from "../errors/gateway_error.ts";
import { CapacitySlots } from "./capacity_slots.ts";

function refusal(fn: () => void): string {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof GatewayError);
    assert.equal(err.retryAfter, 1);
    return `${err.status} ${err.code}`;
  }
  return "taken";
}

Deno.test("slots: ceil(max × share) kept for priority; standard refused at its share, everyone at the max", () => {
  const s = new CapacitySlots(10, 0.25); // 3 priority-only slots
  assert.equal(s.reserved, 3);
  for (let i = 0; i < 7; i++) s.take(false);
  assert.equal(refusal(() => s.take(false)), "429 standard_capacity_saturated");
  for (let i = 0; i < 3; i++) s.take(true);
  assert.equal(s.inflight, 10);
  assert.equal(refusal(() => s.take(true)), "429 service_capacity_saturated");
  assert.equal(refusal(() => s.take(false)), "429 service_capacity_saturated");
  s.release();
  assert.equal(refusal(() => s.take(false)), "429 standard_capacity_saturated");
  assert.equal(refusal(() => s.take(true)), "taken");
  for (let i = 0; i < 10; i++) s.release();
  assert.equal(s.inflight, 0);
});

Deno.test("slots: priority requests may take standard slots; the reserve then stays for priority", () => {
  const s = new CapacitySlots(4, 0.5);
  s.take(true);
  s.take(true);
  assert.equal(refusal(() => s.take(false)), "429 standard_capacity_saturated");
  assert.equal(refusal(() => s.take(true)), "taken");
});

Deno.test("slots: share 0 keeps none, share 1 keeps all, a tiny share still keeps one; max 0 is unbounded", () => {
  assert.equal(new CapacitySlots(10, 0).reserved, 0);
  assert.equal(new CapacitySlots(512, 0.001).reserved, 1);
  const all = new CapacitySlots(2, 1);
  assert.equal(refusal(() => all.take(false)), "429 standard_capacity_saturated");
  assert.equal(refusal(() => all.take(true)), "taken");
  const none = new CapacitySlots(0, 0.1);
  for (let i = 0; i < 10_000; i++) none.take(i % 2 === 0);
  assert.equal(none.inflight, 10_000);
});
