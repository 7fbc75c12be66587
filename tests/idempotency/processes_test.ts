/**
 * Idempotency-Key across processes and restarts (docs/idempotency.md "Several processes, restarts"), with real
 * gateway processes on a KV DATA_DIR and on Postgres: a finished keyed answer (JSON and stream) is replayed byte
 * for byte after a restart, charged once, also one that finished during a SIGTERM's drain; a keyed stream
 * running at a kill -9 (at once, or during a drain) is settled by the crash rules of any stream
 * (docs/billing.md) and its key is free again once IDEMPOTENCY_LEASE_MS has passed; two processes on one
 * Postgres schema: a retry through the second replays the first's answer, also one still running when the
 * retry came.
 */
import assert from "node:assert/strict";
import { type Simulator, startSimulator } from "../../sim/server.ts";
import { formatUsd, parseUsd } from "../../src/money/usd.ts";
import {
  admin,
  exitWithin,
  freePort,
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

const REPLAYED = "idempotent-replayed";
/** Credit leases of a dead process expire fast, idle ones return fast (Postgres), request lines stay quiet. */
const QUIET = { LOG_LEVEL: "error", LEASE_TTL_MS: "1500", LEASE_IDLE_MS: "300" };

const chat = (text: string, stream: boolean) => ({
  model: "k3",
  max_tokens: 1_000,
  stream,
  messages: [{ role: "user", content: text }],
});

function keyed(url: string, key: string, idem: string, body: unknown) {
  return post(`${url}/v1/chat/completions`, key, body, { "idempotency-key": idem });
}

/** The upstream calls whose body carries `marker`. */
const upstreamCalls = (sim: Simulator, marker: string) =>
  sim.requests.filter((r) => JSON.stringify(r.body).includes(marker)).length;

/** The key's money as the admin API on `url` shows it (that process's settlements flushed first). */
async function view(url: string, id: string) {
  const v = await admin(url, "GET", `/admin/keys/${id}`);
  return {
    balance: parseUsd(v.balance_usd),
    held: parseUsd(v.held_usd),
    spent: parseUsd(v.spent_usd),
    // Only a shared store leases credit: a KV file's view has no leased_usd.
    leased: v.leased_usd === undefined ? 0n : parseUsd(v.leased_usd),
  };
}

/** The key's money once every credit lease of it has returned (Postgres; at once on a KV file), bounded. */
async function settledView(url: string, id: string) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const v = await view(url, id);
    if (v.leased === 0n) return v;
    assert.ok(Date.now() < deadline, `leased still ${formatUsd(v.leased)}`);
    await sleep(50);
  }
}

/** A whole answer as its client read it. */
async function whole(res: Response) {
  return { status: res.status, headers: res.headers, bytes: await res.bytes() };
}

/** Where the gateway keeps its data: a KV DATA_DIR, or DATABASE_URL in `env`. */
interface Place {
  dataDir: string;
  env: Record<string, string>;
  /** Whether a drain writes checkpoints: on a KV file only, none on a shared store (docs/operator-guide.md). */
  checkpoints: boolean;
}

/** One gateway at a time on `place`, restarted on the same port and data; the last one killed at the end. */
async function withRestarts(
  place: Place,
  env: Record<string, string>,
  fn: (ctx: { sim: Simulator; url: string; start(): Promise<Deno.ChildProcess> }) => Promise<void>,
) {
  const sim = await startSimulator();
  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  let proc: Deno.ChildProcess | undefined;
  try {
    await fn({
      sim,
      url,
      async start() {
        proc = spawnGateway(port, place.dataDir, sim.url, { ...QUIET, ...place.env, ...env });
        await waitReady(url, proc);
        return proc;
      },
    });
  } finally {
    try {
      proc?.kill("SIGKILL");
    } catch { /* already gone */ }
    await proc?.status;
    await sim.close();
  }
}

async function restartKeepsFinishedAnswers(place: Place) {
  await withRestarts(place, {}, async ({ sim, url, start }) => {
    let proc = await start();
    const { id, key } = await newKey(url, parseUsd("1.00"));
    const json = chat("ответ до перезапуска [[sim:words=30]]", false);
    const stream = chat("поток до перезапуска [[sim:words=120]] [[sim:interval=5]]", true);
    const firstJson = await whole(await keyed(url, key, "restart-json", json));
    const firstStream = await whole(await keyed(url, key, "restart-stream", stream));
    assert.equal(firstJson.status, 200, new TextDecoder().decode(firstJson.bytes));
    assert.equal(firstStream.status, 200);
    assert.ok(new TextDecoder().decode(firstStream.bytes).endsWith("data: [DONE]\n\n"));
    const before = await settledView(url, id);
    const rows = await walkUsage(url, key, 10);
    assert.deepEqual(
      rows.map((r) => r.request_id),
      [firstStream.headers.get("request-id"), firstJson.headers.get("request-id")],
    );
    const charged = rows.reduce((s, r) => s + parseUsd(r.charged_usd), 0n);
    assert.ok(charged > 0n);
    assert.equal(before.spent, charged);

    proc.kill("SIGTERM");
    assert.equal((await exitWithin(proc, 15_000)).code, 0);
    proc = await start();
    const calls = sim.requests.length;
    for (
      const [idem, body, first] of [["restart-json", json, firstJson], [
        "restart-stream",
        stream,
        firstStream,
      ]] as const
    ) {
      const again = await whole(await keyed(url, key, idem, body));
      assert.equal(again.status, 200, idem);
      assert.equal(again.headers.get(REPLAYED), "true", idem);
      assert.equal(again.headers.get("request-id"), first.headers.get("request-id"), idem);
      assert.equal(again.headers.get("content-type"), first.headers.get("content-type"), idem);
      assert.deepEqual(again.bytes, first.bytes, `${idem}: the same bytes`);
    }
    assert.equal(sim.requests.length, calls, "nothing sent upstream after the restart");
    assert.deepEqual((await walkUsage(url, key, 10)).map((r) => r.request_id), rows.map((r) => r.request_id));
    const after = await settledView(url, id);
    assert.deepEqual([after.balance, after.spent, after.held], [before.balance, before.spent, 0n]);
    assert.equal(after.balance, parseUsd("1.00") - charged, "charged once in total");
  });
}

/** The keyed stream of the kill: long enough to be running at the kill (and through a drain's half second),
 *  short enough for its retry to finish soon. */
const KILLED = chat("поток под kill -9 [[sim:words=600]] [[sim:interval=20]]", true);

function keyedWithin(url: string, key: string, idem: string, body: unknown, ms: number) {
  return fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "idempotency-key": idem },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(ms),
  });
}

/**
 * A keyed stream running when its process is killed — at once (`kill`), or half a second into a SIGTERM's
 * drain (`drain`) — settled at the restart as tests/ops/crash_test.ts has it for any stream: killed at once,
 * its hold released and nothing charged; killed while draining on a KV file, its checkpoint settled as a
 * cancelled row charged by estimate within its hold (a shared store writes no checkpoints: nothing charged,
 * docs/operator-guide.md "Several processes"). Either way its key is free once the dead process's claim lapses
 * (IDEMPOTENCY_LEASE_MS): the retry runs as a new request, charged.
 */
async function killedRunFreesItsKey(place: Place, how: "kill" | "drain") {
  await withRestarts(place, { IDEMPOTENCY_LEASE_MS: "500" }, async ({ sim, url, start }) => {
    let proc = await start();
    const credit = parseUsd("1.00");
    const { id, key } = await newKey(url, credit);
    const res = await keyed(url, key, "killed", KILLED);
    assert.equal(res.status, 200);
    const cutId = res.headers.get("request-id");
    const reader = res.body!.getReader();
    await reader.read();
    assert.ok((await view(url, id)).held > 0n, "the stream holds money at the kill");
    if (how === "drain") {
      proc.kill("SIGTERM"); // the stream goes on draining, checkpointed every 100 ms…
      await sleep(500);
    }
    proc.kill("SIGKILL");
    await proc.status;
    await reader.cancel().catch(() => {});

    proc = await start();
    const after = await settledView(url, id);
    const settled = await walkUsage(url, key, 10);
    assert.equal(after.held, 0n);
    let cutCharge = 0n;
    if (how === "kill" || !place.checkpoints) {
      assert.deepEqual(settled, [], "nothing settled");
    } else {
      assert.equal(settled.length, 1, JSON.stringify(settled));
      const cut = settled[0]!;
      assert.deepEqual([cut.request_id, cut.status, cut.usage_source], [cutId, "cancelled", "estimated"]);
      assert.ok(cut.output_tokens > 0 && cut.output_tokens < 600, String(cut.output_tokens));
      cutCharge = parseUsd(cut.charged_usd);
      assert.ok(cutCharge > 0n && cutCharge <= parseUsd(cut.reserved_usd), cut.charged_usd);
    }
    assert.deepEqual([after.balance, after.spent], [credit - cutCharge, cutCharge]);

    // The dead process's claim lapses after IDEMPOTENCY_LEASE_MS: the retry runs as a new request.
    const retry = await keyedWithin(url, key, "killed", KILLED, 30_000);
    const text = await retry.text();
    assert.equal(retry.status, 200, text);
    assert.equal(retry.headers.get(REPLAYED), null);
    const retryId = retry.headers.get("request-id");
    assert.notEqual(retryId, cutId);
    assert.ok(text.endsWith("data: [DONE]\n\n"), text.slice(-200));
    assert.equal(upstreamCalls(sim, "поток под kill -9"), 2, "the upstream was called again");
    const rows = await walkUsage(url, key, 10);
    assert.deepEqual(rows.slice(1), settled);
    assert.deepEqual([rows[0]!.request_id, rows[0]!.status, rows[0]!.output_tokens], [retryId, "ok", 600]);
    const charged = parseUsd(rows[0]!.charged_usd);
    assert.ok(charged > 0n);
    const end = await settledView(url, id);
    assert.deepEqual(
      [end.balance, end.held, end.spent],
      [credit - cutCharge - charged, 0n, cutCharge + charged],
    );
  });
}

/**
 * A SIGTERM while a keyed stream runs: the drain lets it finish (its client gets it whole), and the answer is
 * kept before the process exits — after the restart a retry replays it, byte for byte, charged once.
 */
async function drainKeepsTheRunningAnswer(place: Place) {
  await withRestarts(place, {}, async ({ sim, url, start }) => {
    let proc = await start();
    const { id, key } = await newKey(url, parseUsd("1.00"));
    const body = chat("поток во время остановки [[sim:words=200]] [[sim:interval=10]]", true);
    const res = await keyed(url, key, "draining", body);
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    const chunks = [(await reader.read()).value!];
    proc.kill("SIGTERM");
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
    }
    const firstBytes = new Uint8Array(await new Blob(chunks).arrayBuffer());
    assert.ok(new TextDecoder().decode(firstBytes).endsWith("data: [DONE]\n\n"), "the drain let it finish");
    assert.equal((await exitWithin(proc, 15_000)).code, 0);

    proc = await start();
    const again = await keyedWithin(url, key, "draining", body, 30_000);
    const bytes = await again.bytes();
    assert.equal(again.status, 200, new TextDecoder().decode(bytes));
    assert.equal(again.headers.get(REPLAYED), "true");
    assert.equal(again.headers.get("request-id"), res.headers.get("request-id"));
    assert.deepEqual(bytes, firstBytes);
    assert.equal(upstreamCalls(sim, "поток во время остановки"), 1);
    const rows = await walkUsage(url, key, 10);
    assert.deepEqual(rows.map((r) => [r.request_id, r.status]), [[res.headers.get("request-id"), "ok"]]);
    const m = await settledView(url, id);
    assert.deepEqual([m.spent, m.balance], [parseUsd(rows[0]!.charged_usd), parseUsd("1.00") - m.spent]);
  });
}

async function kvPlace(fn: (place: Place) => Promise<void>) {
  const dataDir = await Deno.makeTempDir();
  try {
    await fn({ dataDir, env: {}, checkpoints: true });
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
}

Deno.test("a restart keeps finished keyed answers: JSON and stream replayed byte for byte, charged once [kv]", async () => {
  await kvPlace(restartKeepsFinishedAnswers);
});

pgGatewayTest(
  "a restart keeps finished keyed answers: JSON and stream replayed byte for byte, charged once",
  (env) => restartKeepsFinishedAnswers({ dataDir: UNUSED_DATA_DIR, env, checkpoints: false }),
);

Deno.test("a SIGTERM while a keyed stream runs: it finishes, is kept, and is replayed after the restart [kv]", () =>
  kvPlace(drainKeepsTheRunningAnswer));
pgGatewayTest(
  "a SIGTERM while a keyed stream runs: it finishes, is kept, and is replayed after the restart",
  (env) => drainKeepsTheRunningAnswer({ dataDir: UNUSED_DATA_DIR, env, checkpoints: false }),
);

const FREED = "its key free again after IDEMPOTENCY_LEASE_MS";
Deno.test(`kill -9 of a keyed stream: its hold released, nothing charged; ${FREED} [kv]`, () =>
  kvPlace((place) => killedRunFreesItsKey(place, "kill")));
Deno.test(`kill -9 of a keyed stream while draining: its checkpoint charged as cancelled; ${FREED} [kv]`, () =>
  kvPlace((place) => killedRunFreesItsKey(place, "drain")));
pgGatewayTest(
  `kill -9 of a keyed stream: its hold released, nothing charged; ${FREED}`,
  (env) => killedRunFreesItsKey({ dataDir: UNUSED_DATA_DIR, env, checkpoints: false }, "kill"),
);
pgGatewayTest(
  `kill -9 of a keyed stream while draining: nothing charged (no checkpoints); ${FREED}`,
  (env) => killedRunFreesItsKey({ dataDir: UNUSED_DATA_DIR, env, checkpoints: false }, "drain"),
);

pgGatewayTest(
  "two processes: a retry through the second replays the first's finished answer, charged once",
  async (env) => {
    const sim = await startSimulator();
    try {
      await withGatewayProcesses(sim.url, [{ ...QUIET, ...env }, { ...QUIET, ...env }], async ([a, b]) => {
        const { id, key } = await newKey(a!.url, parseUsd("1.00"));
        const body = chat("ответ первого процесса [[sim:words=30]]", false);
        const first = await whole(await keyed(a!.url, key, "two-1", body));
        assert.equal(first.status, 200);
        const again = await whole(await keyed(b!.url, key, "two-1", body));
        assert.equal(again.status, 200);
        assert.equal(again.headers.get(REPLAYED), "true");
        assert.equal(again.headers.get("request-id"), first.headers.get("request-id"));
        assert.deepEqual(again.bytes, first.bytes);
        assert.equal(upstreamCalls(sim, "ответ первого процесса"), 1);
        await view(a!.url, id); // the first process's settlement flushed
        const rows = await walkUsage(b!.url, key, 10);
        assert.deepEqual(rows.map((r) => r.request_id), [first.headers.get("request-id")]);
        const m = await settledView(b!.url, id);
        assert.deepEqual([m.spent, m.balance], [parseUsd(rows[0]!.charged_usd), parseUsd("1.00") - m.spent]);
      });
    } finally {
      await sim.close();
    }
  },
);

pgGatewayTest(
  "two processes: a retry through the second while the first still streams waits and replays the whole answer, charged once",
  async (env) => {
    const sim = await startSimulator();
    try {
      await withGatewayProcesses(sim.url, [{ ...QUIET, ...env }, { ...QUIET, ...env }], async ([a, b]) => {
        const { id, key } = await newKey(a!.url, parseUsd("1.00"));
        // 100 frames 20 ms apart: about 2 s of stream, running when the retry arrives.
        const body = chat("медленный поток [[sim:words=400]] [[sim:interval=20]]", true);
        const first = await keyed(a!.url, key, "two-2", body);
        assert.equal(first.status, 200);
        const reader = first.body!.getReader();
        const head = await reader.read();
        const retry = keyed(b!.url, key, "two-2", body).then(whole);
        const chunks = [head.value!];
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          chunks.push(value);
        }
        const firstBytes = new Uint8Array(await new Blob(chunks).arrayBuffer());
        const again = await retry;
        assert.equal(again.status, 200);
        assert.equal(again.headers.get(REPLAYED), "true");
        assert.equal(again.headers.get("request-id"), first.headers.get("request-id"));
        assert.equal(again.headers.get("content-type"), first.headers.get("content-type"));
        assert.deepEqual(again.bytes, firstBytes, "the whole stream, as the first client read it");
        assert.ok(new TextDecoder().decode(again.bytes).endsWith("data: [DONE]\n\n"));
        assert.equal(upstreamCalls(sim, "медленный поток"), 1, "one upstream call");
        await view(a!.url, id);
        const rows = await walkUsage(b!.url, key, 10);
        assert.deepEqual(
          rows.map((r) => [r.request_id, r.status, r.output_tokens]),
          [[first.headers.get("request-id"), "ok", 400]],
        );
        const m = await settledView(b!.url, id);
        assert.deepEqual([m.spent, m.balance], [parseUsd(rows[0]!.charged_usd), parseUsd("1.00") - m.spent]);
      });
    } finally {
      await sim.close();
    }
  },
);
