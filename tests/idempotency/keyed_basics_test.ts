/**
 * Idempotency-Key on one gateway (docs/idempotency.md): a finished answer replayed whole and free, a stream cut
 * by its client picked up where it broke, a reused key refused, a malformed key refused, a refusal not kept.
 */
import assert from "node:assert/strict";
import { startTestGateway, type TestGateway } from "../support/harness.ts";
import { walkUsage } from "../support/usage_rows.ts";
import { formatUsd, parseUsd } from "../../src/money/usd.ts";

const CHAT = (n: number, extra = "") => ({
  model: "k3",
  max_tokens: 200,
  stream: false,
  messages: [{ role: "user", content: `вопрос ${n} [[sim:words=40]]${extra}` }],
});

function call(t: TestGateway, key: string, idem: string | undefined, body: unknown, signal?: AbortSignal) {
  return fetch(`${t.url}/v1/chat/completions`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      ...(idem === undefined ? {} : { "idempotency-key": idem }),
    },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
}

async function balance(t: TestGateway, id: string): Promise<string> {
  return (await t.admin("GET", `/admin/keys/${id}`)).json.balance_usd;
}

Deno.test("a finished JSON answer is replayed whole, with its request id, and charged once", async () => {
  const t = await startTestGateway();
  try {
    const { id, key } = await t.newKey("5.00");
    const first = await call(t, key, "order-1", CHAT(1));
    const firstText = await first.text();
    assert.equal(first.status, 200, firstText);
    assert.equal(first.headers.get("idempotent-replayed"), null);
    const after = await balance(t, id);
    const again = await call(t, key, "order-1", { ...CHAT(1) });
    assert.equal(again.status, 200);
    assert.equal(again.headers.get("idempotent-replayed"), "true");
    assert.equal(again.headers.get("request-id"), first.headers.get("request-id"));
    assert.equal(await again.text(), firstText);
    assert.equal(await balance(t, id), after);
    assert.equal((await walkUsage(t.url, key, 10)).length, 1);
  } finally {
    await t.close();
  }
});

Deno.test("the same key with another body is 409 idempotency_key_reused; a malformed key is 400", async () => {
  const t = await startTestGateway();
  try {
    const { id, key } = await t.newKey("5.00");
    assert.equal((await (await call(t, key, "k-2", CHAT(2))).text()).length > 0, true);
    const before = await balance(t, id);
    const other = await call(t, key, "k-2", CHAT(3));
    const body = await other.json();
    assert.equal(other.status, 409);
    assert.equal(body.error.code, "idempotency_key_reused");
    const bad = await call(t, key, "has space", CHAT(2));
    const badBody = await bad.json();
    assert.equal(bad.status, 400);
    assert.deepEqual([badBody.error.code, badBody.error.param], ["invalid_request", "Idempotency-Key"]);
    assert.equal(await balance(t, id), before);
    assert.equal((await walkUsage(t.url, key, 10)).length, 1);
  } finally {
    await t.close();
  }
});

Deno.test("a refusal is not kept: the retry runs as new", async () => {
  const t = await startTestGateway();
  try {
    const { key } = await t.newKey("5.00");
    const refused = await call(t, key, "k-3", { ...CHAT(4), model: "no-such-model" });
    assert.equal(refused.status, 404);
    await refused.body?.cancel();
    const refusedAgain = await call(t, key, "k-3", { ...CHAT(4), model: "no-such-model" });
    assert.equal(refusedAgain.status, 404);
    assert.equal(refusedAgain.headers.get("idempotent-replayed"), null);
    await refusedAgain.body?.cancel();
  } finally {
    await t.close();
  }
});

Deno.test("a stream cut by its client after 5 events, retried: one whole answer, the same as an uncut run, one charge", async () => {
  const t = await startTestGateway();
  try {
    const { id, key } = await t.newKey("5.00");
    const body = { ...CHAT(5, "[[sim:interval=20]]"), stream: true };
    const whole = await (await call(t, key, undefined, body)).text();
    const charged = await walkUsage(t.url, key, 10);
    const start = await balance(t, id);
    const cut = new AbortController();
    const first = await call(t, key, "k-4", body, cut.signal);
    const reader = first.body!.getReader();
    let seen = "";
    while ((seen.match(/\n\n/g) ?? []).length < 5) {
      seen += new TextDecoder().decode((await reader.read()).value);
    }
    cut.abort();
    const again = await call(t, key, "k-4", body);
    assert.equal(again.headers.get("idempotent-replayed"), "true");
    const text = await again.text();
    const strip = (s: string) =>
      s.replace(/"(id|created)":("[^"]*"|\d+)/g, "").replace(/: keep-alive\n\n/g, "");
    assert.equal(strip(text).replace(/chatcmpl[^"]*/g, ""), strip(whole).replace(/chatcmpl[^"]*/g, ""));
    assert.ok(text.startsWith(seen.slice(0, 20)));
    const rows = await walkUsage(t.url, key, 10);
    assert.equal(rows.length, charged.length + 1);
    const spent = (await t.admin("GET", `/admin/keys/${id}`)).json;
    assert.equal(
      formatUsd(parseUsd(start) - parseUsd(spent.balance_usd)),
      formatUsd(parseUsd(charged[0]!.charged_usd)),
      "the keyed run costs what the uncut run cost",
    );
  } finally {
    await t.close();
  }
});
