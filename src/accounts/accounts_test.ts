import assert from "node:assert/strict";
import { batchId, keyRecord, usageRow } from "../store/testing/test_fixtures.ts";
import { KvStore } from "../store/kv_store.ts";
import type { KeyRecord, UsageRow } from "../store/types.ts";
import { type Account, Accounts } from "./accounts.ts";
import type { CapCodes } from "./caps.ts";
import { Logger } from "../util/log.ts";

const QUIET = new Logger("error", () => {});

const CAP_CODES: CapCodes = {
  hourly_reserve_limit: "hourly_reserve_limit",
  daily_reserve_limit: "daily_reserve_limit",
  hourly_spend_limit: "hourly_spend_limit",
  daily_spend_limit: "daily_spend_limit",
};

function keyRec(id: string, balance: bigint): KeyRecord {
  return keyRecord(id, { balance, credited: balance });
}

function row(requestId: string, keyId: string, charged: bigint, over: Partial<UsageRow> = {}): UsageRow {
  return usageRow(requestId, keyId, {
    endpoint: "/v1/messages",
    status: "cancelled",
    createdAt: Date.now(),
    inputTokens: 100,
    outputTokens: 20,
    reserved: 500n,
    charged,
    usageSource: "estimated",
    ...over,
  });
}

/** The ledger identity as the API shows it (balance = available, the settled balance minus open holds). */
function assertIdentity(accounts: Accounts, acc: Account): void {
  assert.equal(acc.rec.credited, accounts.available(acc) + acc.held + acc.rec.spent);
  assert.ok(acc.rec.balance >= 0n);
}

Deno.test("Accounts.load settles leftover checkpoints once, never above the balance", async () => {
  const store = await KvStore.open(":memory:");
  await store.createKey(keyRec("key_a", 100n));
  await store.createKey(keyRec("key_b", 1_000n));
  await store.commit({
    id: batchId(),
    money: [],
    usage: [],
    open: [
      row("req_over", "key_a", 150n, { writtenOff: 5n }),
      row("req_b", "key_b", 300n),
      row("req_gone", "key_unknown", 50n),
    ],
  });

  const first = await Accounts.load(store, QUIET);
  const a = first.get("key_a")!;
  const b = first.get("key_b")!;
  assert.deepEqual([a.rec.balance, a.rec.spent], [0n, 100n], "charged at most the balance");
  assert.deepEqual([b.rec.balance, b.rec.spent], [700n, 300n]);
  assertIdentity(first, a);
  assertIdentity(first, b);
  assert.deepEqual(await store.listOpen(), [], "every checkpoint deleted, the unknown key's too");
  const rowA = (await store.listUsage("key_a", { limit: 10 })).rows;
  assert.equal(rowA.length, 1);
  assert.equal(rowA[0]!.charged, 100n);
  assert.equal(rowA[0]!.writtenOff, 55n, "what the balance could not cover is written off");
  assert.equal(rowA[0]!.status, "cancelled");
  assert.equal(rowA[0]!.usageSource, "estimated");
  assert.equal((await store.getKey("key_a"))!.balance, 0n, "the charge is durable at once");
  await first.close();

  const second = await Accounts.load(store, QUIET);
  assert.equal(second.get("key_a")!.rec.spent, 100n);
  assert.equal(second.get("key_b")!.rec.balance, 700n, "a second start charges nothing more");
  assert.equal((await store.listUsage("key_b", { limit: 10 })).rows.length, 1);
  await second.close();
  store.close();
});

/** The in-memory ledger's hold as a yes/no (its refusal is a GatewayError). */
const tryHold = (accounts: Accounts, acc: Account, amount: bigint, now: number) =>
  accounts.ledger.hold(acc, { amount, capCodes: CAP_CODES, now }).then(() => true, () => false);

Deno.test("Ledger.hold refuses a hold beyond the available credit", async () => {
  const store = await KvStore.open(":memory:");
  const accounts = await Accounts.load(store, QUIET);
  const { account } = await accounts.create({ balance: 100n });
  const now = Date.now();
  assert.equal(await tryHold(accounts, account, 60n, now), true);
  assert.equal(await tryHold(accounts, account, 41n, now), false);
  assert.equal(account.held, 60n, "a refused hold changes nothing");
  assert.equal(await tryHold(accounts, account, 40n, now), true);
  assert.equal(accounts.available(account), 0n);
  assert.equal(await tryHold(accounts, account, 1n, now), false);
  const w = accounts.ledger.windows(account, now);
  assert.deepEqual([w.hourReserved, w.dayReserved, w.open], [100n, 100n, 100n]);
  assertIdentity(accounts, account);
  await accounts.close();
  store.close();
});

Deno.test("Ledger.settle moves the hold to spent and keeps credited = balance + held + spent", async () => {
  const store = await KvStore.open(":memory:");
  const accounts = await Accounts.load(store, QUIET);
  const { account } = await accounts.create({ balance: 1_000n });
  const now = Date.now();
  await tryHold(accounts, account, 300n, now);
  await tryHold(accounts, account, 200n, now);
  assertIdentity(accounts, account);
  accounts.ledger.settle(
    account,
    300n,
    120n,
    row("req_1", account.rec.id, 120n, { createdAt: now, status: "ok" }),
  );
  assert.equal(account.held, 200n);
  assert.equal(account.rec.balance, 880n);
  assert.equal(account.rec.spent, 120n);
  assert.equal(accounts.available(account), 680n);
  assertIdentity(accounts, account);
  const w = accounts.ledger.windows(account, now);
  assert.deepEqual([w.open, w.hourSpent, w.daySpent, w.hourReserved], [200n, 120n, 120n, 500n]);

  await accounts.committer.flush();
  assert.equal((await store.getKey(account.rec.id))!.balance, 880n);
  assert.deepEqual((await store.listUsage(account.rec.id, { limit: 5 })).rows.map((r) => r.charged), [120n]);
  await accounts.close();
  store.close();
});

Deno.test("Accounts.topUp credits the store with its ledger entry in one step, then memory; update writes metadata only", async () => {
  const store = await KvStore.open(":memory:");
  const accounts = await Accounts.load(store, QUIET);
  const { account } = await accounts.create({ balance: 1_000n }, 5);
  await tryHold(accounts, account, 300n, Date.now());
  accounts.ledger.settle(account, 300n, 100n, row("req_1", account.rec.id, 100n, { status: "ok" }));
  await accounts.topUp(account.rec.id, 50n, 6);
  assert.deepEqual([account.rec.balance, account.rec.credited, account.rec.spent], [950n, 1_050n, 100n]);
  assert.equal((await store.getKey(account.rec.id))!.credited, 1_050n, "durable when topUp resolves");
  assert.deepEqual(
    (await store.listLedger(account.rec.id)).map((e) => [e.kind, e.amountUsd, e.reference, e.createdAt]),
    [["credit", 1_000n, "initial", 5], ["credit", 50n, "admin:topup", 6]],
  );
  assertIdentity(accounts, account);
  await accounts.committer.flush(); // the settlement's spend goes by group commit
  await accounts.update(account.rec.id, (r) => {
    r.name = "renamed";
  });
  await assert.rejects(
    accounts.update(account.rec.id, (r) => {
      r.balance += 1n;
    }),
    /metadata only/,
  );
  assert.equal(account.rec.balance, 950n, "a refused money change is undone");
  const stored = (await store.getKey(account.rec.id))!;
  assert.deepEqual([stored.balance, stored.credited, stored.spent, stored.name], [
    950n,
    1_050n,
    100n,
    "renamed",
  ]);
  await accounts.close();
  store.close();
});
