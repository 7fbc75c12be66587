import assert from "node:assert/strict";
import { relayResponse } from "../native.ts";
import { prepareNativeRequest } from "./native.ts";
import { testCtx } from "./testing/helpers.ts";

const opts = { upstreamModel: "up-model", defaultMaxTokens: 4096 };

Deno.test("prepareNativeRequest forces include_usage on streams and keeps everything else", () => {
  const body = {
    model: "gw",
    messages: [],
    stream: true,
    stream_options: { include_obfuscation: false },
    n: 1,
  };
  const out = prepareNativeRequest(body, opts);
  assert.deepEqual(out, {
    model: "up-model",
    messages: [],
    stream: true,
    stream_options: { include_obfuscation: false, include_usage: true },
    n: 1,
  });
  assert.deepEqual(body.stream_options, { include_obfuscation: false });
  assert.equal(out.messages, body.messages);
});

Deno.test("prepareNativeRequest leaves non-streaming bodies alone apart from the model", () => {
  const body = { model: "gw", messages: [], stream_options: { include_usage: false }, foo: "bar" };
  assert.deepEqual(prepareNativeRequest(body, opts), { ...body, model: "up-model" });
});

Deno.test("relayResponse restores the client's model id", () => {
  const json = { id: "c", model: "up-model", choices: [] };
  assert.deepEqual(relayResponse(json, testCtx()), { id: "c", model: "gw-model", choices: [] });
  assert.equal(json.model, "up-model");
});
