import assert from "node:assert/strict";
import { replaySse } from "../sse_parse.ts";
import { anthropic } from "./mod.ts";
import { createRelay } from "./relay.ts";
import { decodeFrames, fixture, testContext } from "./testing/helpers.ts";

Deno.test("AnthropicRelay forwards frames unchanged except message_start's model", async () => {
  for (const name of ["text.sse", "tool_use.sse", "thinking.sse", "web_search.sse", "error.sse"]) {
    const text = fixture(name);
    const frames = await replaySse(text);
    const relay = createRelay(testContext());
    const out = frames.map((f) => relay.push(f)).join("");
    const relayed = await replaySse(out);
    assert.equal(relayed.length, frames.length);
    relayed.forEach((f, i) => {
      const orig = frames[i]!;
      assert.equal(f.event, orig.event);
      if (f.event === "message_start") {
        const a = JSON.parse(f.data);
        const b = JSON.parse(orig.data);
        assert.equal(a.message.model, "alpha-large");
        b.message.model = "alpha-large";
        assert.deepEqual(a, b);
      } else {
        assert.equal(f.data, orig.data, `${name} frame ${i}`);
      }
    });
    // Apart from the model rename, the relayed text is byte-identical to the recording.
    assert.equal(out, text.replace('"model":"claude-sonnet-4-5-20250929"', '"model":"alpha-large"'));
  }
});

Deno.test("AnthropicRelay exposes the decoded events and clears them on each call", async () => {
  const frames = await replaySse(fixture("tool_use.sse"));
  const relay = createRelay(testContext());
  relay.push(frames[0]!);
  const first = relay.events();
  assert.deepEqual(first.map((e) => e.type), ["start", "usage"]);
  assert.deepEqual(relay.events(), []);
  for (const f of frames.slice(1)) relay.push(f);
  assert.deepEqual([...first, ...relay.events()], decodeFrames(frames));
});

Deno.test("AnthropicRelay names frames without an event line from their JSON type", () => {
  const relay = createRelay({ ...testContext(), model: "claude-sonnet-4-5" });
  const data = '{"type":"message_start","message":{"id":"m","model":"claude-sonnet-4-5","content":[]}}';
  assert.equal(relay.push({ data }), `event: message_start\ndata: ${data}\n\n`);
  assert.equal(relay.push({ data: '{"type":"ping"}' }), 'event: ping\ndata: {"type":"ping"}\n\n');
  assert.equal(
    relay.push({ data: '{"type":"ping",\n"x":1}' }),
    'event: ping\ndata: {"type":"ping",\ndata: "x":1}\n\n',
  );
  const err = { message: "m", code: "c", type: "api_error", param: null, action: "a", request_id: "r" };
  assert.match(relay.error(err), /^event: error\ndata: \{"type":"error"/);
});

Deno.test("prepareNativeRequest and relayResponse only swap the model", () => {
  const body = { model: "alpha-large", max_tokens: 10, messages: [], container: { id: "c" }, future: [1] };
  assert.deepEqual(anthropic.prepareNativeRequest(body, { upstreamModel: "claude-x", defaultMaxTokens: 1 }), {
    ...body,
    model: "claude-x",
  });
  assert.equal(body.model, "alpha-large");
  assert.deepEqual(anthropic.relayResponse({ id: "msg", model: "claude-x", usage: {} }, testContext()), {
    id: "msg",
    model: "alpha-large",
    usage: {},
  });
});
