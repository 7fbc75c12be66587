/**
 * An Idempotency-Key over time on one gateway (docs/idempotency.md): past IDEMPOTENCY_TTL_MS the key is free
 * (the same request runs as new, another body is no longer refused); a keyed stream whose client left is
 * cancelled after IDEMPOTENCY_DETACH_MS and billed as a stream its client cut, its key then 409
 * idempotency_replay_unavailable; a retry within the detach time attaches and gets the whole answer.
 */
import assert from "node:assert/strict";
import { formatUsd, parseUsd } from "../../src/money/usd.ts";
import { sleep } from "../support/gateway_process.ts";
import { startTestGateway, type TestGateway } from "../support/harness.ts";
import { walkUsage } from "../support/usage_rows.ts";

const chat = (text: string, stream = false) => ({
  model: "k3",
  max_tokens: 4_000,
  stream,
  messages: [{ role: "user", content: text }],
});

function call(t: TestGateway, key: string, idem: string | undefined, body: unknown) {
  return fetch(`${t.url}/v1/chat/completions`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      ...(idem === undefined ? {} : { "idempotency-key": idem }),
    },
    body: JSON.stringify(body),
  });
}

async function money(t: TestGateway, id: string) {
  const v = (await t.admin("GET", `/admin/keys/${id}`)).json;
  return { balance: v.balance_usd as string, held: v.held_usd as string, spent: v.spent_usd as string };
}

/** The key's usage rows once every settlement is durable, newest first. */
async function rows(t: TestGateway, key: string) {
  await t.gw.app.accounts.committer.flush();
  return await walkUsage(t.url, key, 50);
}

/** Reads a stream until it has `events` SSE events, then drops the connection; returns what was read. */
async function readThenLeave(res: Response, events: number): Promise<string> {
  const reader = res.body!.getReader();
  let seen = "";
  while ((seen.match(/\n\n/g) ?? []).length < events) {
    const { done, value } = await reader.read();
    assert.ok(!done, `the stream ended after ${seen.length} bytes`);
    seen += new TextDecoder().decode(value);
  }
  await reader.cancel();
  return seen;
}

/** Waits (bounded) until `cond` holds. */
async function until(what: string, cond: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    assert.ok(Date.now() < deadline, `${what}: not within ${ms} ms`);
    await sleep(20);
  }
}

const TTL_MS = 300;

Deno.test("past IDEMPOTENCY_TTL_MS the same key and body run as new, charged again; another body is no longer 409", async () => {
  const t = await startTestGateway({ IDEMPOTENCY_TTL_MS: String(TTL_MS) });
  try {
    const { id, key } = await t.newKey("5.00");
    const body = chat("срок ключа [[sim:words=30]]");
    const first = await call(t, key, "ttl-1", body);
    const firstText = await first.text();
    assert.equal(first.status, 200, firstText);
    const afterFirst = await money(t, id);
    // Within the window: the other body is refused (what expiry must lift).
    const reused = await call(t, key, "ttl-1", chat("другой запрос [[sim:words=30]]"));
    assert.equal(reused.status, 409);
    assert.equal((await reused.json()).error.code, "idempotency_key_reused");

    await sleep(TTL_MS + 200);
    const upstreamCalls = t.sim.requests.length;
    const again = await call(t, key, "ttl-1", body);
    const againText = await again.text();
    assert.equal(again.status, 200, againText);
    assert.equal(again.headers.get("idempotent-replayed"), null);
    assert.notEqual(again.headers.get("request-id"), first.headers.get("request-id"));
    assert.notEqual(againText, firstText, "a new answer (its own id)");
    assert.equal(t.sim.requests.length, upstreamCalls + 1, "the upstream was called again");
    const usage = await rows(t, key);
    assert.deepEqual(
      usage.map((r) => r.request_id),
      [again.headers.get("request-id"), first.headers.get("request-id")],
    );
    assert.equal(usage[0]!.status, "ok");
    assert.equal(usage[0]!.charged_usd, usage[1]!.charged_usd, "the same request costs the same");
    const afterAgain = await money(t, id);
    assert.equal(
      formatUsd(parseUsd(afterFirst.balance) - parseUsd(afterAgain.balance)),
      usage[0]!.charged_usd,
      "charged a second time",
    );

    await sleep(TTL_MS + 200);
    const other = await call(t, key, "ttl-1", chat("другой запрос [[sim:words=30]]"));
    const otherText = await other.text();
    assert.equal(other.status, 200, otherText);
    assert.equal(other.headers.get("idempotent-replayed"), null);
    assert.equal((await rows(t, key)).length, 3);
    // And the new request owns the key now: a retry of it is a replay.
    const otherAgain = await call(t, key, "ttl-1", chat("другой запрос [[sim:words=30]]"));
    assert.equal(otherAgain.headers.get("idempotent-replayed"), "true");
    assert.equal(await otherAgain.text(), otherText);
    assert.equal((await rows(t, key)).length, 3);
  } finally {
    await t.close();
  }
});

const DETACH_MS = 300;
const LONG = "[[sim:words=3000]] [[sim:interval=20]]";

Deno.test("a keyed stream nobody comes back to is cancelled after IDEMPOTENCY_DETACH_MS, billed as a client's cut; then 409 idempotency_replay_unavailable", async () => {
  const t = await startTestGateway({ IDEMPOTENCY_DETACH_MS: String(DETACH_MS) });
  try {
    const { id, key } = await t.newKey("5.00");
    // Today's rule, without a key: the client's cut cancels the stream, billed by estimate within the hold.
    await readThenLeave(await call(t, key, undefined, chat(`без ключа ${LONG}`, true)), 3);
    await until("the unkeyed cut settled", async () => (await money(t, id)).held === "0.00");
    const plain = (await rows(t, key))[0]!;
    assert.equal(plain.status, "cancelled");
    const start = await money(t, id);
    const aborted = t.sim.aborted;

    const body = chat(`с ключом ${LONG}`, true);
    const first = await call(t, key, "detach-1", body);
    assert.equal(first.status, 200);
    const firstId = first.headers.get("request-id");
    await readThenLeave(first, 3);
    await until("the detached run ended", () => t.gw.app.keyedRuns.size === 0);
    await until("the simulator saw its stream cancelled", () => t.sim.aborted === aborted + 1);

    const usage = await rows(t, key);
    assert.equal(usage.length, 2);
    const cut = usage[0]!;
    assert.equal(cut.request_id, firstId);
    assert.equal(cut.status, plain.status);
    assert.equal(cut.usage_source, plain.usage_source);
    assert.ok(parseUsd(cut.charged_usd) > 0n, "what the upstream generated is charged");
    assert.ok(parseUsd(cut.charged_usd) <= parseUsd(cut.reserved_usd), "never above the hold");
    assert.ok(cut.output_tokens < 3_000, String(cut.output_tokens));
    const end = await money(t, id);
    assert.equal(end.held, "0.00");
    assert.equal(formatUsd(parseUsd(start.balance) - parseUsd(end.balance)), cut.charged_usd);

    const upstreamCalls = t.sim.requests.length;
    const retry = await call(t, key, "detach-1", body);
    const json = await retry.json();
    assert.equal(retry.status, 409, JSON.stringify(json));
    assert.equal(json.error.code, "idempotency_replay_unavailable");
    assert.equal(json.error.type, "invalid_request_error");
    // The key's kept answer is this 409 (stored, so every process and a restart say the same), under the first
    // request's id.
    assert.equal(retry.headers.get("idempotent-replayed"), "true");
    assert.equal(retry.headers.get("request-id"), firstId);
    assert.equal(t.sim.requests.length, upstreamCalls, "nothing sent upstream");
    assert.deepEqual(await money(t, id), end);
    assert.equal((await rows(t, key)).length, 2);
  } finally {
    await t.close();
  }
});

Deno.test("a retry within IDEMPOTENCY_DETACH_MS attaches to the detached run: the whole answer, one row, one charge", async () => {
  // Long enough that the retry below (after a pause of a fraction of it) always finds the run.
  const t = await startTestGateway({ IDEMPOTENCY_DETACH_MS: "5000" });
  try {
    const { id, key } = await t.newKey("5.00");
    const body = chat("вернусь [[sim:words=200]] [[sim:interval=10]]", true);
    const whole = await (await call(t, key, undefined, body)).text();
    const uncut = (await rows(t, key))[0]!;
    const start = await money(t, id);
    const aborted = t.sim.aborted;

    const first = await call(t, key, "detach-2", body);
    const seen = await readThenLeave(first, 3);
    await sleep(300); // the client stays away a while; the run goes on
    const retry = await call(t, key, "detach-2", body);
    assert.equal(retry.status, 200);
    assert.equal(retry.headers.get("idempotent-replayed"), "true");
    assert.equal(retry.headers.get("request-id"), first.headers.get("request-id"));
    const text = await retry.text();
    assert.ok(text.startsWith(seen), "the retry gets the answer from its first byte");
    const strip = (s: string) =>
      s.replace(/chatcmpl[^"]*/g, "").replace(/"created":\d+/g, "").replace(/: keep-alive\n\n/g, "");
    assert.equal(strip(text), strip(whole), "the whole answer, as an uncut run");
    assert.equal(t.sim.aborted, aborted, "the upstream stream was never cancelled");

    await until("the run ended", () => t.gw.app.keyedRuns.size === 0);
    const usage = await rows(t, key);
    assert.equal(usage.length, 2);
    assert.equal(usage[0]!.request_id, first.headers.get("request-id"));
    assert.equal(usage[0]!.status, "ok");
    assert.equal(usage[0]!.charged_usd, uncut.charged_usd);
    const end = await money(t, id);
    assert.equal(end.held, "0.00");
    assert.equal(formatUsd(parseUsd(start.balance) - parseUsd(end.balance)), uncut.charged_usd);
  } finally {
    await t.close();
  }
});
