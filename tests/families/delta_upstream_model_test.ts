/**
 * Gamma/eta ids → what the upstream is asked (src/families/delta/upstream_model.ts): one upstream model per
 * family, eta's effort as `reasoning.effort`, `-fast` as the priority tier — on every surface, streamed or
 * not; the client sees its own id back.
 */
import assert from "node:assert/strict";
import { ANTHROPIC_HEADERS, post, withGateway } from "../support/harness.ts";
import { readFrames, SURFACE_PATH, surfaceBody } from "../support/sse_client.ts";

const EFFORTS = ["low", "medium", "high", "xhigh"] as const;
const CASES: { id: string; model: string; effort?: string; fast: boolean }[] = [
  { id: "gamma-2.5", model: "gamma-2.5", fast: false },
  { id: "gamma-2.5-fast", model: "gamma-2.5", fast: true },
  ...EFFORTS.flatMap((effort) => [
    { id: `delta-eta-4.6-${effort}`, model: "eta-4.6", effort, fast: false },
    { id: `delta-eta-4.6-${effort}-fast`, model: "eta-4.6", effort, fast: true },
  ]),
];

Deno.test("gamma/eta: the id sets the upstream model, reasoning.effort and the priority tier on every surface", () =>
  withGateway(async (t) => {
    const k = await t.newKey("50.00");
    for (const c of CASES) {
      for (const surface of ["messages", "chat", "responses"] as const) {
        for (const stream of [false, true]) {
          const where = `${c.id} ${surface} stream=${stream}`;
          const res = await post(
            t.url + SURFACE_PATH[surface],
            k.key,
            surfaceBody(surface, c.id, "привет [[sim:words=3]]", stream),
            ANTHROPIC_HEADERS,
          );
          assert.equal(res.status, 200, where);
          const shown = stream ? (await readFrames(res)).raw : JSON.stringify(await res.json());
          assert.ok(shown.includes(`"model":"${c.id}"`), `${where}: the client sees its own id`);
          if (c.model !== c.id) {
            assert.ok(!shown.includes(`"${c.model}"`), `${where}: never the upstream name`);
          }
          const up = t.sim.requests.at(-1)!;
          assert.equal(up.path, "/v1/responses", where);
          const body = up.body as Record<string, unknown>;
          assert.equal(body.model, c.model, where);
          assert.deepEqual(body.reasoning, c.effort ? { effort: c.effort } : undefined, where);
          assert.equal(body.service_tier, c.fast ? "priority" : undefined, where);
        }
      }
    }
  }));
