/**
 * Caps across two gateway processes on one shared store (docs/ledger_leases.md "Caps across processes", spec
 * §5.5), each test on Postgres (TEST_DATABASE_URL, skipped without it) and on a shared Deno KV file (`kv:`):
 * a cap set through one process on a key the other leased before holds as on one process once the other read
 * it (KEY_REFRESH_MS); a cap lowered mid-load and a cap lifted; reserve and daily caps and a delta_ family's
 * codes; and what a process that has not read a new cap can spend past it: at most what it had leased.
 *
 * Every request of one kind has the same reserve r and charge c (fixed prompt and answer), so one process's
 * behaviour is exact: with nothing open, a request is admitted while spent + r ≤ a spend cap, so a key that
 * reached a spend cap has made exactly n* = ⌊(cap − r) / c⌋ + 1 charges; a reserve cap admits exactly
 * ⌊cap / r⌋ reserves. Idle leases never return by themselves here (LEASE_IDLE_MS is long), so only the fix
 * can free the credit a process leased before a cap.
 */
import assert from "node:assert/strict";
import { startSimulator } from "../../sim/server.ts";
import { HOUR } from "../../src/accounts/windows.ts";
import { formatUsd, parseUsd } from "../../src/money/usd.ts";
import {
  admin,
  type GatewayProc,
  keyView,
  newKey,
  sleep,
  withGatewayProcesses,
} from "../support/gateway_process.ts";
import { post } from "../support/harness.ts";
import { pgGatewayTest } from "../support/pg_harness.ts";
import { walkUsage } from "../support/usage_rows.ts";

const REFRESH_MS = 300;
/** Key changes reach the other process within REFRESH_MS; an idle lease stays for the whole test. */
const SHARED = { KEY_REFRESH_MS: String(REFRESH_MS), LEASE_IDLE_MS: "600000" };
const ALPHA = "k3";
const GAMMA = "gamma-2.5";
type Env = Record<string, string>;

/** Registers `fn` on Postgres (skipped without TEST_DATABASE_URL) and on a shared KV file. */
function onSharedStores(name: string, fn: (env: Env) => Promise<void>): void {
  pgGatewayTest(name, (env) => fn(env));
  Deno.test(`${name} [kv file]`, async () => {
    const dir = await Deno.makeTempDir();
    try {
      await fn({ DATABASE_URL: `kv:${dir}/shared.kv` });
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}

/** Two gateways (A, B) on one store in front of one simulator (alpha and the delta family). */
async function withTwo(env: Env, fn: (a: GatewayProc, b: GatewayProc) => Promise<void>, envA: Env = {}) {
  // The hour (and so the day) window must not turn over during a test.
  const left = HOUR - Date.now() % HOUR;
  if (left < 20_000) await sleep(left + 100);
  const sim = await startSimulator();
  const common = { ...env, ...SHARED, DELTA_UPSTREAM_URL: sim.url, DELTA_UPSTREAM_KEY: "k" };
  try {
    await withGatewayProcesses(sim.url, [{ ...common, ...envA }, common], ([a, b]) => fn(a!, b!));
  } finally {
    await sim.close();
  }
}

interface Reply {
  status: number;
  id: string;
  code: string | undefined;
}

/** A chat request whose reserve and charge are the same for every `n` (the prompt has a fixed length). */
async function chat(url: string, key: string, n: number, model = ALPHA): Promise<Reply> {
  const res = await post(`${url}/v1/chat/completions`, key, {
    model,
    max_tokens: 200,
    messages: [{ role: "user", content: `запрос ${String(n).padStart(4, "0")} [[sim:words=150]]` }],
  });
  const json = await res.json();
  return { status: res.status, id: res.headers.get("request-id")!, code: json.error?.code };
}

/** The reserve and the charge of one `chat` request of `model`, from its usage row (a probe key of its own). */
async function probe(url: string, model = ALPHA): Promise<{ r: bigint; c: bigint }> {
  const { key } = await newKey(url, parseUsd("10.00"));
  const reply = await chat(url, key, 0, model);
  assert.equal(reply.status, 200, JSON.stringify(reply));
  const [row] = await walkUsage(url, key, 10);
  return { r: parseUsd(row!.reserved_usd), c: parseUsd(row!.charged_usd) };
}

/** Sets caps through the admin API of `url`; the view must show them. */
async function setCaps(url: string, id: string, caps: Record<string, bigint | null>) {
  const body = Object.fromEntries(
    Object.entries(caps).map(([k, v]) => [k, v === null ? null : formatUsd(v)]),
  );
  const set = await admin(url, "POST", `/admin/keys/${id}/caps`, body);
  for (const [k, v] of Object.entries(body)) assert.equal(set.caps?.[k], v, JSON.stringify(set));
}

/** Waits until the process at `url` shows the cap (its key refresh read it), at most 3 s. */
async function shows(url: string, id: string, field: string, cap: bigint) {
  const deadline = Date.now() + 3_000;
  while ((await keyView(url, id)).caps[field] !== formatUsd(cap)) {
    assert.ok(Date.now() < deadline, `${url} did not read the ${field} cap`);
    await sleep(50);
  }
}

/**
 * Waves of 8 concurrent requests, alternating A and B within each, until a wave has a refusal (at most
 * `maxWaves`); then, with nothing open and every settlement durable (each view flushes its process), one request
 * at a time on A and B in turn until one is refused. Returns the admitted request ids and the refusals.
 */
async function wavesThenFill(
  gws: GatewayProc[],
  k: { id: string; key: string },
  model = ALPHA,
  maxWaves = 10,
) {
  const key = k.key;
  const admitted: string[] = [];
  const refused: Reply[] = [];
  let n = 1;
  for (let wave = 0; wave < maxWaves; wave++) {
    const replies = await Promise.all(
      Array.from({ length: 8 }, (_, i) => chat(gws[i % 2]!.url, key, n++, model)),
    );
    admitted.push(...replies.filter((r) => r.status === 200).map((r) => r.id));
    refused.push(...replies.filter((r) => r.status !== 200));
    if (refused.length > 0) break;
  }
  const inWaves = admitted.length;
  for (const gw of gws) await keyView(gw.url, k.id);
  for (let i = 0; i < 40; i++) {
    const gw = gws[i % 2]!;
    const reply = await chat(gw.url, key, n++, model);
    if (reply.status !== 200) {
      refused.push(reply);
      break;
    }
    admitted.push(reply.id);
    await keyView(gw.url, k.id);
  }
  return { admitted, refused, inWaves };
}

/** Both processes refuse the key with `code` (429), nothing open. */
async function bothRefuse(gws: GatewayProc[], key: string, code: string, model = ALPHA) {
  for (const gw of gws) {
    const reply = await chat(gw.url, key, 9_999, model);
    assert.deepEqual([reply.status, reply.code], [429, code], `${gw.url}: ${JSON.stringify(reply)}`);
  }
}

/** The money identity on both processes (credited = balance + held + spent, held 0, balance ≥ 0), the usage
 *  rows exactly the admitted requests, Σ charged = spent. Returns the rows. */
async function assertBooks(
  gws: GatewayProc[],
  key: { id: string; key: string },
  credit: bigint,
  ids: string[],
) {
  for (const gw of gws) await keyView(gw.url, key.id); // each process's settlements durable
  const rows = await walkUsage(gws[0]!.url, key.key, 100);
  assert.deepEqual(rows.map((r) => r.request_id).sort(), [...ids].sort());
  const charged = rows.reduce((s, r) => s + parseUsd(r.charged_usd), 0n);
  for (const gw of gws) {
    const m = await keyView(gw.url, key.id);
    assert.equal(m.held, 0n);
    assert.equal(m.credited, credit);
    assert.ok(m.balance >= 0n, formatUsd(m.balance));
    assert.equal(m.credited, m.balance + m.held + m.spent);
    assert.equal(m.spent, charged);
  }
  return rows;
}

/** Smallest n with n·c + r > cap: the charges a key that reached a spend cap has made, on one process. */
const reached = (cap: bigint, r: bigint, c: bigint) => (cap - r) / c + 1n;

onSharedStores(
  "an hourly spend cap set through B on a key A leased before: after the refresh the key spends up to the cap as on one process, then both refuse",
  (env) =>
    withTwo(env, async (a, b) => {
      const { r, c } = await probe(a.url);
      const credit = parseUsd("5.00");
      const key = await newKey(a.url, credit);
      const warm = await chat(a.url, key.key, 0);
      assert.equal(warm.status, 200);
      assert.ok((await keyView(a.url, key.id)).leased > 11n * c, "A's lease is larger than the cap to come");
      const cap = 11n * c;
      await setCaps(b.url, key.id, { hourly_spend_usd: cap });
      await sleep(REFRESH_MS);
      await shows(a.url, key.id, "hourly_spend_usd", cap);

      const { admitted, refused, inWaves } = await wavesThenFill([a, b], key);
      assert.ok(inWaves > 0, `none served in the first wave: ${JSON.stringify(refused)}`);
      for (const x of refused) {
        assert.deepEqual([x.status, x.code], [429, "hourly_spend_limit"], JSON.stringify(x));
      }
      await bothRefuse([a, b], key.key, "hourly_spend_limit");
      const rows = await assertBooks([a, b], key, credit, [warm.id, ...admitted]);
      const spent = rows.reduce((s, x) => s + parseUsd(x.charged_usd), 0n);
      assert.ok(spent <= cap, `Σ charges ${formatUsd(spent)} ≤ cap ${formatUsd(cap)}`);
      // One process would have made exactly n* charges before refusing with nothing open.
      assert.equal(BigInt(rows.length), reached(cap, r, c));
      assert.equal(spent, BigInt(rows.length) * c);
      // A gave back what it had leased before the cap: a capped key's leases are its open holds, none now.
      assert.equal((await keyView(a.url, key.id)).leased, 0n);
    }),
);

onSharedStores(
  "a spend cap lowered through B mid-load counts from the next hold on both processes; lifted through A, both serve again at once",
  (env) =>
    withTwo(env, async (a, b) => {
      const { r, c } = await probe(a.url);
      const credit = parseUsd("5.00");
      const key = await newKey(a.url, credit);
      const warm = await chat(b.url, key.key, 0);
      assert.equal(warm.status, 200);
      await setCaps(a.url, key.id, { hourly_spend_usd: 40n * c });
      await shows(b.url, key.id, "hourly_spend_usd", 40n * c);
      const ids = [warm.id];
      const wave = (from: number) =>
        Promise.all(Array.from({ length: 8 }, (_, i) => chat([a, b][i % 2]!.url, key.key, from + i)));
      const first = await wave(1);
      assert.ok(first.every((x) => x.status === 200), JSON.stringify(first));
      ids.push(...first.map((x) => x.id));
      // Lowered while the second wave runs: 9 charges, 8 holds open at r and up to 8 unspent rests not yet
      // committed fit below it whichever way they interleave, and its n* is well below the old cap's.
      const lowered = 9n * c + 16n * r;
      assert.ok(reached(lowered, r, c) < reached(40n * c, r, c));
      const [second] = await Promise.all([wave(9), setCaps(b.url, key.id, { hourly_spend_usd: lowered })]);
      assert.ok(second.every((x) => x.status === 200), JSON.stringify(second));
      ids.push(...second.map((x) => x.id));
      const { admitted, refused } = await wavesThenFill([a, b], key);
      for (const x of refused) {
        assert.deepEqual([x.status, x.code], [429, "hourly_spend_limit"], JSON.stringify(x));
      }
      await bothRefuse([b, a], key.key, "hourly_spend_limit");
      ids.push(...admitted);
      const rows = await assertBooks([a, b], key, credit, ids);
      assert.equal(BigInt(rows.length), reached(lowered, r, c));
      assert.ok(BigInt(rows.length) * c <= lowered);

      await setCaps(a.url, key.id, { hourly_spend_usd: null });
      const again = [await chat(b.url, key.key, 500), await chat(a.url, key.key, 501)];
      assert.deepEqual(
        again.map((x) => x.status),
        [200, 200],
        JSON.stringify(again),
      );
      await assertBooks([a, b], key, credit, [...ids, ...again.map((x) => x.id)]);
    }),
);

onSharedStores(
  "a daily reserve cap (alpha) and a daily spend cap (delta_ codes, gamma) set through B on keys A leased before hold across both",
  (env) =>
    withTwo(env, async (a, b) => {
      // Reserve caps count reserves: exactly ⌊cap / r⌋ of them in the day, the warm-up's included.
      const alpha = await probe(a.url);
      const credit = parseUsd("5.00");
      const key = await newKey(a.url, credit);
      const warm = await chat(a.url, key.key, 0);
      assert.equal(warm.status, 200);
      const reserveCap = 7n * alpha.r + alpha.r / 2n;
      await setCaps(b.url, key.id, { daily_reserve_usd: reserveCap });
      await sleep(REFRESH_MS);
      await shows(a.url, key.id, "daily_reserve_usd", reserveCap);
      const res = await wavesThenFill([a, b], key);
      for (const x of res.refused) assert.deepEqual([x.status, x.code], [429, "daily_reserve_limit"]);
      await bothRefuse([a, b], key.key, "daily_reserve_limit");
      const rows = await assertBooks([a, b], key, credit, [warm.id, ...res.admitted]);
      assert.equal(rows.length, 7);

      // The delta family's own code for the same cap kind, on gamma.
      const gamma = await probe(a.url, GAMMA);
      const dkey = await newKey(a.url, credit);
      const dwarm = await chat(a.url, dkey.key, 0, GAMMA);
      assert.equal(dwarm.status, 200, JSON.stringify(dwarm));
      const spendCap = gamma.r + 5n * gamma.c;
      await setCaps(b.url, dkey.id, { daily_spend_usd: spendCap });
      await sleep(REFRESH_MS);
      await shows(a.url, dkey.id, "daily_spend_usd", spendCap);
      const d = await wavesThenFill([a, b], dkey, GAMMA);
      for (const x of d.refused) assert.deepEqual([x.status, x.code], [429, "delta_daily_spend_limit"]);
      await bothRefuse([a, b], dkey.key, "delta_daily_spend_limit", GAMMA);
      const drows = await assertBooks([a, b], dkey, credit, [dwarm.id, ...d.admitted]);
      assert.equal(BigInt(drows.length), reached(spendCap, gamma.r, gamma.c));
    }),
);

onSharedStores(
  "a process that has not read a new cap spends past it at most what it had leased when the cap was set; its next take reads the cap",
  (env) =>
    withTwo(
      env,
      async (a, b) => {
        const { r, c } = await probe(a.url);
        // A small credit, so A's slice is 8 reserves (not 1/16 of the credit) and is used up in a few requests.
        const credit = 40n * r;
        const key = await newKey(a.url, credit);
        const warm = await chat(a.url, key.key, 0);
        assert.equal(warm.status, 200);
        const before = await keyView(a.url, key.id); // flushes A: the warm-up is durable
        const leased = (await keyView(b.url, key.id)).leased; // B has no lease: this is A's
        assert.equal(leased, 8n * r - c);
        const cap = 2n * c;
        await setCaps(b.url, key.id, { hourly_spend_usd: cap });
        // B counts A's whole lease as open holds.
        assert.deepEqual((await chat(b.url, key.key, 1)).code, "hourly_spend_limit");
        // A (its key refresh is an hour away) holds from its lease, then its take reads the cap.
        const ids = [warm.id];
        let last: Reply | undefined;
        for (let n = 2; n < 80; n++) {
          last = await chat(a.url, key.key, n);
          if (last.status !== 200) break;
          ids.push(last.id);
        }
        assert.deepEqual([last!.status, last!.code], [429, "hourly_spend_limit"], JSON.stringify(last));
        assert.equal(
          (await keyView(a.url, key.id)).caps.hourly_spend_usd,
          null,
          "A's record has not read the cap",
        );
        const rows = await assertBooks([a, b], key, credit, ids);
        const spent = rows.reduce((s, x) => s + parseUsd(x.charged_usd), 0n);
        // The bound: spent in the hour ≤ max(cap, spent when the cap was set + what A had leased then).
        assert.ok(
          spent <= before.spent + leased,
          `${formatUsd(spent)} ≤ ${formatUsd(before.spent + leased)}`,
        );
        assert.ok(spent > cap, "the window is real: A spent past the cap from its lease");
        await bothRefuse([a, b], key.key, "hourly_spend_limit");
      },
      { KEY_REFRESH_MS: String(HOUR) },
    ),
);
