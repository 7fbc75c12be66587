import assert from "node:assert/strict";
import { WarmShapes } from "./warm_shapes.ts";

Deno.test("warm shapes: one stream's objects per kind, the next of a kind replacing the one before", () => {
  const shapes = new WarmShapes();
  shapes.hold("openai_chat>openai_chat", { n: 1 });
  shapes.hold("openai_chat>openai_chat", { n: 2 });
  assert.equal(shapes.kinds, 1);
  shapes.hold("anthropic>openai_chat", { n: 3 });
  assert.equal(shapes.kinds, 2);
});
