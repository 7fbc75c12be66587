import assert from "node:assert/strict";
import { handlerBench, type HandlerLoad } from "./handler_cost.ts";

for (const load of ["json", "stream", "agent"] as HandlerLoad[]) {
  Deno.test(`handler_cost (${load}): every request reaches the stub, answers as the mock would and is billed`, async () => {
    const dir = await Deno.makeTempDir();
    const bench = await handlerBench(load, dir);
    try {
      const round = await bench.round(70); // more than one batch of 32 at a time, not a multiple of it
      assert.equal(round.requests, 70);
      assert.equal(bench.upstreamCalls(), 70);
      assert.ok(round.wallUs > 0 && Number.isFinite(round.wallUs), `wall ${round.wallUs}`);
      assert.ok(round.cpuUs > 0 && Number.isFinite(round.cpuUs), `cpu ${round.cpuUs}`);
    } finally {
      await bench.close();
    }
    // Closed: the group commit has made every settlement durable, one usage row per request.
    assert.equal(bench.gw.app.accounts.ledger.stats().rows, 70);
    await Deno.remove(dir, { recursive: true });
  });
}
