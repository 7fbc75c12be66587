/**
 * The backup tests' shared steps: a gateway with history (keys, top-ups, caps, a package, a payment method, usage),
 * load while a backup is taken, the operator CLI run as a process, and a snapshot file read back for checks.
 */
import assert from "node:assert/strict";
import { formatUsd, parseUsd } from "../../src/money/usd.ts";
import { readBackup } from "../../src/backup/reader.ts";
import type { BackupRecord } from "../../src/backup/records.ts";
import { admin, newKey } from "../support/gateway_process.ts";
import { ADMIN_TOKEN, post } from "../support/harness.ts";

export const ROOT = new URL("../..", import.meta.url).pathname;

export interface HistoryKey {
  id: string;
  key: string;
}

/** One chat request of `key`; its status. */
export async function chat(url: string, key: string, n: number): Promise<number> {
  const res = await post(`${url}/v1/chat/completions`, key, {
    model: "k3",
    max_tokens: 100,
    messages: [{ role: "user", content: `запрос ${n} [[sim:words=${3 + n % 7}]]` }],
  });
  await res.body?.cancel();
  return res.status;
}

/** Three keys with top-ups, caps, a package, a payment method's change and some usage. */
export async function makeHistory(url: string): Promise<HistoryKey[]> {
  const keys = [];
  for (const usd of ["5.00", "3.25", "1.10"]) keys.push(await newKey(url, parseUsd(usd)));
  await admin(url, "POST", `/admin/keys/${keys[0]!.id}/topup`, { amount_usd: "2.50" });
  await admin(url, "POST", `/admin/keys/${keys[1]!.id}/caps`, { daily_spend_usd: "4.00" });
  const pkg = await admin(url, "POST", "/admin/packages", {
    name: "Старт",
    credit_usd: "10.00",
    price: 500,
    currency: "XTR",
  });
  assert.ok(pkg.id, JSON.stringify(pkg));
  const method = await admin(url, "POST", "/admin/payment-methods/manual", {
    available: true,
    details: "Счёт 40817810000000000001",
  });
  assert.equal(method.available, true, JSON.stringify(method));
  for (let n = 0; n < 12; n++) assert.equal(await chat(url, keys[n % 3]!.key, n), 200);
  return keys;
}

/** Runs chat requests from `loops` clients until `stop` resolves; resolves with the statuses seen. */
export async function underLoad<T>(
  url: string,
  keys: HistoryKey[],
  loops: number,
  during: () => Promise<T>,
): Promise<{ result: T; statuses: number[] }> {
  let stopped = false;
  const statuses: number[] = [];
  const clients = Array.from({ length: loops }, async (_, c) => {
    for (let n = 0; !stopped; n++) statuses.push(await chat(url, keys[(c + n) % keys.length]!.key, 100 + n));
  });
  try {
    // A few requests in flight before the snapshot starts.
    while (statuses.length < loops * 2) await new Promise((r) => setTimeout(r, 5));
    return { result: await during(), statuses };
  } finally {
    stopped = true;
    await Promise.all(clients);
  }
}

/** GET /admin/backup whole, as bytes. */
export async function takeBackup(url: string): Promise<Uint8Array> {
  const res = await fetch(`${url}/admin/backup`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "application/x-ndjson");
  return await res.bytes();
}

/** A snapshot read back: its records by kind and, per key, its money, usage rows and ledger. */
export interface Snapshot {
  records: BackupRecord[];
  keys: Map<string, {
    credited: bigint;
    spent: bigint;
    rows: Extract<BackupRecord, { t: "usage" }>[];
    ledger: Extract<BackupRecord, { t: "ledger" }>[];
    hours: Extract<BackupRecord, { t: "usage_hour" }>[];
  }>;
}

export async function readSnapshot(bytes: Uint8Array): Promise<Snapshot> {
  const records: BackupRecord[] = [];
  for await (const rec of readBackup(ReadableStream.from([bytes]))) records.push(rec);
  const keys: Snapshot["keys"] = new Map();
  for (const r of records) {
    if (r.t === "key") {
      keys.set(r.id, { credited: r.credited, spent: r.spent, rows: [], ledger: [], hours: [] });
    }
    if (r.t === "usage") keys.get(r.keyId)!.rows.push(r);
    if (r.t === "ledger") keys.get(r.keyId)!.ledger.push(r);
    if (r.t === "usage_hour") keys.get(r.keyId)!.hours.push(r);
  }
  return { records, keys };
}

/**
 * One moment of the store: every key's spent is the sum of its rows' charges and its credited the sum of its
 * ledger (credits − debits), so no settlement is half in the snapshot; and nothing is held in it.
 */
export function assertConsistent(s: Snapshot): void {
  for (const [id, k] of s.keys) {
    const charged = k.rows.reduce((sum, r) => sum + r.charged, 0n);
    assert.equal(formatUsd(k.spent), formatUsd(charged), `key ${id}: spent vs Σ charged of its rows`);
    const ledger = k.ledger.reduce((sum, e) => sum + (e.kind === "credit" ? e.amountUsd : -e.amountUsd), 0n);
    assert.equal(formatUsd(k.credited), formatUsd(ledger), `key ${id}: credited vs its ledger`);
    const hourly = k.hours.reduce((sum, h) => sum + h.charged, 0n);
    assert.equal(formatUsd(hourly), formatUsd(charged), `key ${id}: Σ hourly charged vs Σ rows`);
    assert.equal(k.hours.reduce((n, h) => n + h.requests, 0), k.rows.length, `key ${id}: hourly requests`);
  }
}

/** `deno task admin …` as a process with `env` (and only the variables Deno needs besides). */
export async function runAdmin(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const keep = ["HOME", "PATH", "DENO_DIR", "XDG_CACHE_HOME"].flatMap((n) => {
    const v = Deno.env.get(n);
    return v === undefined ? [] : [[n, v] as const];
  });
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-kv", "scripts/admin.ts", ...args],
    cwd: ROOT,
    env: { ...Object.fromEntries(keep), ...env },
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}
