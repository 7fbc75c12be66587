import assert from "node:assert/strict";
import { errorSpec } from "../../errors/codes.ts";
import { DELTA_ACCEPTED } from "./field_rules.ts";

Deno.test("delta_parameter_unavailable's action names every accepted field of every surface (spec §4.6)", () => {
  const action = errorSpec("delta_parameter_unavailable").action;
  const part = (surface: string) => action.split(`в ${surface} — `)[1]!.split(";")[0]!.split(".")[0]!;
  const named: Record<string, string> = {
    anthropic: part("Messages"),
    openai_chat: part("Chat Completions"),
    openai_responses: part("Responses"),
  };
  for (const [surface, fields] of Object.entries(DELTA_ACCEPTED)) {
    assert.deepEqual(named[surface]!.split(", "), fields, surface);
  }
  for (const f of ["temperature", "top_p", "metadata", "thinking"]) assert.match(action, new RegExp(f));
});
