/**
 * A seeded fuzz of the upstream HTTP clients (UPSTREAM_CLIENT=wire and fetch, src/upstream/http_client.ts): one
 * raw upstream (adversarial_upstream.ts) answers every request with a byte-level mutation of a valid response
 * (bytes dropped, doubled or inserted in the head and the chunked framing, Content-Length digits changed, chunks
 * split, an answer's copy appended or written on the idle connection, the connection closed early), and one
 * client sends bursts of requests that reuse its pooled connections. The invariant: every answer a client hands
 * back is its own request's (its nonce), and nothing hangs. Errors are allowed.
 *
 * Replay: FUZZ_SEED=<seed> (printed with any failure); FUZZ_ROUNDS=<n> changes the number of requests.
 *
 * Fair play: bytes beyond an answer (an appended copy, a stray) are only ever written after a well-framed
 * answer, and the next burst starts once they are on the wire and the client had a moment to see them: data
 * that arrives after a request was written is indistinguishable from its answer (RFC 9112 §9.2 asks the client
 * to refuse only data that comes while no request is outstanding).
 */
import { mulberry32 } from "../../src/util/seeded_random.ts";
import assert from "node:assert/strict";
import { upstreamHttp } from "../../src/upstream/http_client.ts";
import {
  adversarialUpstream,
  bodyOf,
  clAnswer,
  type Exchange,
  exchange,
  newNonce,
  NONCE,
  type Result,
  sleep,
} from "../support/adversarial_upstream.ts";

const DEFAULT_SEED = 0x5eed2024;
/**
 * The most the next burst waits for the client to drop connections that received bytes beyond an answer. A
 * client that drops them (both do) ends the wait at once; the bound only matters for one that keeps them, and
 * is long so that a loaded machine cannot make a slow but correct client fail.
 */
const SETTLE_MS = 500;

type Rng = () => number;
const int = (rng: Rng, n: number) => Math.floor(rng() * n);
const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[int(rng, xs.length)]!;

/** Bytes the mutations insert: the ones framing is made of, and a few that break it. */
const ALPHABET = ["\r", "\n", " ", "\t", ":", ",", ";", "0", "1", "9", "a", "f", "x", "-", "+", "\0", "H"];

/** An answer as text and the ranges a byte mutation may touch (never the x-echo line or the body's data). */
interface Framed {
  text: string;
  zones: [number, number][];
}

/** A valid answer to `nonce`: Content-Length or chunked (the first chunk holds the whole nonce). */
function validAnswer(rng: Rng, nonce: string): Framed {
  const body = bodyOf(nonce, "answer" + "-".repeat(int(rng, 40)));
  const status = "HTTP/1.1 200 OK\r\n";
  const echo = `x-echo: ${nonce}\r\n`;
  const zones: [number, number][] = [[0, 12]]; // "HTTP/1.1 200"
  const extra = rng() < 0.3 ? "connection: keep-alive\r\n" : "";
  if (rng() < 0.5) {
    const head = status + echo +
      `content-type: application/json\r\n${extra}content-length: ${body.length}\r\n\r\n`;
    zones.push([status.length + echo.length, head.length]);
    return { text: head + body, zones };
  }
  let text = status + echo + `content-type: application/json\r\n${extra}transfer-encoding: chunked\r\n\r\n`;
  zones.push([status.length + echo.length, text.length]);
  const cuts = [0, 40];
  while (cuts[cuts.length - 1]! < body.length) cuts.push(cuts[cuts.length - 1]! + 1 + int(rng, 20));
  for (let i = 0; i + 1 < cuts.length; i++) {
    const data = body.slice(cuts[i], cuts[i + 1]);
    const line = `${rng() < 0.1 ? "0" : ""}${data.length.toString(16)}${rng() < 0.1 ? ";e=1" : ""}\r\n`;
    zones.push([text.length, text.length + line.length]);
    text += line + data;
    zones.push([text.length, text.length + 2]);
    text += "\r\n";
  }
  const last = rng() < 0.2 ? "0\r\nx-t: 1\r\n\r\n" : "0\r\n\r\n";
  zones.push([text.length, text.length + last.length]);
  return { text: text + last, zones };
}

/** One byte-level change inside a zone; the zones after it move with it. */
function mutateBytes(rng: Rng, f: Framed): string {
  const [from, to] = pick(rng, f.zones);
  const at = from + int(rng, to - from);
  const op = int(rng, 4);
  const ch = pick(rng, ALPHABET);
  const delta = op === 0 ? -1 : op === 3 ? 0 : 1;
  const text = op === 0
    ? f.text.slice(0, at) + f.text.slice(at + 1)
    : op === 1
    ? f.text.slice(0, at) + f.text[at] + f.text.slice(at)
    : op === 2
    ? f.text.slice(0, at) + ch + f.text.slice(at)
    : f.text.slice(0, at) + ch + f.text.slice(at + 1);
  f.text = text;
  f.zones = f.zones.map(([a, b]) => [a > at ? a + delta : a, b > at ? Math.max(a, b + delta) : b]);
  return `${["drop", "double", "insert", "replace"][op]} ${JSON.stringify(ch)} at ${at}`;
}

/** A changed Content-Length value (or chunk size), or none when the answer has neither to change. */
function mutateLength(rng: Rng, f: Framed): string {
  const m = /content-length: (\d+)/.exec(f.text) ?? /\r\n\r\n([0-9a-f]+)\r\n/.exec(f.text);
  if (!m) return "no length to change";
  const value = m[1]!;
  const changed = pick(rng, [
    value + String(int(rng, 10)),
    value.slice(1) || "0",
    String(Math.max(0, parseInt(value, 10) - 1 - int(rng, 5))),
    String(parseInt(value, 10) + 1 + int(rng, 5)),
    "0",
    "9".repeat(21),
  ]);
  const at = m.index + m[0].indexOf(value);
  f.text = f.text.slice(0, at) + changed + f.text.slice(at + value.length);
  return `length ${value} → ${changed}`;
}

interface Plan {
  describe: string;
  /** Bytes written after a well-framed answer (the next burst waits for them and a moment). */
  trailing: boolean;
  run(x: Exchange): Promise<void>;
}

/** What the upstream does for one request: derived from the seed and the round alone (replayable). */
function planFor(seed: number, round: number, nonce: string): Plan {
  const rng = mulberry32(seed ^ Math.imul(round + 1, 0x9e3779b1));
  const f = validAnswer(rng, nonce);
  const stray = () => clAnswer(nonce, { tag: "stray" });
  const roll = rng();
  const writeAll = async (x: Exchange, text: string) => {
    if (rng() < 0.2) {
      // In pieces: heads and chunk lines split across reads.
      for (let at = 0; at < text.length;) {
        const n = 1 + int(rng, 64);
        await x.write(text.slice(at, at + n));
        at += n;
        if (rng() < 0.3) await sleep(1);
      }
    } else await x.write(text);
  };
  if (roll < 0.25) {
    return { describe: "valid", trailing: false, run: (x) => writeAll(x, f.text) };
  }
  if (roll < 0.55) {
    const changes = Array.from({ length: 1 + int(rng, 3) }, () => mutateBytes(rng, f));
    const close = rng() < 0.2;
    return {
      describe: `bytes: ${changes.join("; ")}${close ? "; then close" : ""}`,
      trailing: close,
      run: async (x) => {
        await writeAll(x, f.text);
        if (close) x.close();
      },
    };
  }
  if (roll < 0.7) {
    const change = mutateLength(rng, f);
    return { describe: change, trailing: false, run: (x) => writeAll(x, f.text) };
  }
  if (roll < 0.9) {
    const how = int(rng, 4);
    const delay = int(rng, 15);
    const describe = [
      "a copy appended",
      "half a copy appended",
      `a stray after ${delay} ms`,
      "two copies",
    ][how]!;
    return {
      describe,
      trailing: true,
      run: async (x) => {
        if (how === 0) await x.write(f.text + stray());
        else if (how === 1) await x.write(f.text + stray().slice(0, 1 + int(rng, 60)));
        else if (how === 2) {
          await writeAll(x, f.text);
          await sleep(delay);
          await x.write(stray());
        } else await x.write(f.text + stray() + stray());
      },
    };
  }
  const cut = int(rng, f.text.length);
  const half = rng() < 0.5;
  return {
    describe: half ? "half-close after the answer" : `cut at ${cut} of ${f.text.length}, then close`,
    trailing: true,
    run: async (x) => {
      if (half) {
        await x.write(f.text);
        await x.closeWrite();
      } else {
        await x.write(f.text.slice(0, cut));
        x.close();
      }
    },
  };
}

interface Failure {
  round: number;
  plan: string;
  /** The round whose answer it received, and what the upstream did in that round. */
  from: string;
  result: Result;
}

/**
 * `rounds` requests through one client and one upstream, in bursts of up to `maxBurst` at once. A request still
 * waiting once the upstream wrote all it will (a length that promises more, say) gets its connection closed: it
 * then ends in an error, never a hang.
 */
async function fuzz(kind: "wire" | "fetch", seed: number, total: number, maxBurst: number) {
  const plans = new Map<number, { plan: Plan; conns: Exchange[] }>();
  const up = adversarialUpstream(async (x) => {
    const round = Number(x.label.slice(1));
    const nonce = x.nonce;
    let entry = plans.get(round);
    if (!entry) plans.set(round, entry = { plan: planFor(seed, round, nonce), conns: [] });
    entry.conns.push(x);
    await entry.plan.run(x);
  });
  const http = upstreamHttp(kind, () => undefined);
  const failures: Failure[] = [];
  const rounds = new Map<string, number>();
  const rng = mulberry32(seed);
  let round = 0;
  try {
    while (round < total && failures.length < 5) {
      const burst = Math.min(total - round, 1 + int(rng, maxBurst));
      const pending = new Set<number>();
      const calls = Array.from({ length: burst }, async (_, i) => {
        const r = round + i;
        pending.add(r);
        const nonce = newNonce();
        rounds.set(nonce, r);
        const result = await exchange(http.fetch, up.url, { label: `r${r}`, nonce, limitMs: 5000 });
        pending.delete(r);
        if (result.outcome === "foreign" || result.outcome === "hang") {
          const other = [...result.detail.matchAll(NONCE)].map((m) => rounds.get(m[0])).find((o) => o !== r);
          failures.push({
            round: r,
            plan: plans.get(r)?.plan.describe ?? "(its request never reached the upstream)",
            from: other === undefined ? "-" : `round ${other} [${plans.get(other)?.plan.describe}]`,
            result,
          });
        }
      });
      const all = Promise.all(calls);
      // Whatever still waits once the upstream is done writing gets end of stream (a half-close): it ends in an
      // error (or a close-delimited answer), never a hang. Each call is bounded by its own limit besides. Not a
      // full close: the connection then counts as gone only once the client has closed it too (below).
      while (pending.size > 0) {
        await up.settled();
        await Promise.race([all, sleep(3)]);
        for (const r of pending) for (const x of plans.get(r)?.conns ?? []) await x.closeWrite();
      }
      await all;
      await up.settled();
      // Bytes written beyond an answer are on the wire; the next burst waits until the client has closed those
      // connections, or SETTLE_MS (a client that keeps such a connection fails on the next burst, if it reuses it).
      const beyond: Promise<void>[] = [];
      for (let r = round; r < round + burst; r++) {
        const entry = plans.get(r);
        if (entry?.plan.trailing) { for (const x of entry.conns) beyond.push(x.gone); }
      }
      if (beyond.length > 0) await Promise.race([Promise.all(beyond), sleep(SETTLE_MS)]);
      round += burst;
    }
  } finally {
    http.close();
    await up.close();
  }
  return { failures, rounds: round, accepts: up.accepts };
}

const seed = Number(Deno.env.get("FUZZ_SEED") ?? DEFAULT_SEED);
const roundsEnv = Deno.env.get("FUZZ_ROUNDS");

function report(kind: string, failures: Failure[]): string {
  return `${kind}: ${failures.length} failures; replay with FUZZ_SEED=${seed}\n` +
    failures.map((f) =>
      `round ${f.round} [${f.plan}]: ${f.result.outcome}: ${f.result.detail}; received ${f.from}`
    )
      .join("\n");
}

Deno.test(`upstream fuzz (UPSTREAM_CLIENT=wire, seed ${seed}): an answer reaches only its own request`, async () => {
  const { failures, rounds, accepts } = await fuzz("wire", seed, Number(roundsEnv ?? 3000), 4);
  assert.deepEqual(failures, [], report("wire", failures));
  assert.ok(accepts < rounds, `connections are reused (${accepts} for ${rounds} requests)`);
});

Deno.test(`upstream fuzz (UPSTREAM_CLIENT=fetch, seed ${seed}): an answer reaches only its own request`, async () => {
  // One request at a time: hyper's pool hands a connection freed mid-burst to a waiting request at once, before
  // a stray written after the answer could reach it (a race no client can win, see above).
  const { failures, rounds, accepts } = await fuzz("fetch", seed, Number(roundsEnv ?? 1000), 1);
  assert.deepEqual(failures, [], report("fetch", failures));
  assert.ok(accepts < rounds, `connections are reused (${accepts} for ${rounds} requests)`);
});
