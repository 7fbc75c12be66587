import assert from "node:assert/strict";
import { findModel } from "../../catalog/models.ts";
import { thrownGatewayError } from "../../errors/testing/thrown_gateway_error.ts";
import { firstImageBlock, refuseImages } from "./image_rule.ts";

const img = { type: "image_url", image_url: { url: "https://example.com/a.png" } };

Deno.test("firstImageBlock: the first image block's path on each surface, or undefined", () => {
  const cases: [Parameters<typeof firstImageBlock>[0], Record<string, unknown>, string | undefined][] = [
    ["openai_chat", { messages: [{ role: "user", content: "текст" }] }, undefined],
    [
      "openai_chat",
      { messages: [{ role: "user", content: [{ type: "text", text: "a" }, img, img] }] },
      "messages.0.content.1",
    ],
    ["openai_chat", { messages: "not a list" }, undefined],
    ["anthropic", {
      messages: [{ role: "user", content: "a" }, {
        role: "user",
        content: [{
          type: "tool_result",
          tool_use_id: "t",
          content: [{ type: "text", text: "a" }, { type: "image" }],
        }],
      }],
    }, "messages.1.content.0.content.1"],
    [
      "anthropic",
      { messages: [{ role: "user", content: [{ type: "tool_result", content: "текст" }] }] },
      undefined,
    ],
    ["openai_responses", { input: "текст" }, undefined],
    [
      "openai_responses",
      { input: [{ role: "user", content: [{ type: "input_image", image_url: "x" }] }] },
      "input.0.content.0",
    ],
    ["openai_responses", {
      input: [{ type: "function_call", call_id: "c" }, {
        type: "function_call_output",
        call_id: "c",
        output: [{ type: "input_text", text: "a" }, { type: "input_image", image_url: "x" }],
      }],
    }, "input.1.output.1"],
    // Each surface reads its own list: Responses has no `messages`.
    ["openai_responses", { messages: [{ role: "user", content: [img] }] }, undefined],
  ];
  for (const [surface, body, want] of cases) {
    assert.equal(firstImageBlock(surface, body), want, JSON.stringify(body));
  }
});

Deno.test("refuseImages: only a model without images refuses, with invalid_parameter at the block", () => {
  const body = { messages: [{ role: "user", content: [img] }] };
  const err = thrownGatewayError(() => refuseImages(findModel("theta3.7-max")!, "openai_chat", body));
  assert.deepEqual([err.code, err.param], ["invalid_parameter", "messages.0.content.0"]);
  refuseImages(findModel("theta3.8-max")!, "openai_chat", body);
  refuseImages(findModel("theta3.7-max")!, "openai_chat", { messages: [{ role: "user", content: "a" }] });
});
