import assert from "node:assert/strict";
import type { Store } from "./store.ts";
import { isPgOutage } from "./pg_outage.ts";
import { guardStore, StoreUnavailableError } from "./unavailable.ts";

const failing = (err: unknown) =>
  ({ getKey: () => Promise.reject(err), close: () => Promise.resolve() }) as unknown as Store;

Deno.test("guardStore turns the backend's outages into StoreUnavailableError and leaves other failures alone", async () => {
  const outage = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
  await assert.rejects(guardStore(failing(outage), isPgOutage).getKey("k"), (e: unknown) => {
    assert.ok(e instanceof StoreUnavailableError);
    assert.equal(e.cause, outage);
    return true;
  });
  const bug = Object.assign(new Error('relation "keys" does not exist'), { code: "42P01" });
  await assert.rejects(guardStore(failing(bug), isPgOutage).getKey("k"), (e: unknown) => e === bug);
});

Deno.test("isPgOutage: connection exceptions, shutdowns and socket errors; not SQL errors", () => {
  for (const code of ["08006", "08001", "57P01", "57P03", "53300", "CONNECTION_CLOSED", "ECONNRESET"]) {
    assert.equal(isPgOutage({ code }), true, code);
  }
  for (const code of ["23505", "42P01", "22003", undefined]) {
    assert.equal(isPgOutage({ code }), false, String(code));
  }
  assert.equal(isPgOutage(null), false);
});

Deno.test("guardStore passes a call that returns no promise through untouched (watchDocument's stop)", () => {
  const stop = () => {};
  const seen: unknown[] = [];
  const store = {
    watchDocument(_name: string, onChange: () => void) {
      seen.push(this, onChange);
      return stop;
    },
  } as unknown as Store;
  const onChange = () => {};
  assert.equal(guardStore(store, () => true).watchDocument("d", onChange), stop);
  assert.deepEqual(seen, [store, onChange]);
});
