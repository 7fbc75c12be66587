import assert from "node:assert/strict";
import { GatewayError } from "../../errors/gateway_error.ts";
import { decodeToolChoice, decodeTools } from "./tools_decode.ts";

Deno.test("decodeTools defaults parameters and accepts null optional fields", () => {
  assert.deepEqual(
    decodeTools([{ type: "function", function: { name: "a-b_9", description: null, strict: null } }]),
    [
      { name: "a-b_9", parameters: { type: "object", properties: {} } },
    ],
  );
  assert.deepEqual(decodeTools(null), []);
});

Deno.test("decodeToolChoice maps strings and the function form", () => {
  assert.deepEqual(decodeToolChoice("auto"), { type: "auto" });
  assert.deepEqual(decodeToolChoice("none"), { type: "none" });
  assert.deepEqual(decodeToolChoice("required"), { type: "required" });
  assert.deepEqual(decodeToolChoice({ type: "function", function: { name: "f" } }), {
    type: "tool",
    name: "f",
  });
  assert.equal(decodeToolChoice(undefined), undefined);
  assert.throws(
    () => decodeToolChoice({ type: "function", name: "f" }),
    (e: unknown) => e instanceof GatewayError && e.param === "tool_choice.function.name",
  );
});
