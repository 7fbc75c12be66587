/**
 * A stream's objects are kept after it, one stream per kind (a surface and an upstream protocol), so that V8's
 * idle collections keep the maps the optimised stream path depends on (src/util/warm_shapes.ts,
 * docs/performance.md "After a rest"); a JSON answer's are not (they hold its text).
 */
import assert from "node:assert/strict";
import { ANTHROPIC_HEADERS, post, startTestGateway } from "../support/harness.ts";

Deno.test("warm shapes: each stream kind keeps one stream's objects, JSON answers none", async () => {
  const t = await startTestGateway();
  try {
    const k = await t.newKey("5.00");
    const chat = { model: "alpha-for-coding", messages: [{ role: "user", content: "Привет" }] };
    const drain = async (res: Response) => {
      assert.equal(res.status, 200);
      await res.text();
    };
    await drain(await post(t.url + "/v1/chat/completions", k.key, chat));
    assert.equal(t.gw.app.warmShapes.kinds, 0, "a JSON answer keeps nothing");
    await drain(await post(t.url + "/v1/chat/completions", k.key, { ...chat, stream: true }));
    assert.equal(t.gw.app.warmShapes.kinds, 1);
    await drain(await post(t.url + "/v1/chat/completions", k.key, { ...chat, stream: true }));
    assert.equal(t.gw.app.warmShapes.kinds, 1, "the next stream of a kind replaces the one before");
    await drain(
      await post(t.url + "/v1/messages", k.key, { ...chat, max_tokens: 20, stream: true }, ANTHROPIC_HEADERS),
    );
    assert.equal(t.gw.app.warmShapes.kinds, 2, "Messages → Chat is a kind of its own");
  } finally {
    await t.close();
  }
});
