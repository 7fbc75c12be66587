import assert from "node:assert/strict";
import { keyRecord } from "../store/testing/test_fixtures.ts";
import { KvStore } from "../store/kv_store.ts";
import type { Store } from "../store/store.ts";
import type { KeyRecord } from "../store/types.ts";
import { Accounts } from "./accounts.ts";
import { LeaseLedger } from "./lease_ledger.ts";
import { Logger } from "../util/log.ts";

const QUIET = new Logger("error", () => {});
const REFRESH_MS = 200;
const tick = () => new Promise((r) => setTimeout(r, 0));

Deno.test("Accounts on a shared store: a refresh poll read before an operator's change does not put the old caps back", async () => {
  const base = await KvStore.open(":memory:");
  await base.createKey(keyRecord("key_a", { balance: 1000n, credited: 1000n }));
  // keyChanges as the store answers it, held at a gate after the read while `gated`: the poll carries the
  // record as it was before the operator's change and applies it after that change was written.
  let gated = true;
  let entered!: () => void;
  const inPoll = new Promise<void>((r) => entered = r);
  let release!: () => void;
  const gate = new Promise<void>((r) => release = r);
  let polled!: () => void;
  const applied = new Promise<void>((r) => polled = r);
  const store = new Proxy(base, {
    get(target, prop) {
      if (prop === "keyChanges") {
        return async (since: number): Promise<KeyRecord[]> => {
          const read = await target.keyChanges(since);
          if (gated) {
            gated = false;
            entered();
            await gate;
            queueMicrotask(polled);
          }
          return read;
        };
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  }) as Store;
  const ledger = new LeaseLedger(store, {
    holder: "h_race",
    ttlMs: 30_000,
    idleMs: 60_000,
    commitIntervalMs: 1,
    log: QUIET,
  });
  const accounts = await Accounts.loadShared(store, { ledger, refreshMs: REFRESH_MS, log: QUIET });
  try {
    await inPoll; // the first poll has read the key (no cap) and waits
    const acc = await accounts.update("key_a", (r) => {
      r.caps.hourlySpend = 500n;
    });
    assert.equal(acc?.rec.caps.hourlySpend, 500n);
    release();
    await applied;
    await tick();
    assert.equal(acc.rec.caps.hourlySpend, 500n, "the stale poll put the old caps back");

    // Another process's later change still arrives with the next poll.
    await base.updateKey({ ...acc.rec, caps: { ...acc.rec.caps, hourlySpend: 700n } });
    const caps = () => acc.rec.caps.hourlySpend as bigint | null;
    for (let i = 0; i < 50 && caps() !== 700n; i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(caps(), 700n);
  } finally {
    await accounts.close();
    await base.close();
  }
});
