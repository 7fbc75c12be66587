/**
 * A JSON call whose SDK client gives up after 1 s on a 3 s upstream, retried with the same Idempotency-Key
 * (docs/idempotency.md), on every surface: the retry waits for the run still going and gets its answer — the
 * text of an uncut run, the first request's `request-id` — and a later retry gets the same bytes from the
 * store; one upstream call, one usage row, one charge.
 */
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { startTestGateway, type TestGateway } from "../support/harness.ts";
import { anthropicClient, openaiClient, rejection } from "../support/sdk_util.ts";
import { usageRows } from "../support/usage_rows.ts";
import { balance, chargedOnce, upstreamCalls } from "./retry_support.ts";

type Surface = "chat" | "responses" | "messages";

/** One JSON request through the surface's SDK, as the raw response; `timeout`: the client gives up then. */
function call(
  t: TestGateway,
  apiKey: string,
  surface: Surface,
  prompt: string,
  opts: { idem?: string; timeout?: number },
): Promise<Response> {
  const options = {
    headers: opts.idem === undefined ? {} : { "Idempotency-Key": opts.idem },
    ...(opts.timeout === undefined ? {} : { timeout: opts.timeout }),
  };
  const messages = [{ role: "user" as const, content: prompt }];
  if (surface === "messages") {
    return anthropicClient(t, apiKey).messages.create({ model: "k3", max_tokens: 200, messages }, options)
      .asResponse();
  }
  const client = openaiClient(t, apiKey);
  if (surface === "chat") {
    return client.chat.completions.create({ model: "k3", max_tokens: 200, messages }, options).asResponse();
  }
  return client.responses.create({ model: "k3", max_output_tokens: 200, input: prompt }, options)
    .asResponse();
}

function textOf(surface: Surface, body: any): string {
  if (surface === "chat") return body.choices[0].message.content;
  if (surface === "responses") return body.output[0].content[0].text;
  return body.content[0].text;
}

async function gaveUpThenRetried(t: TestGateway, surface: Surface) {
  const marker = `json-timeout-${surface}`;
  const prompt = `Вопрос ${marker} [[sim:words=12]] [[sim:delay=3000]]`;
  const plain = await t.newKey("5.00");
  const uncut = call(t, plain.key, surface, prompt, {}).then(async (r) =>
    [r.status, await r.json()] as const
  );

  const keyed = await t.newKey("5.00");
  const start = await balance(t, keyed.id);
  const idem = `json-${surface}`;
  const gaveUp = await rejection(call(t, keyed.key, surface, prompt, { idem, timeout: 1000 }), surface);
  assert.ok(
    gaveUp instanceof OpenAI.APIConnectionTimeoutError ||
      gaveUp instanceof Anthropic.APIConnectionTimeoutError,
    `${surface}: the client timed out: ${gaveUp}`,
  );
  assert.ok(t.gw.app.keyedRuns.get(keyed.id, idem), `${surface}: the run goes on without its client`);

  const retry = await call(t, keyed.key, surface, prompt, { idem });
  const retryBody = await retry.text();
  assert.equal(retry.status, 200, retryBody);
  assert.equal(retry.headers.get("idempotent-replayed"), "true", surface);
  const [uncutStatus, uncutBody] = await uncut;
  assert.equal(uncutStatus, 200, surface);
  assert.equal(
    textOf(surface, JSON.parse(retryBody)),
    textOf(surface, uncutBody),
    `${surface}: the uncut text`,
  );

  const requestId = retry.headers.get("request-id");
  await chargedOnce(t, keyed, start, requestId);
  const [uncutRow] = await usageRows(t, plain.key);
  assert.equal((await usageRows(t, keyed.key))[0]!.charged_usd, uncutRow!.charged_usd, surface);

  const stored = await call(t, keyed.key, surface, prompt, { idem });
  assert.equal(stored.status, 200, surface);
  assert.equal(stored.headers.get("idempotent-replayed"), "true", surface);
  assert.equal(stored.headers.get("request-id"), requestId, `${surface}: the first request's id again`);
  assert.equal(await stored.text(), retryBody, `${surface}: the same bytes from the store`);
  await chargedOnce(t, keyed, start, requestId);
  // The uncut run and the keyed one: two upstream calls of this prompt, not three or four.
  assert.equal(upstreamCalls(t, marker).length, 2, `${surface}: the keyed request called the upstream once`);
}

Deno.test("a JSON call given up after 1 s on a 3 s upstream, retried with the same key: its answer, charged once", async () => {
  const t = await startTestGateway();
  try {
    await Promise.all((["chat", "responses", "messages"] as const).map((s) => gaveUpThenRetried(t, s)));
  } finally {
    await t.close();
  }
});
