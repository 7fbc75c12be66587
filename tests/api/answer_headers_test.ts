/**
 * The headers the HTTP layer puts on every answer (src/http/server.ts: which process wrote it, and the
 * simulator's mark) reach the client on every kind of answer: the generation answers made with the request's
 * own headers (src/request/answer_headers.ts, not set again), the other routes' answers (set by the server),
 * and errors.
 */
import assert from "node:assert/strict";
import { WORKER_HEADER } from "../../src/app.ts";
import { ANTHROPIC_HEADERS, post, startTestGateway } from "../support/harness.ts";

Deno.test("every kind of answer carries the server's fixed headers", async () => {
  const t = await startTestGateway();
  try {
    const worker = String(t.gw.app.worker);
    const k = await t.newKey("5.00");
    const chat = { model: "alpha-for-coding", messages: [{ role: "user", content: "Привет" }] };
    const answers: [string, Response][] = [
      ["chat, JSON", await post(t.url + "/v1/chat/completions", k.key, chat)],
      ["chat, stream", await post(t.url + "/v1/chat/completions", k.key, { ...chat, stream: true })],
      [
        "messages, JSON (translated)",
        await post(t.url + "/v1/messages", k.key, { ...chat, max_tokens: 20 }, ANTHROPIC_HEADERS),
      ],
      ["models", await fetch(t.url + "/v1/models", { headers: { authorization: `Bearer ${k.key}` } })],
      ["no such route", await fetch(t.url + "/v1/nothing-here")],
    ];
    for (const [what, res] of answers) {
      assert.equal(res.status, what === "no such route" ? 404 : 200, what);
      assert.equal(res.headers.get(WORKER_HEADER), worker, what);
      await res.body?.cancel();
    }
  } finally {
    await t.close();
  }
});
