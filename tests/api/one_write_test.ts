/**
 * Every JSON answer goes out in one write (src/util/one_write.ts): chunked on HTTP/1.1, so Deno gathers head,
 * body and terminator into one write where an answer of known length past 512 bytes is two; on loopback one
 * write is one segment, so the client's first read holds the whole answer. HTTP/1.0 has no chunked coding:
 * such a client gets Content-Length and the same body.
 */
import assert from "node:assert/strict";
import { ANTHROPIC_HEADERS, startTestGateway } from "../support/harness.ts";
import { head, portOf, rawHttp, type RawResult } from "../support/raw_http.ts";

const enc = new TextEncoder();

/** One request over a fresh connection (a POST when `body` is given), read until the answer is complete
 *  (rawHttp: 5 s at most). */
function exchange(
  port: number,
  version: "1.0" | "1.1",
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<RawResult> {
  const json = body === undefined ? "" : JSON.stringify(body);
  return rawHttp(port, [
    head([
      `${body === undefined ? "GET" : "POST"} ${path} HTTP/${version}`,
      `Host: 127.0.0.1:${port}`,
      ...body === undefined
        ? []
        : ["Content-Type: application/json", `Content-Length: ${enc.encode(json).length}`],
      ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    ]) + json,
  ]);
}

Deno.test("a JSON answer goes out chunked in one write on HTTP/1.1, with Content-Length on HTTP/1.0", async () => {
  const t = await startTestGateway();
  try {
    const k = await t.newKey("5.00");
    const auth = { authorization: `Bearer ${k.key}` };
    const chat = { model: "alpha-for-coding", messages: [{ role: "user", content: "Привет" }] };
    // what, path, headers, body (none: GET), status, and what the answer's JSON says it is
    const cases: [
      string,
      string,
      Record<string, string>,
      unknown,
      number,
      (json: any) => unknown,
      unknown,
    ][] = [
      [
        "chat (the upstream's bytes)",
        "/v1/chat/completions",
        auth,
        chat,
        200,
        (j) => j.object,
        "chat.completion",
      ],
      [
        "messages (translated)",
        "/v1/messages",
        { "x-api-key": k.key, ...ANTHROPIC_HEADERS },
        { ...chat, max_tokens: 20 },
        200,
        (j) => j.type,
        "message",
      ],
      ["the model list", "/v1/models", auth, undefined, 200, (j) => j.object, "list"],
      [
        "an error",
        "/v1/chat/completions",
        auth,
        { ...chat, model: "no-such-model" },
        404,
        (j) => j.error.code,
        "model_not_found",
      ],
    ];
    for (const [what, path, headers, body, status, kindOf, kind] of cases) {
      const one = await exchange(portOf(t), "1.1", path, headers, body);
      assert.equal(one.status, status, what);
      assert.equal(one.headers?.get("transfer-encoding"), "chunked", what);
      assert.equal(one.headers?.get("content-length"), null, what);
      assert.match(one.headers?.get("request-id") ?? "", /^req_/, what);
      assert.equal(kindOf(JSON.parse(one.body!)), kind, what);
      assert.equal(one.reads, 1, `${what}: head, body and terminator in one segment`);

      const old = await exchange(portOf(t), "1.0", path, headers, body);
      assert.equal(old.version, "1.0", what);
      assert.equal(old.status, status, what);
      assert.equal(old.headers?.get("transfer-encoding"), null, what);
      assert.equal(Number(old.headers?.get("content-length")), enc.encode(old.body).length, what);
      assert.equal(kindOf(JSON.parse(old.body!)), kind, what);
    }
  } finally {
    await t.close();
  }
});
