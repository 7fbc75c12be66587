/** Which ended requests write their `request` line (docs/operator-guide.md "Logs", LOG_OK_GENERATIONS). */
import assert from "node:assert/strict";
import { usageRow } from "../store/testing/test_fixtures.ts";
import type { UsageRow } from "../store/types.ts";
import { Logger } from "../util/log.ts";
import { GatewayMetrics } from "./metrics.ts";
import { RequestTrace } from "./request_trace.ts";

const OK: UsageRow = usageRow("req_1", "key_1", { charged: 150n });

/** The request lines one request writes when it ends with `status` and `code`, after settling `row` if given. */
function linesOf(
  setting: "on" | "off",
  row: UsageRow | undefined,
  status: number,
  code?: string,
): Record<string, unknown>[] {
  const lines: string[] = [];
  const telemetry = {
    metrics: new GatewayMetrics(),
    log: new Logger("info", (l) => lines.push(l)),
    config: { LOG_OK_GENERATIONS: setting },
  };
  const t = new RequestTrace(telemetry, "req_1", "openai_chat", "/v1/chat/completions");
  t.keyId = "key_1";
  if (row) t.settled(row);
  t.end(status, code);
  return lines.map((l) => JSON.parse(l));
}

Deno.test("off: a generation answered in full, settled ok with nothing written off, writes no line", () => {
  assert.deepEqual(linesOf("off", OK, 200), []);
});

Deno.test("off: every other ending writes its line, with what makes it worth one", () => {
  const cases: [string, UsageRow | undefined, number, string | undefined, unknown[]][] = [
    ["nothing settled (a route that bills nothing)", undefined, 200, undefined, [200, null, null, null]],
    ["a refusal before the hold", undefined, 400, "invalid_parameter", [
      400,
      "invalid_parameter",
      null,
      null,
    ]],
    ["an error frame after the head", { ...OK, status: "error" }, 200, "stream_service_error", [
      200,
      "stream_service_error",
      "error",
      null,
    ]],
    ["the client left", { ...OK, status: "cancelled" }, 200, undefined, [200, null, "cancelled", null]],
    ["settled ok, answered with an error status", OK, 502, "upstream_error", [
      502,
      "upstream_error",
      "ok",
      null,
    ]],
    ["settled ok, an error status without a code", OK, 502, undefined, [502, null, "ok", null]],
    ["settled ok, an error code", OK, 200, "stream_service_error", [200, "stream_service_error", "ok", null]],
    ["part of it written off", { ...OK, writtenOff: 25n }, 200, undefined, [
      200,
      null,
      "ok",
      "0.000000000025",
    ]],
  ];
  for (const [what, row, status, code, expected] of cases) {
    const lines = linesOf("off", row, status, code);
    assert.equal(lines.length, 1, what);
    const l = lines[0]!;
    assert.deepEqual([l.status, l.code, l.usage_status, l.written_off_usd], expected, what);
    assert.deepEqual([l.msg, l.request_id, l.key_id], ["request", "req_1", "key_1"], what);
  }
});

Deno.test("on: the generation that ended well writes its line too", () => {
  const lines = linesOf("on", OK, 200);
  assert.equal(lines.length, 1);
  assert.deepEqual(
    [lines[0]!.status, lines[0]!.usage_status, lines[0]!.charged_usd, lines[0]!.written_off_usd],
    [200, "ok", "0.00000000015", null],
  );
});
