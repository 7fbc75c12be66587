/**
 * The memory bounds of keyed answers (docs/idempotency.md) on a real gateway and simulator. Per answer
 * (IDEMPOTENCY_MAX_BUFFER_BYTES): a stream longer than it reaches its first client whole, and a retry — while it
 * runs, once it ended, once it was stored — is 409 idempotency_replay_unavailable in the surface's envelope
 * (spec §7.1), charged once. Per process (IDEMPOTENCY_MAX_TOTAL_BYTES): of two keyed streams running together
 * that do not fit it together, the one whose bytes would pass it is not kept and the other is; the bytes kept
 * never pass the bound and are all given back once both are stored.
 */
import assert from "node:assert/strict";
import { ANTHROPIC_HEADERS, startTestGateway, type TestGateway } from "../support/harness.ts";
import {
  assertCleanEnding,
  readFrames,
  type Surface,
  SURFACE_PATH,
  surfaceBody,
} from "../support/sse_client.ts";
import { walkUsage } from "../support/usage_rows.ts";
import { formatUsd, parseUsd } from "../../src/money/usd.ts";
import type { SseFrame } from "../../src/protocols/codec.ts";

const MODEL = "k3";

function keyed(
  t: TestGateway,
  surface: Surface,
  key: string,
  idem: string,
  body: unknown,
): Promise<Response> {
  return fetch(t.url + SURFACE_PATH[surface], {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      "idempotency-key": idem,
      ...(surface === "messages" ? ANTHROPIC_HEADERS : {}),
    },
    body: JSON.stringify(body),
  });
}

/** A stream of `words` output words, `intervalMs` apart frame to frame. */
function streamBody(surface: Surface, words: number, intervalMs: number, tag: string) {
  const text = `${tag} [[sim:words=${words}]]${intervalMs > 0 ? `[[sim:interval=${intervalMs}]]` : ""}`;
  return { ...surfaceBody(surface, MODEL, text), max_tokens: words + 100 };
}

/** The answer's text, from its deltas. */
function textOf(surface: Surface, frames: SseFrame[]): string {
  let text = "";
  for (const f of frames) {
    if (f.data === "[DONE]") continue;
    const json = JSON.parse(f.data);
    if (surface === "chat") text += json.choices?.[0]?.delta?.content ?? "";
    if (surface === "messages" && json.type === "content_block_delta") text += json.delta.text ?? "";
  }
  return text;
}

/** Reads `res` until more than `bytes` came; returns what came and the rest of the body's text. */
async function readPast(res: Response, bytes: number): Promise<{ head: string; rest: Promise<string> }> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let head = "";
  let n = 0;
  while (n <= bytes) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`the stream ended after ${n} bytes`);
    n += value.byteLength;
    head += decoder.decode(value, { stream: true });
  }
  const rest = new Response(
    new ReadableStream({
      pull: async (c) => {
        const { done, value } = await reader.read();
        if (done) c.close();
        else c.enqueue(value);
      },
    }),
  ).text();
  return { head, rest };
}

/** Polls `cond` every 10 ms; fails after 10 s naming `what`. */
async function until(cond: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** 409 idempotency_replay_unavailable in the surface's envelope (spec §7.1), read whole. */
async function assertUnavailable(surface: Surface, res: Response, where: string): Promise<void> {
  const text = await res.text();
  assert.equal(res.status, 409, `${where}: ${text.slice(0, 200)}`);
  const body = JSON.parse(text);
  assert.equal(res.headers.get("content-type"), "application/json", where);
  if (surface === "messages") {
    assert.deepEqual(Object.keys(body).sort(), ["error", "request_id", "type"], where);
    assert.equal(body.type, "error", where);
  } else {
    assert.deepEqual(Object.keys(body).sort(), ["error", "request_id"], where);
  }
  const { error } = body;
  assert.equal(error.code, "idempotency_replay_unavailable", where);
  assert.equal(error.type, "invalid_request_error", where);
  assert.equal(error.param, null, where);
  assert.equal(error.action, "Отправьте запрос заново с новым Idempotency-Key.", where);
  assert.ok(
    error.message.startsWith(
      "Ответ на запрос с этим Idempotency-Key не сохранён целиком: он слишком велик или был прерван, когда клиентов не осталось.",
    ),
    `${where}: ${error.message}`,
  );
  assert.equal(error.request_id, body.request_id, where);
  assert.match(body.request_id, /^req_/, where);
}

async function balance(t: TestGateway, id: string): Promise<bigint> {
  return parseUsd((await t.admin("GET", `/admin/keys/${id}`)).json.balance_usd);
}

for (const surface of ["chat", "messages"] as const) {
  Deno.test(`${surface}: a stream over IDEMPOTENCY_MAX_BUFFER_BYTES reaches its client whole; every retry is 409 replay_unavailable; charged once`, async () => {
    const max = 4096;
    const t = await startTestGateway({ IDEMPOTENCY_MAX_BUFFER_BYTES: String(max) });
    try {
      const { id, key } = await t.newKey("5.00");
      const start = await balance(t, id);
      const body = streamBody(surface, 400, 10, "long");
      const first = await keyed(t, surface, key, "big-1", body);
      assert.equal(first.status, 200);
      // Past the bound at its client, the run has dropped what it kept (it keeps each chunk before passing it on).
      const { head, rest } = await readPast(first, max);
      assert.equal(t.gw.app.keyedRuns.size, 1, "the first request still runs");
      const during = await keyed(t, surface, key, "big-1", body);
      await assertUnavailable(surface, during, "a retry while it runs");
      assert.equal(t.gw.app.keyedRuns.size, 1, "the retry did not stop the run");
      const raw = head + await rest;
      assert.ok(raw.length > 3 * max, `the stream is well over the bound: ${raw.length} bytes`);
      const { frames } = await readFrames(new Response(raw));
      assertCleanEnding(surface, frames, "the first client's stream");
      assert.equal(textOf(surface, frames).split(/\s+/).filter(Boolean).length, 400, "every word reached it");
      await assertUnavailable(surface, await keyed(t, surface, key, "big-1", body), "a retry once it ended");
      await until(() => t.gw.app.keyedRuns.size === 0, "the answer stored");
      const stored = await keyed(t, surface, key, "big-1", body);
      assert.equal(stored.headers.get("idempotent-replayed"), "true");
      await assertUnavailable(surface, stored, "a retry from the store");
      assert.equal(t.gw.app.keyedRuns.budget.used, 0);
      const rows = await walkUsage(t.url, key, 10);
      assert.equal(rows.length, 1, "one usage row");
      assert.equal(rows[0]!.output_tokens, 400);
      assert.equal(
        formatUsd(start - await balance(t, id)),
        rows[0]!.charged_usd,
        "charged once, for that row",
      );
    } finally {
      await t.close();
    }
  });
}

Deno.test("two keyed streams that do not fit IDEMPOTENCY_MAX_TOTAL_BYTES together: one is not kept, the other is; the bytes kept stay within it", async () => {
  const maxTotal = 32 * 1024;
  const t = await startTestGateway({
    IDEMPOTENCY_MAX_TOTAL_BYTES: String(maxTotal),
    IDEMPOTENCY_MAX_BUFFER_BYTES: String(4 * maxTotal), // only the process's bound applies
  });
  const budget = t.gw.app.keyedRuns.budget;
  let peak = 0;
  const sampler = setInterval(() => peak = Math.max(peak, budget.used), 1);
  try {
    const { id, key } = await t.newKey("5.00");
    const start = await balance(t, id);
    // A slow stream, then a fast one once A holds a quarter of the bound: A's held bytes and B's whole answer
    // are more than the bound, and A runs on for seconds after B is done.
    const bodyA = streamBody("chat", 400, 30, "slow");
    const bodyB = streamBody("chat", 400, 0, "fast");
    const a = await keyed(t, "chat", key, "total-a", bodyA);
    const { head: headA, rest: restA } = await readPast(a, maxTotal / 4);
    const b = await keyed(t, "chat", key, "total-b", bodyB);
    const [rawA, rawB] = [headA + await restA, await b.text()];
    for (const [raw, name] of [[rawA, "A"], [rawB, "B"]] as const) {
      const size = new TextEncoder().encode(raw).byteLength;
      assert.ok(size > maxTotal / 2 && size < maxTotal, `${name} alone fits the bound, both do not: ${size}`);
      const { frames } = await readFrames(new Response(raw));
      assertCleanEnding("chat", frames, `${name}'s first client`);
      assert.equal(
        textOf("chat", frames).split(/\s+/).filter(Boolean).length,
        400,
        `${name} reached its client whole`,
      );
    }
    await until(() => t.gw.app.keyedRuns.size === 0, "both answers stored");
    clearInterval(sampler);
    assert.ok(peak > maxTotal / 4, `the sampler saw the bytes kept: peak ${peak}`);
    assert.ok(peak <= maxTotal, `the bytes kept never passed the bound: peak ${peak}`);
    assert.equal(budget.used, 0, "every byte given back once stored");

    const retryA = await keyed(t, "chat", key, "total-a", bodyA);
    const retryB = await keyed(t, "chat", key, "total-b", bodyB);
    const outcomes = [retryA.status, retryB.status].sort();
    assert.deepEqual(outcomes, [200, 409], "exactly one of the two was kept");
    const [kept, keptRaw, dropped] = retryA.status === 200 ? [retryA, rawA, retryB] : [retryB, rawB, retryA];
    assert.equal(kept.headers.get("idempotent-replayed"), "true");
    assert.equal(await kept.text(), keptRaw, "the kept one replays byte for byte");
    await assertUnavailable("chat", dropped, "the one that would pass the bound");

    const rows = await walkUsage(t.url, key, 10);
    assert.equal(rows.length, 2, "one row per stream, none for the retries");
    const charged = rows.reduce((sum, r) => sum + parseUsd(r.charged_usd), 0n);
    assert.equal(formatUsd(start - await balance(t, id)), formatUsd(charged));
  } finally {
    clearInterval(sampler);
    await t.close();
  }
});
