import assert from "node:assert/strict";
import {
  enqueue,
  isBound,
  leave,
  nextTimedChange,
  normalize,
  type PoolConfig,
  type PoolDoc,
  release,
  renew,
  ticketState,
} from "./pool_state.ts";

const CFG: PoolConfig = { accounts: 2, idleMs: 1_000, ttlMs: 500, maxQueue: 5 };
const T0 = 1_000_000;

const fresh = (cfg = CFG) => normalize(null, T0, cfg);
const join = (doc: PoolDoc, id: string, keyId: string, now = T0, session = `s_${id}`) =>
  enqueue(doc, { id, keyId, session, holder: "h1" }, now, CFG);

Deno.test("theta pool: free accounts go to the first waiters; a key holds at most one account", () => {
  const doc = fresh();
  assert.deepEqual(join(doc, "r1", "k1"), { kind: "granted", account: 0, exhausted: {} });
  // The same key waits for its own account even though account 1 is free.
  assert.deepEqual(join(doc, "r2", "k1"), { kind: "waiting", position: 0, length: 1 });
  assert.deepEqual(join(doc, "r3", "k2"), { kind: "granted", account: 1, exhausted: {} });
  assert.deepEqual(join(doc, "r4", "k3"), { kind: "waiting", position: 1, length: 2 });
  // r1 ends: its key's next request takes the account over (a new session of the key too), not k3.
  release(doc, 0, "r1", T0 + 10, CFG);
  assert.deepEqual(ticketState(doc, "r2"), { kind: "granted", account: 0, exhausted: {} });
  assert.deepEqual(ticketState(doc, "r4"), { kind: "waiting", position: 0, length: 1 });
  assert.equal(doc.accounts[0]!.session, "s_r2");
});

Deno.test("theta pool: a bound account stays its key's while idle, then any key may take it", () => {
  const doc = fresh({ ...CFG, accounts: 1 });
  const cfg1 = { ...CFG, accounts: 1 };
  enqueue(doc, { id: "r1", keyId: "k1", session: "a", holder: "h1" }, T0, cfg1);
  release(doc, 0, "r1", T0 + 100, cfg1);
  assert.equal(isBound(doc.accounts[0]!, T0 + 1_099, CFG.idleMs), true);
  assert.deepEqual(
    enqueue(doc, { id: "r2", keyId: "k2", session: "b", holder: "h1" }, T0 + 1_099, cfg1),
    { kind: "waiting", position: 0, length: 1 },
    "not free for another key while bound and idle",
  );
  // Any change after the idle release grants it.
  renew(doc, "h1", T0 + 1_100, cfg1);
  assert.deepEqual(ticketState(doc, "r2"), { kind: "granted", account: 0, exhausted: {} });
  assert.equal(doc.accounts[0]!.keyId, "k2");
});

Deno.test("theta pool: the next change by time alone — an idle binding's end, a holding's or a ticket's expiry", () => {
  const cfg1 = { ...CFG, accounts: 1 };
  const doc = fresh(cfg1);
  assert.equal(nextTimedChange(doc, T0, CFG.idleMs), undefined, "nothing bound, nothing held");
  enqueue(doc, { id: "r1", keyId: "k1", session: "a", holder: "h1" }, T0, cfg1);
  enqueue(doc, { id: "r2", keyId: "k2", session: "b", holder: "h1" }, T0 + 100, cfg1);
  assert.equal(nextTimedChange(doc, T0 + 100, CFG.idleMs), T0 + 500, "r1's holding expires unless renewed");
  release(doc, 0, "r1", T0 + 200, cfg1);
  renew(doc, "h1", T0 + 300, cfg1);
  // r2 waits for k1's idle binding to end at T0 + 1_200; its own ticket expires at T0 + 800 unless renewed.
  assert.equal(nextTimedChange(doc, T0 + 300, CFG.idleMs), T0 + 800);
  renew(doc, "h1", T0 + 1_000, cfg1);
  assert.equal(nextTimedChange(doc, T0 + 1_000, CFG.idleMs), T0 + 1_200);
  renew(doc, "h1", T0 + 1_200, cfg1);
  assert.deepEqual(ticketState(doc, "r2"), { kind: "granted", account: 0, exhausted: {} });
  assert.equal(nextTimedChange(doc, T0 + 1_200, CFG.idleMs), T0 + 1_700, "r2's holding");
});

Deno.test("theta pool: a full queue refuses; leaving removes the ticket, or returns a grant that raced it", () => {
  const doc = fresh({ ...CFG, accounts: 1 });
  const cfg1 = { ...CFG, accounts: 1 };
  enqueue(doc, { id: "r0", keyId: "k0", session: "x", holder: "h1" }, T0, cfg1);
  for (let i = 1; i <= 5; i++) {
    enqueue(doc, { id: `r${i}`, keyId: `k${i}`, session: "x", holder: "h1" }, T0, cfg1);
  }
  assert.deepEqual(enqueue(doc, { id: "r6", keyId: "k6", session: "x", holder: "h1" }, T0, cfg1), {
    kind: "full",
    length: 5,
  });
  assert.deepEqual(leave(doc, "r3", T0, cfg1), { kind: "gone" });
  assert.deepEqual(doc.queue.map((t) => t.id), ["r1", "r2", "r4", "r5"]);
  release(doc, 0, "r0", T0, cfg1);
  renew(doc, "h1", T0 + 1_000, cfg1); // a waiter's look past the idle release grants r1…
  assert.deepEqual(leave(doc, "r1", T0 + 1_000, cfg1), { kind: "granted", account: 0, exhausted: {} }); // …whose leave raced it
  assert.deepEqual(doc.queue.map((t) => t.id), ["r2", "r4", "r5"]);
});

Deno.test("theta pool: a dead process's holdings and tickets expire; a live one's are renewed", () => {
  let doc = fresh();
  enqueue(doc, { id: "dead1", keyId: "k1", session: "a", holder: "dead" }, T0, CFG);
  enqueue(doc, { id: "live1", keyId: "k2", session: "b", holder: "live" }, T0, CFG);
  enqueue(doc, { id: "dead2", keyId: "k3", session: "c", holder: "dead" }, T0, CFG);
  renew(doc, "live", T0 + 400, CFG);
  doc = normalize(doc, T0 + 500, CFG);
  assert.equal(doc.accounts[0]!.busy, null, "the dead holding came back");
  assert.equal(doc.accounts[0]!.keyId, null, "to every key, at once");
  assert.equal(doc.accounts[1]!.busy?.ticket, "live1");
  assert.deepEqual(doc.queue, [], "the dead ticket is gone");
  assert.equal(doc.accounts[0]!.releasedAt, T0 + 500);
});

Deno.test("theta pool: exhausted models are kept per account until their time", () => {
  let doc = fresh();
  join(doc, "r1", "k1");
  release(doc, 0, "r1", T0, CFG, { "theta3.8-max": T0 + 60_000 });
  assert.deepEqual(join(doc, "r2", "k1").kind === "granted" && ticketState(doc, "r2"), {
    kind: "granted",
    account: 0,
    exhausted: { "theta3.8-max": T0 + 60_000 },
  });
  doc = normalize(doc, T0 + 60_000, CFG);
  assert.deepEqual(doc.accounts[0]!.exhausted, {});
});

Deno.test("theta pool: random arrivals and releases — never two requests on an account, FIFO among keys, every key one account", () => {
  const cfg: PoolConfig = { accounts: 3, idleMs: 50, ttlMs: 10_000, maxQueue: 1_000 };
  let rnd = 42;
  const random = () => (rnd = (rnd * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  const doc = normalize(null, 0, cfg);
  const grantedAt = new Map<string, number>();
  const keyOf = new Map<string, string>();
  let n = 0;
  for (let now = 0; now < 5_000; now += 5) {
    if (random() < 0.5) {
      const id = `r${n++}`;
      const keyId = `k${Math.floor(random() * 5)}`;
      keyOf.set(id, keyId);
      enqueue(doc, { id, keyId, session: "s", holder: "h" }, now, cfg);
    }
    const busy = doc.accounts.map((a, i) => [a, i] as const).filter(([a]) => a.busy);
    if (busy.length > 0 && random() < 0.45) {
      const [a, i] = busy[Math.floor(random() * busy.length)]!;
      release(doc, i, a.busy!.ticket, now, cfg);
    }
    renew(doc, "h", now, cfg); // the waiters' periodic look: grants what idle releases freed
    const holders = doc.accounts.filter((a) => a.busy).map((a) => a.busy!.ticket);
    assert.equal(new Set(holders).size, holders.length, "a ticket on one account at most");
    for (const id of holders) if (!grantedAt.has(id)) grantedAt.set(id, now);
    const keys = doc.accounts.filter((a) => isBound(a, now, cfg.idleMs)).map((a) => a.keyId);
    assert.equal(new Set(keys).size, keys.length, "a key bound to one account at most");
    // FIFO: a waiting ticket whose key has no bound account means no account was free for it — so every
    // account is busy or bound to another key.
    for (const t of doc.queue) {
      if (doc.accounts.some((a) => a.keyId === t.keyId && isBound(a, now, cfg.idleMs))) continue;
      assert.ok(doc.accounts.every((a) => isBound(a, now, cfg.idleMs)), `ticket ${t.id} skipped`);
    }
  }
  assert.ok(grantedAt.size > 100, `grants: ${grantedAt.size}`);
  // One key's requests are served in arrival order.
  const served = [...grantedAt.keys()]; // insertion order = grant order
  for (const key of new Set(keyOf.values())) {
    const order = served.filter((id) => keyOf.get(id) === key).map((id) => Number(id.slice(1)));
    assert.deepEqual(order, [...order].sort((a, b) => a - b), `key ${key} served out of order`);
  }
});
