import assert from "node:assert/strict";
import { GatewayError } from "../errors/gateway_error.ts";
import { filtersKey, parseUsageQuery } from "./query.ts";

const q = (s: string, kind: "summary" | "requests" = "requests") =>
  parseUsageQuery(new URLSearchParams(s), kind);
const fails = (s: string, code: string, param: string | null, kind: "summary" | "requests" = "requests") =>
  assert.throws(() => q(s, kind), (e) => e instanceof GatewayError && e.code === code && e.param === param);

Deno.test("usage query: defaults, values and date bounds", () => {
  const d = q("");
  assert.deepEqual(d.filters, { family: null, endpoint: null, start: null, end: null });
  assert.equal(d.limit, 20);
  assert.equal(d.cursor, null);
  const v = q("family=theta&endpoint=/theta/v1/messages&start=2025-01-31&end=2025-02-01&limit=100&cursor=x");
  assert.equal(v.fromMs, Date.UTC(2025, 0, 31));
  assert.equal(v.toMs, Date.UTC(2025, 1, 2));
  assert.equal(v.limit, 100);
  assert.equal(filtersKey(v.filters), '["theta","/theta/v1/messages","2025-01-31","2025-02-01"]');
});

Deno.test("usage query: mode first, then unknown, repeated and bad values", () => {
  fails("foo=1&mode=x", "product_modes_removed", "mode");
  fails("foo=1", "validation_error", "foo");
  fails("=1", "validation_error", null);
  fails("limit=3", "validation_error", "limit", "summary");
  fails("limit=1&limit=2", "validation_error", "limit");
  fails("family=Alpha", "validation_error", "family");
  fails("endpoint=/v1/chat completions", "validation_error", "endpoint");
  fails("start=2025-13-01", "validation_error", "start");
  fails("end=2025-1-01", "validation_error", "end");
  fails("limit=-1", "validation_error", "limit");
  fails("limit=1.5", "validation_error", "limit");
});
