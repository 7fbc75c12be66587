/**
 * Theta's account queue through running gateways (spec §4.7): the concurrency property test on KV
 * (one gateway) and on Postgres (two processes), FIFO grants, queue_timeout, a waiter that leaves, the
 * fallback to the nearest accepting model, generation_timeout, and a killed process's account coming back.
 * The upstream accounts are tests/support/upstream_stubs.ts `accountUpstream` in front of the simulator: its call log
 * (account, model, the request's `[[id:…]]` marker, start and end) is what the properties are checked on.
 * theta_unavailable (503, Retry-After 30, free) is covered by tests/upstream/upstream_retry_test.ts; here only that the
 * account is given back after it.
 */
import assert from "node:assert/strict";
import { mulberry32 } from "../../src/util/seeded_random.ts";
import { startSimulator } from "../../sim/server.ts";
import { estimateInputTokens, estimateOutputTokens } from "../../src/billing/estimate.ts";
import { POOL_DOCUMENT, type PoolDoc } from "../../src/families/theta/pool_state.ts";
import { formatUsd, parseUsd } from "../../src/money/usd.ts";
import type { SseFrame } from "../../src/protocols/codec.ts";
import { admin, type GatewayProc, sleep, withGatewayProcesses } from "../support/gateway_process.ts";
import { ANTHROPIC_HEADERS, post, type TestGateway, withGateway } from "../support/harness.ts";
import { pgGatewayTest } from "../support/pg_harness.ts";
import { openPgStore } from "../../src/store/pg_open.ts";
import { Logger } from "../../src/util/log.ts";
import {
  assertErrorEnding,
  readFrames,
  type Surface,
  SURFACE_PATH,
  surfaceBody,
} from "../support/sse_client.ts";
import { type AccountCall, accountUpstream } from "../support/upstream_stubs.ts";
import { tokenCost, usageRows } from "../support/usage_rows.ts";

const MODEL = "theta3.7-plus";
const ACCOUNTS = "acc-1,acc-2,acc-3";
const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

interface Sent {
  status: number;
  headers: Headers;
  /** JSON answers (errors included). */
  json?: any;
  /** Stream answers. */
  frames?: SseFrame[];
}

interface SendOpts {
  stream?: boolean;
  model?: string;
  /** `x-session-id`. */
  session?: string;
  signal?: AbortSignal;
  /** Replaces the surface's body (model and stream still set). */
  body?: Record<string, unknown>;
}

async function send(
  url: string,
  key: string,
  surface: Surface,
  text: string,
  o: SendOpts = {},
): Promise<Sent> {
  const body = { ...(o.body ?? surfaceBody(surface, o.model ?? MODEL, text, o.stream ?? false)) };
  body.model = o.model ?? MODEL;
  body.stream = o.stream ?? false;
  const res = await fetch(url + SURFACE_PATH[surface], {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      ...ANTHROPIC_HEADERS,
      ...(o.session ? { "x-session-id": o.session } : {}),
    },
    body: JSON.stringify(body),
    ...(o.signal ? { signal: o.signal } : {}),
  });
  const out: Sent = { status: res.status, headers: res.headers };
  if ((res.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
    out.frames = (await readFrames(res)).frames;
  } else out.json = await res.json();
  return out;
}

/** An HTTP error answer (a JSON body, nothing streamed) with its code and Retry-After. */
function assertHttpError(s: Sent, status: number, code: string, retryAfter: string | null, where: string) {
  assert.equal(s.status, status, `${where}: ${JSON.stringify(s.json ?? s.frames)}`);
  assert.ok(s.json, `${where}: a JSON error, not a stream`);
  assert.equal(s.json.error.code, code, where);
  assert.equal(s.headers.get("retry-after"), retryAfter, where);
}

/** The waiting time header: a whole number of ms. */
function waitedMs(s: Sent, where: string): number {
  const v = s.headers.get("x-theta-queue-wait-ms");
  assert.match(v ?? "", /^\d+$/, `${where}: x-theta-queue-wait-ms ${v}`);
  return Number(v);
}

/** The pool document as stored (null before the first theta request). */
function poolDoc(t: TestGateway): Promise<PoolDoc | null> {
  return t.gw.app.store.updateDocument(
    POOL_DOCUMENT,
    (doc) => ({ doc: null, result: doc as PoolDoc | null }),
  );
}

/** Polls `check` every 5 ms until it holds, at most `ms`; returns the ms it took. */
async function within(ms: number, what: string, check: () => Promise<boolean> | boolean): Promise<number> {
  const t0 = performance.now();
  while (!(await check())) {
    assert.ok(performance.now() - t0 < ms, `${what}: not within ${ms} ms`);
    await sleep(5);
  }
  return performance.now() - t0;
}

/** The key's money in the admin view. */
async function money(url: string, id: string) {
  const v = await admin(url, "GET", `/admin/keys/${id}`);
  return { balance: v.balance_usd, held: v.held_usd, spent: v.spent_usd };
}

const prng = mulberry32; // a failing run is replayed from its seed

// ---------------------------------------------------------------------------------------------------------
// The concurrency property test.

/** The property runs' shortened timings: all are served; an idle account goes back to the pool quickly. */
const IDLE_MS = 50;
const PROPERTY_ENV = {
  THETA_UPSTREAM_KEYS: ACCOUNTS,
  THETA_QUEUE_TIMEOUT_MS: "20000",
  THETA_IDLE_RELEASE_MS: String(IDLE_MS),
};

/** Clients arrive over this long, so keys' queues run dry now and then and accounts move between keys. */
const ARRIVALS_MS = 2_000;

interface Planned {
  key: number;
  session: string;
  marker: string;
  delay: number;
  /** The client's pause before sending it: its arrival (0 to ARRIVALS_MS), then its think time (0 to
   *  2 × IDLE_MS). */
  pause: number;
}

/**
 * 50 clients across the keys, each a session of its own sending 2–3 sequential requests of random length
 * (simulator delay 20–150 ms), request n of client c to gateway (c + n) mod |urls|; every answer is a 200 from
 * the requested model with x-theta-queue-wait-ms. Returns the sessions' requests in order.
 */
async function runClients(urls: string[], keys: string[], seed: number): Promise<Planned[][]> {
  const rnd = prng(seed);
  const sessions = Array.from(
    { length: 50 },
    (_, c) =>
      Array.from({ length: 2 + Math.floor(rnd() * 2) }, (_, n): Planned => ({
        key: c % keys.length,
        session: `sess-${c}`,
        marker: `k${c % keys.length}-c${c}-n${n}`,
        delay: 20 + Math.floor(rnd() * 131),
        pause: Math.floor(rnd() * (n === 0 ? ARRIVALS_MS : 2 * IDLE_MS)),
      })),
  );
  await Promise.all(sessions.map(async (reqs, c) => {
    for (const [n, r] of reqs.entries()) {
      await sleep(r.pause);
      const where = `seed ${seed} ${r.marker}`;
      const s = await send(
        urls[(c + n) % urls.length]!,
        keys[r.key]!,
        "chat",
        `[[id:${r.marker}]] привет [[sim:delay=${r.delay}]] [[sim:words=3]]`,
        { session: r.session },
      );
      assert.equal(s.status, 200, `${where}: ${JSON.stringify(s.json)}`);
      assert.equal(s.headers.get("x-theta-served-by"), MODEL, where);
      waitedMs(s, where);
    }
  }));
  return sessions;
}

/** Calls grouped by `by`, each group in start order. */
function groups(calls: AccountCall[], by: (c: AccountCall) => string): Map<string, AccountCall[]> {
  const out = new Map<string, AccountCall[]>();
  for (const c of calls) out.set(by(c), [...(out.get(by(c)) ?? []), c]);
  for (const g of out.values()) g.sort((a, b) => a.start - b.start);
  return out;
}

/** No two calls of the group overlap in time. */
function assertSerial(group: Map<string, AccountCall[]>, what: string, seed: number) {
  for (const [name, calls] of group) {
    for (let i = 1; i < calls.length; i++) {
      assert.ok(
        calls[i]!.start >= calls[i - 1]!.end,
        `seed ${seed}: ${what} ${name} ran ${calls[i - 1]!.marker} and ${calls[i]!.marker} at once`,
      );
    }
  }
}

/**
 * The properties, from the upstream's call log:
 * - one request per account at a time (no overlapping calls on an account; the most at once is 1);
 * - one account per key at a time: a key's calls never overlap (it holds one account, which runs one request);
 * - session affinity: request n+1 of a session runs on request n's account A unless A left the key in
 *   between — another key's call ran on A, or A stood idle for IDLE_MS (the upstream's gaps are at least the
 *   pool's, which bound a holding from grant to release, so a shorter gap means A was bound to the key).
 * Returns how many consecutive pairs the affinity rule applied to.
 */
function assertProperties(
  up: ReturnType<typeof accountUpstream>,
  sessions: Planned[][],
  seed: number,
): number {
  const planned = sessions.flat();
  const keyOf = new Map(planned.map((r) => [r.marker, r.key]));
  assert.deepEqual(up.calls.map((c) => c.marker).sort(), planned.map((r) => r.marker).sort(), `seed ${seed}`);
  assert.ok(up.calls.every((c) => c.model === MODEL && c.end !== Infinity), `seed ${seed}`);
  assert.equal(up.maxConcurrent, 1, `seed ${seed}: an account ran two requests at once`);
  const byAccount = groups(up.calls, (c) => c.account);
  assert.deepEqual([...byAccount.keys()].sort(), ACCOUNTS.split(","), `seed ${seed}: every account served`);
  assertSerial(byAccount, "account", seed);
  assertSerial(groups(up.calls, (c) => String(keyOf.get(c.marker!))), "key", seed);
  const call = new Map(up.calls.map((c) => [c.marker!, c]));
  let bound = 0;
  for (const reqs of sessions) {
    for (let n = 1; n < reqs.length; n++) {
      const prev = call.get(reqs[n - 1]!.marker)!;
      const next = call.get(reqs[n]!.marker)!;
      const onA = byAccount.get(prev.account)!.filter((c) => c.start > prev.start && c.start < next.start);
      let lastEnd = prev.end;
      let kept = true;
      for (const c of [...onA, next]) {
        if (c.start - lastEnd >= IDLE_MS || (c !== next && keyOf.get(c.marker!) !== reqs[n]!.key)) {
          kept = false;
        }
        lastEnd = c.end;
      }
      if (!kept) continue;
      bound++;
      assert.equal(next.account, prev.account, `seed ${seed}: ${next.marker} left its session's account`);
    }
  }
  return bound;
}

Deno.test("property (KV): 50 sessions on 5 keys over 3 accounts — one request per account, one account per key, session affinity, all served", async () => {
  const sim = await startSimulator();
  const up = accountUpstream(sim.url);
  const seed = Date.now() % 1_000_000;
  try {
    await withGateway(async (t) => {
      const keys = await Promise.all(Array.from({ length: 5 }, () => t.newKey("10.00")));
      const sessions = await runClients([t.url], keys.map((k) => k.key), seed);
      const bound = assertProperties(up, sessions, seed);
      // Each key's sessions queue behind one another on its account, so most pairs stay bound.
      assert.ok(bound >= 20, `seed ${seed}: the affinity rule applied to ${bound} pairs only`);
      assert.deepEqual((await poolDoc(t))!.queue, [], "no ticket left");
      // The last release is stored just after its answer went out.
      await within(
        1_000,
        "no holding left",
        async () => (await poolDoc(t))!.accounts.every((a) => a.busy === null),
      );
    }, { ...PROPERTY_ENV, THETA_UPSTREAM_URL: up.url });
  } finally {
    await up.close();
    await sim.close();
  }
});

pgGatewayTest(
  "property: two gateway processes on one Postgres, sessions split across both — still one request per account, one account per key, affinity",
  async (env) => {
    const sim = await startSimulator();
    const up = accountUpstream(sim.url);
    const seed = Date.now() % 1_000_000;
    const procEnv = { ...env, ...PROPERTY_ENV, THETA_UPSTREAM_URL: up.url };
    try {
      await withGatewayProcesses(sim.url, [procEnv, procEnv], async (gws) => {
        const keys = await Promise.all(
          Array.from(
            { length: 5 },
            () => admin(gws[0]!.url, "POST", "/admin/keys", { balance_usd: "10.00" }),
          ),
        );
        const sessions = await runClients(gws.map((g) => g.url), keys.map((k) => k.key), seed);
        const bound = assertProperties(up, sessions, seed);
        assert.ok(bound >= 20, `seed ${seed}: the affinity rule applied to ${bound} pairs only`);
      });
    } finally {
      await up.close();
      await sim.close();
    }
  },
);

Deno.test("binding: a new session of the key takes over its account (not a free second one), the session keeps it while idle, other keys wait out the idle time", async () => {
  const sim = await startSimulator();
  const up = accountUpstream(sim.url);
  const IDLE = 500;
  try {
    await withGateway(async (t) => {
      const [k, l, m] = await Promise.all([t.newKey("1.00"), t.newKey("1.00"), t.newKey("1.00")]);
      const chat = (key: string, id: string, delay: number, session: string) =>
        send(t.url, key, "chat", `[[id:${id}]] [[sim:delay=${delay}]]`, { session });
      // Session s1 of key K, then s1 again as soon as it is answered.
      const s1 = chat(k.key, "r1", 300, "s1").then(async (r1) => [r1, await chat(k.key, "r2", 20, "s1")]);
      await sleep(50);
      const s2 = chat(k.key, "q1", 50, "s2"); // K's other session: waits for K's account
      await sleep(50);
      const other = chat(l.key, "l1", 600, "l"); // takes the second account
      await sleep(50);
      const third = chat(m.key, "m1", 20, "m"); // no account free for M until one is idle for IDLE
      for (const s of [...await s1, await s2, await other, await third]) assert.equal(s.status, 200);
      const c = new Map(up.calls.map((x) => [x.marker!, x]));
      const on = (id: string) => c.get(id)!.account;
      assert.deepEqual(["r1", "q1", "r2", "l1"].map(on), ["acc-1", "acc-1", "acc-1", "acc-2"]);
      assert.ok(c.get("q1")!.start >= c.get("r1")!.end, "q1 waited for K's account");
      assert.ok(c.get("r2")!.start >= c.get("q1")!.end);
      // M got an account once one had stood idle for IDLE (acc-1 after r2, or acc-2 after l1) — not before,
      // and not much later: its waiter looks again when the idle binding ends.
      const m1 = c.get("m1")!;
      const freed = up.calls.filter((x) => x.account === m1.account && x !== m1 && x.start < m1.start);
      const after = m1.start - freed.at(-1)!.end;
      assert.ok(
        after >= IDLE && after < IDLE + 250,
        `M started ${after} ms after the account's last request`,
      );
    }, {
      THETA_UPSTREAM_URL: up.url,
      THETA_UPSTREAM_KEYS: "acc-1,acc-2",
      THETA_IDLE_RELEASE_MS: String(IDLE),
    });
  } finally {
    await up.close();
    await sim.close();
  }
});

/**
 * FIFO: while one key holds the only account, keys arrive 20 ms apart (alternating between `urls`); the
 * upstream starts them in arrival order.
 */
/**
 * Arrival order is the order tickets enter the pool's queue, so each waiter is sent once the previous one's
 * ticket is in (`enqueued` reads the shared pool document's count of tickets ever queued): a loaded machine
 * cannot reorder them.
 */
async function assertFifo(
  urls: string[],
  up: ReturnType<typeof accountUpstream>,
  keys: string[],
  enqueued: () => Promise<number>,
) {
  const [holder, ...waiters] = keys;
  const first = send(urls[0]!, holder!, "chat", "[[id:holder]] [[sim:delay=400]]");
  await within(5_000, "the holder is served", () => up.calls.some((c) => c.marker === "holder"));
  const before = await enqueued();
  const queued: Promise<Sent>[] = [];
  for (const [i, key] of waiters.entries()) {
    queued.push(send(urls[i % urls.length]!, key, "chat", `[[id:w${i}]] [[sim:delay=20]]`));
    await within(5_000, `w${i} is queued`, async () => await enqueued() === before + i + 1);
  }
  for (const s of [await first, ...await Promise.all(queued)]) assert.equal(s.status, 200);
  const order = up.calls.filter((c) => c.marker === "holder" || c.marker?.startsWith("w"));
  assert.deepEqual(
    order.sort((a, b) => a.start - b.start).map((c) => c.marker),
    ["holder", ...waiters.map((_, i) => `w${i}`)],
  );
}

Deno.test("FIFO (KV): keys waiting for the one account are granted it in arrival order", async () => {
  const sim = await startSimulator();
  const up = accountUpstream(sim.url);
  try {
    await withGateway(async (t) => {
      const keys = await Promise.all(Array.from({ length: 7 }, () => t.newKey("10.00")));
      await assertFifo([t.url], up, keys.map((k) => k.key), async () => (await poolDoc(t))?.seq ?? 0);
    }, { THETA_UPSTREAM_URL: up.url, THETA_UPSTREAM_KEYS: "acc-1", THETA_IDLE_RELEASE_MS: "1" });
  } finally {
    await up.close();
    await sim.close();
  }
});

// ---------------------------------------------------------------------------------------------------------
// Waiting: queue_timeout, a waiter that leaves.

/**
 * Key `a` holds the only account with a slow request; resolves once the pool shows it busy, with the request's
 * answer still to come (wrapped: an async function returning a promise would wait for it).
 */
async function holdAccount(t: TestGateway, key: string, ms: number): Promise<{ answer: Promise<Sent> }> {
  const answer = send(t.url, key, "chat", `занят [[sim:delay=${ms}]]`);
  await within(2_000, "the account is held", async () => (await poolDoc(t))?.accounts[0]?.busy != null);
  return { answer };
}

Deno.test("queue_timeout: past THETA_QUEUE_TIMEOUT_MS a JSON or stream request is a 429 with Retry-After 30, the queue it saw, the wait — free", () =>
  withGateway(async (t) => {
    const a = await t.newKey("1.00");
    const b = await t.newKey("1.00");
    const { answer: held } = await holdAccount(t, a.key, 2_500);
    const cases: [Surface, boolean][] = [["chat", false], ["chat", true], ["messages", true], [
      "responses",
      true,
    ]];
    for (const [surface, stream] of cases) {
      const where = `${surface} stream=${stream}`;
      const s = await send(t.url, b.key, surface, "привет", { stream });
      // A stream too: nothing was sent while waiting, so the refusal is an HTTP status.
      assertHttpError(s, 429, "queue_timeout", "30", where);
      assert.equal(s.headers.get("x-theta-queue-length"), "1", where);
      assert.match(
        s.json.error.message,
        /^За время ожидания не освободился ни один аккаунт theta\. Предел ожидания: 0\.3 с\. Запросов в очереди: 1\./,
        where,
      );
      const waited = waitedMs(s, where);
      assert.ok(waited >= 300 && waited < 1_000, `${where}: waited ${waited} ms`);
      assert.equal(s.headers.get("x-theta-served-by"), null, where);
    }
    assert.equal((await held).status, 200);
    assert.deepEqual(await money(t.url, b.id), { balance: "1.00", held: "0.00", spent: "0.00" });
    assert.deepEqual((await poolDoc(t))!.queue, []);
  }, { THETA_UPSTREAM_KEYS: "acc-1", THETA_QUEUE_TIMEOUT_MS: "300" }));

Deno.test("a waiter whose client disconnects leaves the queue at once, and nothing is held for it", () =>
  withGateway(async (t) => {
    const a = await t.newKey("1.00");
    const b = await t.newKey("1.00");
    const { answer: held } = await holdAccount(t, a.key, 1_500);
    const ac = new AbortController();
    const waiting = send(t.url, b.key, "chat", "жду", { signal: ac.signal }).catch((err) => err);
    await within(2_000, "B queued", async () => {
      const q = (await poolDoc(t))!.queue;
      return q.length === 1 && q[0]!.keyId === b.id;
    });
    ac.abort();
    assert.equal(((await waiting) as Error).name, "AbortError");
    const ms = await within(100, "the queue empties", async () => (await poolDoc(t))!.queue.length === 0);
    assert.ok(ms < 100);
    await within(1_000, "B's hold released", async () => (await money(t.url, b.id)).held === "0.00");
    assert.deepEqual(await money(t.url, b.id), { balance: "1.00", held: "0.00", spent: "0.00" });
    assert.equal((await held).status, 200);
  }, { THETA_UPSTREAM_KEYS: "acc-1", THETA_QUEUE_TIMEOUT_MS: "5000" }));

// ---------------------------------------------------------------------------------------------------------
// Fallback.

/** The model the answer names, per surface, JSON or stream (every frame that names one). */
function namedModels(surface: Surface, s: Sent): string[] {
  if (s.json) return [s.json.model];
  const out: string[] = [];
  for (const f of s.frames!) {
    if (f.data === "[DONE]") continue;
    const j = JSON.parse(f.data);
    if (surface === "chat" && j.model) out.push(j.model);
    if (surface === "messages" && f.event === "message_start") out.push(j.message.model);
    if (surface === "responses" && j.response?.model) out.push(j.response.model);
  }
  return out;
}

Deno.test("fallback: a model refused for capacity on the account is answered by the nearest accepting one, named and charged as requested, remembered until Retry-After", async () => {
  const sim = await startSimulator();
  const up = accountUpstream(sim.url, { refuse: new Set(["acc-1|theta3.8-max"]), retryAfter: 60 });
  try {
    await withGateway(async (t) => {
      const k = await t.newKey("10.00");
      const sent: [Sent, string][] = [];
      for (const surface of ["chat", "messages", "responses"] as const) {
        for (const stream of [false, true]) {
          const where = `${surface} stream=${stream}`;
          const s = await send(t.url, k.key, surface, "привет [[sim:words=4]]", {
            stream,
            model: "theta3.8-max",
          });
          assert.equal(s.status, 200, `${where}: ${JSON.stringify(s.json)}`);
          assert.equal(s.headers.get("x-theta-served-by"), "theta3.7-max", where);
          waitedMs(s, where);
          const named = namedModels(surface, s);
          assert.ok(named.length >= 1 && named.every((m) => m === "theta3.8-max"), `${where}: ${named}`);
          sent.push([s, "theta3.7-max"]);
        }
      }
      // theta3.7-max takes no images: an image request goes one further, to theta3.7-plus.
      const image = await send(t.url, k.key, "chat", "", {
        model: "theta3.8-max",
        body: {
          max_tokens: 50,
          messages: [{
            role: "user",
            content: [{ type: "text", text: "Что на картинке?" }, {
              type: "image_url",
              image_url: { url: `data:image/png;base64,${PNG}` },
            }],
          }],
        },
      });
      assert.equal(image.status, 200, JSON.stringify(image.json));
      assert.equal(image.headers.get("x-theta-served-by"), "theta3.7-plus");
      assert.equal(image.json.model, "theta3.8-max");
      sent.push([image, "theta3.7-plus"]);
      // One refusal: every later request on the account went straight to the fallback.
      assert.deepEqual(up.refused, ["acc-1|theta3.8-max"]);
      assert.deepEqual(up.calls.map((c) => c.model), [...Array(6).fill("theta3.7-max"), "theta3.7-plus"]);
      // Usage rows: the requested model at its rates, the model that answered in served_by.
      const rows = new Map((await usageRows(t, k.key)).map((r) => [r.request_id, r]));
      assert.equal(rows.size, sent.length);
      const rates = t.gw.app.tariff.rates("theta3.8-max", 1)!;
      assert.notEqual(rates.input, t.gw.app.tariff.rates("theta3.7-max", 1)!.input);
      let spent = 0n;
      for (const [s, servedBy] of sent) {
        const r = rows.get(s.headers.get("request-id")!)!;
        assert.deepEqual([r.model, r.served_by, r.status], ["theta3.8-max", servedBy, "ok"]);
        assert.deepEqual(r.rates_usd_per_million, {
          input: formatUsd(rates.input * 1_000_000n),
          cache_read: formatUsd(rates.cacheRead * 1_000_000n),
          output: formatUsd(rates.output * 1_000_000n),
        });
        assert.equal(r.web_search_fee_usd, "0.00");
        assert.ok(r.output_tokens > 0);
        assert.equal(r.charged_usd, formatUsd(tokenCost(r)));
        spent += parseUsd(r.charged_usd);
      }
      assert.deepEqual(await money(t.url, k.id), {
        balance: formatUsd(parseUsd("10.00") - spent),
        held: "0.00",
        spent: formatUsd(spent),
      });
    }, { THETA_UPSTREAM_URL: up.url, THETA_UPSTREAM_KEYS: "acc-1" });
  } finally {
    await up.close();
    await sim.close();
  }
});

Deno.test("fallback: a stream refused for capacity on its first call answers with the fallback's head and frames", async () => {
  const sim = await startSimulator();
  const up = accountUpstream(sim.url, { refuse: new Set(["acc-1|theta3.8-max"]), retryAfter: 60 });
  try {
    await withGateway(async (t) => {
      const k = await t.newKey("10.00");
      // The first request on the account: its own call is refused, and the exchange calls again within it
      // (forward.ts) — the stream's 200 is made again for the second call.
      const s = await send(t.url, k.key, "chat", "привет [[sim:words=4]]", {
        stream: true,
        model: "theta3.8-max",
      });
      assert.equal(s.status, 200, JSON.stringify(s.json));
      assert.equal(s.headers.get("x-theta-served-by"), "theta3.7-max");
      assert.deepEqual(up.refused, ["acc-1|theta3.8-max"]);
      assert.deepEqual(
        up.calls.map((c) => c.model),
        ["theta3.7-max"],
        "the refused call is counted in `refused`",
      );
      const named = namedModels("chat", s);
      assert.ok(named.length >= 1 && named.every((m) => m === "theta3.8-max"), `${named}`);
      const [row] = await usageRows(t, k.key);
      assert.deepEqual([row!.model, row!.served_by, row!.status], ["theta3.8-max", "theta3.7-max", "ok"]);
      assert.deepEqual(await money(t.url, k.id), {
        balance: formatUsd(parseUsd("10.00") - parseUsd(row!.charged_usd)),
        held: "0.00",
        spent: row!.charged_usd,
      });
    }, { THETA_UPSTREAM_URL: up.url, THETA_UPSTREAM_KEYS: "acc-1" });
  } finally {
    await up.close();
    await sim.close();
  }
});

const THETA_MODELS = [
  "theta3.8-max",
  "theta3.7-max",
  "theta3.7-plus",
  "theta3.6-plus",
  "theta3.5-plus",
  "theta3.8-omni-flash",
  "theta3.5-omni-plus",
];

Deno.test("fallback: every model refused — 429 provider_at_capacity with Retry-After 5, each model tried once in the fallback order, free", async () => {
  const sim = await startSimulator();
  const up = accountUpstream(sim.url, { refuse: new Set(THETA_MODELS.map((m) => `*|${m}`)) });
  try {
    await withGateway(async (t) => {
      const k = await t.newKey("1.00");
      for (const stream of [false, true]) {
        const s = await send(t.url, k.key, "chat", "привет", { stream, model: "theta3.8-max" });
        assertHttpError(s, 429, "provider_at_capacity", "5", `stream=${stream}`);
        waitedMs(s, `stream=${stream}`);
      }
      // The first request tried them all; the second knew they were exhausted on the account.
      assert.deepEqual(up.refused, THETA_MODELS.map((m) => `acc-1|${m}`));
      assert.deepEqual(up.calls, []);
      assert.deepEqual(await money(t.url, k.id), { balance: "1.00", held: "0.00", spent: "0.00" });
    }, { THETA_UPSTREAM_URL: up.url, THETA_UPSTREAM_KEYS: "acc-1" });
  } finally {
    await up.close();
    await sim.close();
  }
});

// ---------------------------------------------------------------------------------------------------------
// generation_timeout, and the account given back after a failure.

const GENERATION_MS = 300;

/** Another key's request right after a failure is granted the one account at once. */
async function assertFreeAgain(t: TestGateway, key: string, where: string) {
  const s = await send(t.url, key, "chat", "следующий [[sim:words=2]]");
  assert.equal(s.status, 200, `${where}: ${JSON.stringify(s.json)}`);
  const waited = waitedMs(s, where);
  assert.ok(waited < 200, `${where}: the next request waited ${waited} ms`);
}

Deno.test("generation_timeout: past THETA_GENERATION_TIMEOUT_MS the upstream is cancelled — 504 or the error frame, billed for the work done, the account free again", () =>
  withGateway(async (t) => {
    const k = await t.newKey("1.00");
    const other = await t.newKey("1.00");
    const cut: [Sent, Record<string, unknown>, number][] = [];
    for (const surface of ["chat", "messages", "responses"] as const) {
      const body = surfaceBody(surface, MODEL, "долго [[sim:delay=5000]]", false);
      const aborted = t.sim.aborted;
      const s = await send(t.url, k.key, surface, "", { body });
      assertHttpError(s, 504, "generation_timeout", null, `${surface} JSON`);
      waitedMs(s, `${surface} JSON`);
      await within(1_000, `${surface}: upstream cancelled`, () => t.sim.aborted === aborted + 1);
      cut.push([s, body, 0]);
      await assertFreeAgain(t, other.key, `${surface} JSON`);

      // Three words, then the upstream goes quiet until the limit.
      const sBody = surfaceBody(surface, MODEL, "долгий поток [[sim:fault=stall]] [[sim:words=20]]", true);
      const streamed = await send(t.url, k.key, surface, "", { body: sBody, stream: true });
      assert.equal(streamed.status, 200, surface);
      assert.equal(assertErrorEnding(surface, streamed.frames!, surface).code, "generation_timeout");
      await within(1_000, `${surface} stream: upstream cancelled`, () => t.sim.aborted === aborted + 2);
      cut.push([streamed, sBody, deliveredChars(surface, streamed.frames!)]);
      await assertFreeAgain(t, other.key, `${surface} stream`);
    }
    // theta_unavailable (the upstream down): the account is given back too.
    const down = await send(t.url, k.key, "chat", "[[sim:fault=status:503]]");
    assertHttpError(down, 503, "theta_unavailable", "30", "theta_unavailable");
    waitedMs(down, "theta_unavailable");
    await assertFreeAgain(t, other.key, "theta_unavailable");

    // Billed for the work done: the input estimate, plus the output delivered before the cut.
    const rows = new Map((await usageRows(t, k.key)).map((r) => [r.request_id, r]));
    let spent = 0n;
    for (const [s, body, chars] of cut) {
      const r = rows.get(s.headers.get("request-id")!)!;
      const where = `${r.endpoint} stream=${r.stream}`;
      assert.deepEqual(
        [r.status, r.usage_source, r.input_tokens, r.output_tokens],
        ["error", "estimated", estimateInputTokens(body), estimateOutputTokens(chars)],
        where,
      );
      assert.ok(chars > 0 || !r.stream, where);
      assert.equal(r.charged_usd, formatUsd(tokenCost(r)), where);
      spent += parseUsd(r.charged_usd);
    }
    assert.equal(rows.get(down.headers.get("request-id")!)!.charged_usd, "0.00");
    assert.deepEqual(await money(t.url, k.id), {
      balance: formatUsd(parseUsd("1.00") - spent),
      held: "0.00",
      spent: formatUsd(spent),
    });
  }, {
    THETA_UPSTREAM_KEYS: "acc-1",
    THETA_GENERATION_TIMEOUT_MS: String(GENERATION_MS),
    THETA_IDLE_RELEASE_MS: "1",
    THETA_QUEUE_TIMEOUT_MS: "2000", // an account not given back fails fast
  }));

/** The characters of answer text a stream delivered, per surface's delta frames. */
function deliveredChars(surface: Surface, frames: SseFrame[]): number {
  let n = 0;
  for (const f of frames) {
    if (f.data === "[DONE]") continue;
    const j = JSON.parse(f.data);
    if (surface === "chat") n += j.choices?.[0]?.delta?.content?.length ?? 0;
    if (surface === "messages" && f.event === "content_block_delta") n += j.delta.text?.length ?? 0;
    if (surface === "responses" && f.event === "response.output_text.delta") n += j.delta.length;
  }
  return n;
}

// ---------------------------------------------------------------------------------------------------------
// Two processes, one account: FIFO across processes, and a killed process's account coming back.

const TTL_MS = 1_500;

/** Two gateway processes on the Postgres schema `env`, one theta account (an accountUpstream), `keys` keys. */
async function onePoolTwoProcesses(
  env: { DATABASE_URL: string },
  extra: Record<string, string>,
  keys: number,
  fn: (
    gws: GatewayProc[],
    keys: { id: string; key: string }[],
    up: ReturnType<typeof accountUpstream>,
  ) => Promise<void>,
) {
  const sim = await startSimulator();
  const up = accountUpstream(sim.url);
  const procEnv = {
    ...env,
    THETA_UPSTREAM_URL: up.url,
    THETA_UPSTREAM_KEYS: "acc-1",
    THETA_QUEUE_TIMEOUT_MS: "10000",
    ...extra,
  };
  try {
    await withGatewayProcesses(sim.url, [procEnv, procEnv], async (gws) => {
      const created = await Promise.all(
        Array.from(
          { length: keys },
          () => admin(gws[1]!.url, "POST", "/admin/keys", { balance_usd: "10.00" }),
        ),
      );
      await fn(gws, created, up);
    });
  } finally {
    await up.close();
    await sim.close();
  }
}

pgGatewayTest(
  "FIFO across two processes: keys waiting for the one account, alternately on each process, are granted it in arrival order",
  (env) =>
    onePoolTwoProcesses(env, { THETA_IDLE_RELEASE_MS: "1" }, 7, async (gws, keys, up) => {
      const store = await openPgStore(env.DATABASE_URL, new Logger("warn"));
      try {
        const enqueued = () =>
          store.updateDocument(
            POOL_DOCUMENT,
            (doc) => ({ doc: null, result: (doc as PoolDoc | null)?.seq ?? 0 }),
          );
        await assertFifo(gws.map((g) => g.url), up, keys.map((k) => k.key), enqueued);
      } finally {
        await store.close();
      }
    }),
);

pgGatewayTest(
  "kill -9 of the process holding the one account: another key is served within LEASE_TTL_MS (default THETA_IDLE_RELEASE_MS)",
  (env) =>
    onePoolTwoProcesses(env, { LEASE_TTL_MS: String(TTL_MS) }, 2, async ([a, b], keys, up) => {
      const res = await post(`${a!.url}/v1/chat/completions`, keys[0]!.key, {
        model: MODEL,
        stream: true,
        max_tokens: 20_000,
        messages: [{ role: "user", content: "[[id:killed]] долго [[sim:words=20000]] [[sim:interval=20]]" }],
      });
      assert.equal(res.status, 200);
      const reader = res.body!.getReader();
      await reader.read();
      a!.proc.kill("SIGKILL");
      await a!.proc.status;
      const killedAt = performance.now();
      await reader.cancel().catch(() => {});

      // The dead holding expires LEASE_TTL_MS after its last renewal (every TTL/3), so 2/3 TTL to TTL after
      // the kill; then the account is free for every key (not bound to the dead request's key while idle),
      // and the waiter looks again right then.
      const s = await send(b!.url, keys[1]!.key, "chat", "[[id:after]] привет [[sim:words=2]]");
      const ms = performance.now() - killedAt;
      assert.equal(s.status, 200, JSON.stringify(s.json));
      assert.ok(ms < TTL_MS + 1_000, `served ${Math.round(ms)} ms after the kill`);
      const waited = waitedMs(s, "after the kill");
      assert.ok(waited >= TTL_MS * 2 / 3 - 200 && waited < TTL_MS + 1_000, `waited ${waited} ms`);
      assert.deepEqual(up.calls.map((c) => [c.marker, c.account]), [["killed", "acc-1"], ["after", "acc-1"]]);
    }),
);
