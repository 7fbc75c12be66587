import assert from "node:assert/strict";
import { type Check, jsonEqual, jsonMatches, runCheck } from "./checks.ts";

Deno.test("checks: each kind passes its values and names the failing path", () => {
  const cases: [Check, unknown, string | null][] = [
    [{ kind: "accept" }, { any: 1 }, null],
    [{ kind: "only-values", values: [0] }, 0, null],
    [{ kind: "only-values", values: [0] }, 0.5, ""],
    [{ kind: "only-values", values: [false] }, true, ""],
    [{ kind: "positive-integer" }, 3, null],
    [{ kind: "positive-integer" }, 0, ""],
    [{ kind: "positive-integer" }, 1.5, ""],
    [{ kind: "positive-integer" }, "3", ""],
    [{ kind: "integer" }, -7, null],
    [{ kind: "integer" }, 1.1, ""],
    [{ kind: "boolean" }, "true", ""],
    [{ kind: "string", minLength: 1 }, "", ""],
    [{ kind: "string", minLength: 1 }, "whatever-level", null],
    [{ kind: "string", maxLength: 2 }, "abc", ""],
    [{ kind: "non-empty-array" }, [], ""],
    [{ kind: "non-empty-array" }, [1], null],
    [
      { kind: "exact-object", value: { type: "enabled", keep: "all" } },
      { keep: "all", type: "enabled" },
      null,
    ],
    [{ kind: "exact-object", value: { type: "enabled", keep: "all" } }, { type: "enabled" }, ""],
    [{ kind: "exact-object", value: { type: "enabled", keep: "all" } }, {
      type: "enabled",
      keep: "all",
      x: 1,
    }, ""],
    [{ kind: "object", fields: { a: { kind: "boolean" } }, otherKeys: "refuse" }, { a: 1 }, ".a"],
    [{ kind: "object", fields: { a: { kind: "boolean" } }, otherKeys: "refuse" }, { b: true }, ".b"],
    [{ kind: "object", otherKeys: "keep", required: ["t"] }, {}, ".t"],
    [{ kind: "object", otherKeys: { kind: "string" }, maxKeys: 1 }, { a: "x", b: "y" }, ""],
    [{ kind: "object", otherKeys: { kind: "string" }, maxKeyLength: 2 }, { abc: "x" }, ".abc"],
    [{ kind: "array-of", item: { kind: "string" } }, ["a", 2], ".1"],
    [{ kind: "any-of", options: [{ kind: "string" }, { kind: "integer" }] }, 2, null],
    [{ kind: "any-of", options: [{ kind: "string" }, { kind: "integer" }] }, true, ""],
  ];
  for (const [check, v, want] of cases) {
    const got = runCheck(check, v);
    assert.equal(got === null ? null : got.path, want, `${JSON.stringify(check)} ${JSON.stringify(v)}`);
  }
  assert.deepEqual(runCheck({ kind: "object", otherKeys: "refuse" }, { x: 1 }), {
    path: ".x",
    unsupported: true,
  });
});

Deno.test("checks: structural equality and partial matching", () => {
  assert.ok(jsonEqual({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] }));
  assert.ok(!jsonEqual({ a: 1 }, { a: 1, b: undefined }));
  assert.ok(!jsonEqual([1], { 0: 1 }));
  assert.ok(jsonMatches("required", "required"));
  assert.ok(jsonMatches({ type: "any", disable_parallel_tool_use: true }, { type: "any" }));
  assert.ok(!jsonMatches({ type: "auto" }, { type: "any" }));
  assert.ok(!jsonMatches("any", { type: "any" }));
});
