/** Starts a real gateway (Deno.serve on a free port, in-memory KV) in front of a real simulator. */
import { type Simulator, startSimulator } from "../../sim/server.ts";
import { freshSchema } from "../../src/store/testing/pg_test_schema.ts";
import { parseConfig } from "../../src/config/env.ts";
import { type Gateway, startGateway } from "../../src/gateway.ts";
import type { LogSink } from "../../src/util/log.ts";

export const ADMIN_TOKEN = "test-admin-token-0123456789";

export interface TestGateway {
  gw: Gateway;
  sim: Simulator;
  url: string;
  admin(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }>;
  /** A fresh key with the given balance; returns its id and the full key. */
  newKey(balanceUsd?: string, extra?: Record<string, unknown>): Promise<{ id: string; key: string }>;
  close(): Promise<void>;
}

/** `logSink`: captures the gateway's log lines (tests run at LOG_LEVEL=error unless `env` says otherwise). */
export async function startTestGateway(
  env: Record<string, string> = {},
  opts: { logSink?: LogSink } = {},
): Promise<TestGateway> {
  const sim = await startSimulator();
  // TEST_GATEWAY_STORE=postgres: every test gateway serves from a fresh Postgres schema (leases and all).
  const schema = Deno.env.get("TEST_GATEWAY_STORE") === "postgres" ? await freshSchema() : undefined;
  const config = parseConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    DATABASE_URL: schema?.url ?? "memory",
    ADMIN_TOKEN,
    ALPHA_UPSTREAM_URL: sim.url,
    ALPHA_UPSTREAM_KEY: "up-alpha",
    BETA_UPSTREAM_URL: sim.url,
    BETA_UPSTREAM_KEY: "up-beta",
    DELTA_UPSTREAM_URL: sim.url,
    DELTA_UPSTREAM_KEY: "up-delta",
    THETA_UPSTREAM_URL: sim.url,
    THETA_UPSTREAM_KEYS: "up-theta-1,up-theta-2",
    // Theta's two accounts are free for another key as soon as a request ends (the spec's 10 minutes would
    // make the third key in a test wait): the queue's own tests (theta_queue_test.ts) set their idle release.
    THETA_IDLE_RELEASE_MS: "1",
    LOG_LEVEL: "error", // one request line per request would bury the test output
    ...env,
  });
  const gw = await startGateway(config, opts);
  const admin = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(gw.url + path, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, json: await res.json() };
  };
  const keyIds: string[] = [];
  return {
    gw,
    sim,
    url: gw.url,
    admin,
    async newKey(balanceUsd = "10.00", extra = {}) {
      const { status, json } = await admin("POST", "/admin/keys", { balance_usd: balanceUsd, ...extra });
      if (status !== 201) throw new Error(`key create failed: ${status} ${JSON.stringify(json)}`);
      keyIds.push(json.id);
      return { id: json.id, key: json.key };
    },
    async close() {
      try {
        // Ledger identity after every test (billing issue): credited = balance + open holds + spent, exactly;
        // and every credit and debit of the key is in its ledger. The keys the shop sold too.
        const owned = (await gw.app.store.listKeyOwners()).map((o) => o.keyId);
        for (const id of new Set([...keyIds, ...owned])) await assertLedgerIdentity(gw, id);
      } finally {
        await gw.close();
        await sim.close();
        await schema?.drop();
      }
    },
  };
}

/** POST JSON with a key on the right header for the surface. */
export function post(url: string, key: string | null, body: unknown, headers: Record<string, string> = {}) {
  return fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(key === null ? {} : { authorization: `Bearer ${key}` }),
      ...headers,
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

export const ANTHROPIC_HEADERS = { "anthropic-version": "2023-06-01" };

/**
 * initial + top-ups = available balance + open holds + settled spend, in exact pico-USD, and = the key's
 * ledger entries (credits − debits); the settled spend equals what the durable usage rows charged is checked
 * by the billing tests.
 */
export async function assertLedgerIdentity(gw: Gateway, keyId: string): Promise<void> {
  const accounts = gw.app.accounts;
  const acc = await accounts.find(keyId);
  if (!acc) throw new Error(`no account ${keyId}`);
  // A shared store (TEST_GATEWAY_STORE=postgres): the money as the store has it, and no credit leased twice.
  const leased = await accounts.syncMoney(acc);
  const r = acc.rec;
  const available = leased === undefined ? accounts.available(acc) : r.balance - acc.held;
  if (r.credited !== available + acc.held + r.spent) {
    throw new Error(
      `ledger identity broken for ${keyId}: credited ${r.credited} != available ${available} + held ${acc.held} + spent ${r.spent}`,
    );
  }
  if (leased !== undefined && (leased > r.credited - r.spent || r.balance < 0n)) {
    throw new Error(`lease overcommitted for ${keyId}: leased ${leased}, balance ${r.balance}`);
  }
  let net = 0n;
  for (const e of await gw.app.store.listLedger(keyId)) {
    net += e.kind === "credit" ? e.amountUsd : -e.amountUsd;
  }
  if (net !== r.credited) {
    throw new Error(`ledger entries of ${keyId} add up to ${net}, its credited is ${r.credited}`);
  }
}

/** Runs `fn` against a fresh test gateway and always closes it (ledger identity checked on close). */
export async function withGateway(
  fn: (t: TestGateway) => Promise<void>,
  env: Record<string, string> = {},
): Promise<void> {
  const t = await startTestGateway(env);
  try {
    await fn(t);
  } finally {
    await t.close();
  }
}
