/**
 * Several gateway processes on one shared store (docs/ledger_leases.md): real processes
 * (tests/support/gateway_process.ts) on a fresh Postgres schema each (tests/support/pg_harness.ts), or on one local `kv:` file.
 * Money is checked exactly through the admin key view and the usage rows once no request is in flight and the
 * idle leases have returned: credited = balance + spent, held and leased 0, the rows exactly the admitted
 * requests, Σ charged = spent. Also: a reserve cap across processes, a kill -9 mid-stream, WORKERS=2.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { startSimulator } from "../../sim/server.ts";
import { HOUR } from "../../src/accounts/windows.ts";
import { formatUsd, parseUsd } from "../../src/money/usd.ts";
import { TEST_DATABASE_URL } from "../../src/store/testing/pg_test_schema.ts";
import {
  admin,
  exitWithin,
  freePort,
  type GatewayProc,
  keyView,
  newKey,
  sleep,
  spawnGateway,
  UNUSED_DATA_DIR,
  waitReady,
  withGatewayProcesses,
} from "../support/gateway_process.ts";
import { post } from "../support/harness.ts";
import { pgGatewayTest } from "../support/pg_harness.ts";
import { walkUsage } from "../support/usage_rows.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
/** Idle leases return fast and key changes (caps) reach the other process fast, so the test waits little. */
const IDLE_MS = 300;
const SHARED = { LEASE_IDLE_MS: String(IDLE_MS), KEY_REFRESH_MS: "200" };

/** One gateway per env, in front of one simulator. */
async function withGateways(envs: Record<string, string>[], fn: (gws: GatewayProc[]) => Promise<void>) {
  const sim = await startSimulator();
  try {
    await withGatewayProcesses(sim.url, envs, fn);
  } finally {
    await sim.close();
  }
}

/** A chat request whose reserve and charge are the same for every `n` (the prompt has a fixed length). */
async function chat(url: string, key: string, n: number, directives = "[[sim:words=5]]") {
  const res = await post(`${url}/v1/chat/completions`, key, {
    model: "k3",
    max_tokens: 200,
    messages: [{ role: "user", content: `запрос ${String(n).padStart(4, "0")} ${directives}` }],
  });
  const json = await res.json();
  return {
    status: res.status,
    id: res.headers.get("request-id")!,
    code: json.error?.code as string | undefined,
  };
}

/** The view once every lease of the key has returned (idle give-back or expiry), polled until `withinMs`. */
async function settled(url: string, id: string, withinMs: number) {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const m = await keyView(url, id);
    if (m.leased === 0n) return m;
    assert.ok(Date.now() < deadline, `leased still ${formatUsd(m.leased)} after ${withinMs} ms`);
    await sleep(50);
  }
}

/** The reserve and the charge of one `chat` request, from its usage row (a probe key of its own). */
async function probe(url: string, directives?: string): Promise<{ reserve: bigint; charge: bigint }> {
  const { key } = await newKey(url, parseUsd("10.00"));
  assert.equal((await chat(url, key, 0, directives)).status, 200);
  const [row] = await walkUsage(url, key, 10);
  return { reserve: parseUsd(row!.reserved_usd), charge: parseUsd(row!.charged_usd) };
}

/** The money identity once idle, and the usage rows are exactly `admitted` with Σ charged = spent. */
async function assertBooks(
  url: string,
  key: { id: string; key: string },
  credit: bigint,
  admitted: string[],
) {
  const m = await settled(url, key.id, 5_000);
  assert.equal(m.held, 0n);
  assert.equal(m.credited, credit);
  assert.ok(m.balance >= 0n, formatUsd(m.balance));
  assert.equal(m.credited, m.balance + m.spent);
  const rows = await walkUsage(url, key.key, 100);
  assert.deepEqual(rows.map((r) => r.request_id).sort(), [...admitted].sort());
  assert.equal(rows.reduce((s, r) => s + parseUsd(r.charged_usd), 0n), m.spent);
  return { m, rows };
}

/**
 * 400 concurrent requests alternating between two processes on a key whose credit covers 160 reserves. Each
 * answer uses its whole output budget, so its charge is close to its reserve and the number admitted barely
 * depends on how holds and settlements interleave; the simulator's delay keeps the requests in flight together.
 */
async function contendedKey(env: Record<string, string>) {
  await withGateways([{ ...env, ...SHARED }, { ...env, ...SHARED }], async (gws) => {
    const slow = "[[sim:words=200]] [[sim:delay=300]]";
    const { reserve, charge } = await probe(gws[0]!.url, slow);
    const credit = reserve * 160n;
    const key = await newKey(gws[0]!.url, credit);
    let running = true;
    const sampled = (async () => {
      // The balance never goes negative on either process while the requests run.
      for (let i = 0; running; i = (i + 1) % 2) {
        const m = await keyView(gws[i]!.url, key.id);
        assert.ok(
          m.balance >= 0n && m.leased <= m.credited - m.spent,
          JSON.stringify(m, (_, v) => String(v)),
        );
        await sleep(20);
      }
    })();
    const results = await Promise.all(
      Array.from({ length: 400 }, (_, n) => chat(gws[n % 2]!.url, key.key, n, slow)),
    ).finally(() => running = false);
    await sampled;
    const ok = results.filter((r) => r.status === 200).map((r) => r.id);
    for (const r of results.filter((r) => r.status !== 200)) {
      assert.equal(r.status, 402, JSON.stringify(r));
      assert.ok(r.code === "insufficient_credit" || r.code === "request_reserve_exceeds_credit", r.code);
    }
    assert.equal(new Set(results.map((r) => r.id)).size, 400, "a request id per response");
    // Credit for 160 reserves; an answer charges a little less than its reserve, so at most ⌊credit / charge⌋
    // settle, and at most one reserve's worth is stranded in each process's lease and in the store.
    assert.ok(ok.length >= 158 && BigInt(ok.length) <= credit / charge, `${ok.length} of 400 admitted`);
    for (const g of gws) {
      const { m, rows } = await assertBooks(g.url, key, credit, ok);
      assert.equal(m.spent, charge * BigInt(ok.length));
      assert.ok(rows.every((r) => parseUsd(r.charged_usd) === charge));
    }
  });
}

pgGatewayTest(
  "two processes, 400 concurrent requests on a key that covers part of them: never negative, each admitted request settled once, the identity exact",
  (env) => contendedKey(env),
);

pgGatewayTest(
  "an hourly reserve cap holds across two processes: exactly the requests that fit are admitted, the rest 429",
  async (env, schema) => {
    // The hour window must not turn over during the burst.
    const toNextHour = HOUR - Date.now() % HOUR;
    if (toNextHour < 15_000) await sleep(toNextHour + 100);
    await withGateways([{ ...env, ...SHARED }, { ...env, ...SHARED }], async ([a, b]) => {
      const { reserve } = await probe(a!.url);
      const cap = reserve * 30n + reserve / 2n;
      const key = await newKey(a!.url, parseUsd("100.00"));
      const set = await admin(a!.url, "POST", `/admin/keys/${key.id}/caps`, {
        hourly_reserve_usd: formatUsd(cap),
      });
      assert.equal(set.caps.hourly_reserve_usd, formatUsd(cap), JSON.stringify(set));
      // B learns the cap from the store's key changes (KEY_REFRESH_MS).
      const deadline = Date.now() + 3_000;
      while (
        (await admin(b!.url, "GET", `/admin/keys/${key.id}`)).caps.hourly_reserve_usd !== formatUsd(cap)
      ) {
        assert.ok(Date.now() < deadline, "the cap did not reach the second process");
        await sleep(50);
      }
      const results = await Promise.all(
        Array.from({ length: 80 }, (_, n) => chat((n % 2 ? b : a)!.url, key.key, n)),
      );
      const ok = results.filter((r) => r.status === 200).map((r) => r.id);
      for (const r of results.filter((r) => r.status !== 200)) {
        assert.equal(r.status, 429, JSON.stringify(r));
        assert.equal(r.code, "hourly_reserve_limit");
      }
      // Reserve caps count reserves, not charges: exactly ⌊cap / reserve⌋ fit, whatever the timing.
      assert.equal(ok.length, 30);
      const { rows } = await assertBooks(b!.url, key, parseUsd("100.00"), ok);
      assert.ok(rows.every((r) => parseUsd(r.reserved_usd) === reserve));
      const sql = postgres(TEST_DATABASE_URL!, { max: 1, onnotice: () => {} });
      try {
        const [w] = await sql.unsafe(`SELECT hour_reserved FROM ${schema.name}.keys WHERE id = $1`, [key.id]);
        assert.equal(
          BigInt(w!.hour_reserved),
          reserve * 30n,
          "the shared hour window holds the admitted reserves",
        );
      } finally {
        await sql.end({ timeout: 5 });
      }
      assert.equal((await chat(a!.url, key.key, 999)).code, "hourly_reserve_limit");
      assert.equal((await chat(b!.url, key.key, 999)).code, "hourly_reserve_limit");
    });
  },
);

pgGatewayTest(
  "kill -9 of one process mid-stream: the other keeps serving, the dead lease expires within LEASE_TTL_MS, settled rows kept",
  async (env) => {
    const TTL = 1_500;
    await withGateways(
      [{ ...env, ...SHARED, LEASE_TTL_MS: String(TTL) }, { ...env, ...SHARED }],
      async ([a, b]) => {
        const credit = parseUsd("10.00");
        const key = await newKey(a!.url, credit);
        const settledIds: string[] = [];
        for (let n = 0; n < 5; n++) {
          const r = await chat(a!.url, key.key, n);
          assert.equal(r.status, 200);
          settledIds.push(r.id);
        }
        await sleep(300); // their group commit is durable (SETTLE_DURABILITY_MS)
        const res = await post(`${a!.url}/v1/chat/completions`, key.key, {
          model: "k3",
          stream: true,
          max_tokens: 20_000,
          messages: [{ role: "user", content: "Долго [[sim:words=20000]] [[sim:interval=20]]" }],
        });
        assert.equal(res.status, 200);
        const cut = res.headers.get("request-id")!;
        const reader = res.body!.getReader();
        await reader.read();
        a!.proc.kill("SIGKILL");
        await a!.proc.status;
        const killedAt = Date.now();
        await reader.cancel().catch(() => {});

        assert.ok((await keyView(b!.url, key.id)).leased > 0n, "the dead process's lease is still live");
        const served = await chat(b!.url, key.key, 5);
        assert.equal(served.status, 200, "the other process keeps serving the key");
        const m = await settled(b!.url, key.id, TTL + 1_000);
        assert.ok(Date.now() - killedAt <= TTL + 1_000);
        assert.equal(m.held, 0n);
        // The cut stream never settled (its charge is lost in the user's favour); everything else is there once.
        const { rows } = await assertBooks(b!.url, key, credit, [...settledIds, served.id]);
        assert.ok(!rows.some((r) => r.request_id === cut));
      },
    );
  },
);

/** Waits for a process's exit, at most `ms`. */
pgGatewayTest(
  "WORKERS=2 on one port: fresh connections reach both workers, requests succeed, SIGTERM exits 0",
  async (env) => {
    const sim = await startSimulator();
    const port = freePort();
    const url = `http://127.0.0.1:${port}`;
    const supervisor = spawnGateway(port, UNUSED_DATA_DIR, sim.url, { ...env, ...SHARED, WORKERS: "2" });
    let exited = false;
    try {
      await waitReady(url);
      const key = await newKey(url, parseUsd("10.00"));
      const seen = new Set<string>();
      const deadline = Date.now() + 15_000;
      for (let n = 0; seen.size < 2 || n < 20; n++) {
        assert.ok(Date.now() < deadline, `only workers ${[...seen]} answered`);
        // A client of its own per request: a new connection, which the kernel gives to either listener.
        const client = Deno.createHttpClient({});
        try {
          const res = await fetch(`${url}/v1/chat/completions`, {
            client,
            method: "POST",
            headers: { authorization: `Bearer ${key.key}`, "content-type": "application/json" },
            body: JSON.stringify({
              model: "k3",
              messages: [{ role: "user", content: "привет [[sim:words=3]]" }],
            }),
          });
          assert.equal(res.status, 200, await res.text());
          seen.add(res.headers.get("x-gateway-worker")!);
        } finally {
          client.close();
        }
      }
      assert.deepEqual([...seen].sort(), ["1", "2"]);
      const stopping = Date.now();
      supervisor.kill("SIGTERM");
      const status = await exitWithin(supervisor, 5_000);
      exited = true;
      assert.equal(status.code, 0);
      assert.ok(Date.now() - stopping < 5_000);
      await assert.rejects(fetch(url + "/v1/models"), "no worker is left on the port");
    } finally {
      if (!exited) {
        supervisor.kill("SIGTERM");
        await exitWithin(supervisor, 5_000).catch(() => supervisor.kill("SIGKILL"));
      }
      await sim.close();
    }
  },
);

Deno.test("WORKERS=2 without a shared store exits 2 at once, naming DATABASE_URL", async () => {
  const dataDir = await Deno.makeTempDir();
  try {
    const started = Date.now();
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--unstable-kv", "--unstable-no-legacy-abort", "main.ts"],
      cwd: ROOT,
      env: { PORT: String(freePort()), HOST: "127.0.0.1", DATA_DIR: dataDir, WORKERS: "2" },
      stdout: "null",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 2, stderr);
    assert.ok(stderr.includes("DATABASE_URL"), stderr);
    assert.ok(Date.now() - started < 10_000);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("two processes on one shared local KV file (kv:): the same 400 contended requests, exact", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await contendedKey({ DATABASE_URL: `kv:${dir}/shared.kv` });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
