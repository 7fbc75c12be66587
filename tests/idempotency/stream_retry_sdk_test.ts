/**
 * A stream cut by its client and retried with the same Idempotency-Key (docs/idempotency.md), through the
 * official SDKs on every surface of every family, and on /theta/v1: the retry gets one complete answer from
 * its first event — the same text as an uncut run of the same request — marked `idempotent-replayed: true`,
 * the upstream is called once, the key has one usage row and is charged once. Theta's account is held once.
 */
import assert from "node:assert/strict";
import type Anthropic from "@anthropic-ai/sdk";
import type OpenAI from "openai";
import { startTestGateway, type TestGateway } from "../support/harness.ts";
import { anthropicClient, FAMILY_MODELS, openaiClient } from "../support/sdk_util.ts";
import { usageRows } from "../support/usage_rows.ts";
import { balance, chargedOnce, poolDoc, upstreamCalls } from "./retry_support.ts";

type Surface = "chat" | "responses" | "messages";

/** Cut after this many events. */
const CUT_AT = 5;

/** What one SDK stream gave its client. */
interface Streamed {
  events: unknown[];
  text: string;
  /** The answer's last event says it is complete (finish_reason, response.completed, message_stop). */
  complete: boolean;
  requestId: string | null;
  replayed: string | null;
}

/** One streamed request through the surface's SDK; `cutAt`: the client aborts after that many events. */
async function streamOnce(
  t: TestGateway,
  apiKey: string,
  prefix: string,
  surface: Surface,
  model: string,
  prompt: string,
  opts: { idem?: string; cutAt?: number } = {},
): Promise<Streamed> {
  const headers: Record<string, string> = opts.idem === undefined ? {} : { "Idempotency-Key": opts.idem };
  const { stream, response } = await open(t, apiKey, prefix, surface, model, prompt, headers);
  const out: Streamed = {
    events: [],
    text: "",
    complete: false,
    requestId: response.headers.get("request-id"),
    replayed: response.headers.get("idempotent-replayed"),
  };
  for await (const event of stream.iterator) {
    out.events.push(event);
    out.text += textOf(surface, event);
    out.complete ||= completes(surface, event);
    if (out.events.length === opts.cutAt) {
      stream.controller.abort();
      break;
    }
  }
  return out;
}

async function open(
  t: TestGateway,
  apiKey: string,
  prefix: string,
  surface: Surface,
  model: string,
  prompt: string,
  headers: Record<string, string>,
): Promise<{ stream: { iterator: AsyncIterable<any>; controller: AbortController }; response: Response }> {
  const wrap = (r: { data: AsyncIterable<any> & { controller: AbortController }; response: Response }) => ({
    stream: { iterator: r.data, controller: r.data.controller },
    response: r.response,
  });
  if (surface === "messages") {
    const client: Anthropic = anthropicClient(t, apiKey, prefix);
    return wrap(
      await client.messages.create(
        { model, max_tokens: 200, stream: true, messages: [{ role: "user", content: prompt }] },
        { headers },
      ).withResponse(),
    );
  }
  const client: OpenAI = openaiClient(t, apiKey, prefix);
  if (surface === "chat") {
    return wrap(
      await client.chat.completions.create(
        { model, max_tokens: 200, stream: true, messages: [{ role: "user", content: prompt }] },
        { headers },
      ).withResponse(),
    );
  }
  return wrap(
    await client.responses.create({ model, max_output_tokens: 200, stream: true, input: prompt }, { headers })
      .withResponse(),
  );
}

function textOf(surface: Surface, e: any): string {
  if (surface === "chat") return e.choices?.[0]?.delta?.content ?? "";
  if (surface === "responses") return e.type === "response.output_text.delta" ? e.delta : "";
  return e.type === "content_block_delta" && e.delta.type === "text_delta" ? e.delta.text : "";
}

function completes(surface: Surface, e: any): boolean {
  if (surface === "chat") return e.choices?.[0]?.finish_reason === "stop";
  if (surface === "responses") return e.type === "response.completed";
  return e.type === "message_stop";
}

const SURFACES: Surface[] = ["chat", "responses", "messages"];
const CASES: { family: string; prefix: string }[] = [
  ...Object.keys(FAMILY_MODELS).map((family) => ({ family, prefix: "" })),
  { family: "theta", prefix: "/theta" },
];

Deno.test("a stream cut after its 5th event and retried with the same key: one whole answer, charged once, on every surface and family", async (tt) => {
  const t = await startTestGateway();
  try {
    for (const { family, prefix } of CASES) {
      for (const surface of SURFACES) {
        const where = `${family} ${prefix || "/v1"} ${surface}`;
        await tt.step(where, () => cutAndRetry(t, where, family, prefix, surface));
      }
    }
  } finally {
    await t.close();
  }
});

async function cutAndRetry(t: TestGateway, where: string, family: string, prefix: string, surface: Surface) {
  const model = FAMILY_MODELS[family]!;
  const marker = `cut-${family}-${prefix ? "prefix" : "v1"}-${surface}`;
  // 12 words, one a frame, 25 ms apart: the 5th event comes well before the end.
  const prompt = `Вопрос ${marker} [[sim:words=12]] [[sim:interval=25]]`;

  const plain = await t.newKey("5.00");
  const uncut = await streamOnce(t, plain.key, prefix, surface, model, prompt);
  assert.ok(uncut.complete, `${where}: the uncut run completes`);
  assert.ok(uncut.text.startsWith(`Ответ симулятора на «Вопрос ${marker}»: `), `${where}: ${uncut.text}`);
  assert.equal(uncut.text.split(/\s+/).filter(Boolean).length, 12, `${where}: ${uncut.text}`);

  const keyed = await t.newKey("5.00");
  const start = await balance(t, keyed.id);
  const callsBefore = upstreamCalls(t, marker).length;
  const seqBefore = (await poolDoc(t))?.seq;
  const idem = `retry-${marker}`;
  const cut = await streamOnce(t, keyed.key, prefix, surface, model, prompt, { idem, cutAt: CUT_AT });
  assert.equal(cut.events.length, CUT_AT, where);
  assert.equal(cut.complete, false, `${where}: cut before the end`);
  assert.equal(cut.replayed, null, `${where}: the first request is no replay`);
  assert.ok(uncut.text.startsWith(cut.text), `${where}: the cut part is the answer's start`);

  const retry = await streamOnce(t, keyed.key, prefix, surface, model, prompt, { idem });
  assert.equal(retry.replayed, "true", where);
  assert.equal(retry.requestId, cut.requestId, `${where}: the first request's id`);
  assert.deepEqual(retry.events.slice(0, CUT_AT), cut.events, `${where}: from the first event`);
  assert.ok(retry.complete, `${where}: the retry's answer is complete`);
  assert.equal(retry.text, uncut.text, `${where}: the same text as the uncut run`);
  assert.equal(retry.events.length, uncut.events.length, `${where}: as many events as the uncut run`);

  const row = await chargedOnce(t, keyed, start, cut.requestId);
  const [uncutRow, ...more] = await usageRows(t, plain.key);
  assert.equal(more.length, 0, where);
  assert.equal(row.charged_usd, uncutRow!.charged_usd, `${where}: costs what the uncut run cost`);
  assert.deepEqual(
    [row.input_tokens, row.output_tokens],
    [uncutRow!.input_tokens, uncutRow!.output_tokens],
    where,
  );

  const calls = upstreamCalls(t, marker).slice(callsBefore);
  assert.equal(calls.length, 1, `${where}: one upstream call`);
  if (family === "theta") {
    const auth = calls[0]!.headers.authorization ?? calls[0]!.headers["x-api-key"] ?? "";
    assert.match(auth, /up-theta-[12]$/, `${where}: a theta account served it`);
    const pool = (await poolDoc(t))!;
    assert.equal(pool.seq, seqBefore! + 1, `${where}: one ticket in theta's queue`);
    assert.deepEqual(pool.accounts.map((a) => a.busy), [null, null], `${where}: no account held`);
    assert.equal(pool.queue.length, 0, where);
  }
}
