import assert from "node:assert/strict";
import { thrownGatewayError } from "../errors/testing/thrown_gateway_error.ts";
import { findModel } from "../catalog/models.ts";
import { applyFieldRules, compileFieldTable, type FieldRule } from "./field_rules.ts";

const row = (field: string, extra: Partial<FieldRule> = {}): FieldRule => ({
  field,
  surfaces: ["openai_chat"],
  rule: "accept",
  check: { kind: "accept" },
  code: "invalid_parameter",
  detail: "",
  ...extra,
});
const model = findModel("gamma-2.5")!;

Deno.test("applyFieldRules: an open list forwards unknown fields, a closed list refuses them with its code", () => {
  const rows = [row("model"), row("messages"), row("temperature", { rule: "remove", remove: true })];
  const body = { model: "gamma-2.5", messages: [], x_unknown: 1 };
  const open = compileFieldTable({ rows });
  assert.equal(applyFieldRules(open, model, "openai_chat", body), body);
  const closed = compileFieldTable({
    rows,
    closed: { code: "delta_parameter_unavailable", detail: (f) => `закрыт: ${f}` },
  });
  const e = thrownGatewayError(() => applyFieldRules(closed, model, "openai_chat", body));
  assert.equal(e.code, "delta_parameter_unavailable");
  assert.equal(e.param, "x_unknown");
  assert.equal(e.detail, "закрыт: x_unknown");
  // Known on another surface only: still unknown here.
  const e2 = thrownGatewayError(() =>
    applyFieldRules(closed, model, "openai_responses", { model: "gamma-2.5" })
  );
  assert.equal(e2.param, "model");
  // Rows still apply on a closed list: removal gives a new object.
  const out = applyFieldRules(closed, model, "openai_chat", { model: "gamma-2.5", temperature: 1 });
  assert.deepEqual(out, { model: "gamma-2.5" });
});

Deno.test("applyFieldRules: rows apply in table order, whatever order the body's members come in", () => {
  const table = compileFieldTable({
    rows: [
      row("n", { rule: "positive-integer", check: { kind: "positive-integer" }, detail: "n" }),
      row("s", { rule: "boolean", check: { kind: "boolean" }, code: "invalid_request", detail: "s" }),
      // A second row for a field: both apply, each in its place.
      row("n", { rule: "model-restricted", onlyModels: ["k3"], detail: "only k3" }),
    ],
  });
  const both = { s: "yes", n: 0 }; // both fail; "n"'s row comes first in the table
  const e = thrownGatewayError(() => applyFieldRules(table, model, "openai_chat", both));
  assert.deepEqual([e.code, e.param, e.detail], ["invalid_parameter", "n", "n"]);
  const second = thrownGatewayError(() => applyFieldRules(table, model, "openai_chat", { s: true, n: 2 }));
  assert.deepEqual([second.code, second.param, second.detail], ["unsupported_parameter", "n", "only k3"]);
  const body = { s: false, n: 2 };
  assert.equal(applyFieldRules(table, findModel("k3")!, "openai_chat", body), body);
});

Deno.test("applyFieldRules: on a closed list an unknown member is refused before any row is checked", () => {
  const table = compileFieldTable({
    rows: [row("n", { rule: "positive-integer", check: { kind: "positive-integer" } })],
    closed: { code: "delta_parameter_unavailable", detail: (f) => `закрыт: ${f}` },
  });
  const e = thrownGatewayError(() => applyFieldRules(table, model, "openai_chat", { n: -1, zz: 1, yy: 2 }));
  assert.deepEqual([e.code, e.param], ["delta_parameter_unavailable", "zz"]);
});
