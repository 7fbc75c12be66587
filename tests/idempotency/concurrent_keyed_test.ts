/**
 * 10 identical requests with one Idempotency-Key at once (docs/idempotency.md), JSON and stream, on every
 * surface and on /theta/v1: one upstream call, 10 byte-identical answers with one request id, every one but
 * the claimer's marked `idempotent-replayed: true`, one usage row, one charge; theta's account held once.
 */
import assert from "node:assert/strict";
import { ANTHROPIC_HEADERS, post, startTestGateway, type TestGateway } from "../support/harness.ts";
import { type Surface, SURFACE_PATH, surfaceBody } from "../support/sse_client.ts";
import { balance, chargedOnce, poolDoc, upstreamCalls } from "./retry_support.ts";

const AT_ONCE = 10;

/** How each surface's whole stream ends. */
const STREAM_END: Record<Surface, RegExp> = {
  chat: /"finish_reason":"stop".*\n\ndata: \[DONE\]\n\n$/s,
  responses: /event: response\.completed\ndata: [^\n]*\n\n$/,
  messages: /event: message_stop\ndata: [^\n]*\n\n$/,
};

async function tenAtOnce(t: TestGateway, surface: Surface, stream: boolean, model: string, prefix: string) {
  const where = `${prefix || "/v1"} ${surface} ${stream ? "stream" : "JSON"} ${model}`;
  const marker = `at-once-${prefix ? "theta" : "v1"}-${surface}-${stream ? "stream" : "json"}`;
  // The run takes a while (a 300 ms head, then 12 frames 20 ms apart): the 10 arrive while it goes.
  const text = `Вопрос ${marker} [[sim:words=12]] [[sim:delay=300]] [[sim:interval=20]]`;
  const body = surfaceBody(surface, model, text, stream);
  const k = await t.newKey("5.00");
  const start = await balance(t, k.id);
  const seqBefore = (await poolDoc(t))?.seq ?? 0;
  const headers = { ...(surface === "messages" ? ANTHROPIC_HEADERS : {}), "idempotency-key": marker };
  const answers = await Promise.all(
    Array.from({ length: AT_ONCE }, async () => {
      const res = await post(`${t.url}${prefix}${SURFACE_PATH[surface]}`, k.key, body, headers);
      return { status: res.status, headers: res.headers, text: await res.text() };
    }),
  );

  const first = answers[0]!;
  assert.equal(first.status, 200, `${where}: ${first.text}`);
  if (stream) assert.match(first.text, STREAM_END[surface], `${where}: a whole stream`);
  else assert.ok(first.text.includes(`Ответ симулятора на «Вопрос ${marker}»: `), `${where}: ${first.text}`);
  const requestId = first.headers.get("request-id");
  for (const [i, a] of answers.entries()) {
    assert.equal(a.status, 200, `${where} #${i}`);
    assert.equal(a.text, first.text, `${where} #${i}: the same bytes`);
    assert.equal(a.headers.get("request-id"), requestId, `${where} #${i}: the same request id`);
  }
  const replayed = answers.map((a) => a.headers.get("idempotent-replayed"));
  assert.deepEqual(
    replayed.toSorted(),
    [null, ...Array(AT_ONCE - 1).fill("true")],
    `${where}: all but the claimer replayed`,
  );

  assert.equal(upstreamCalls(t, marker).length, 1, `${where}: one upstream call`);
  await chargedOnce(t, k, start, requestId);
  if (prefix) {
    const pool = (await poolDoc(t))!;
    assert.equal(pool.seq, seqBefore + 1, `${where}: one ticket in theta's queue`);
    assert.deepEqual(pool.accounts.map((a) => a.busy), [null, null], `${where}: no account held`);
  }
}

Deno.test("10 identical keyed requests at once: one upstream call, 10 identical answers, one charge", async (tt) => {
  const t = await startTestGateway();
  try {
    for (const [model, prefix] of [["k3", ""], ["theta3.8-omni-flash", "/theta"]]) {
      for (const surface of ["chat", "responses", "messages"] as const) {
        for (const stream of [false, true]) {
          const where = `${prefix || "/v1"} ${surface} ${stream ? "stream" : "JSON"}`;
          await tt.step(where, () => tenAtOnce(t, surface, stream, model!, prefix!));
        }
      }
    }
  } finally {
    await t.close();
  }
});
