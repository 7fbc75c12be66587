import assert from "node:assert/strict";
import { commitCostBench } from "./commit_cost.ts";

Deno.test("commit_cost: every round's rows are committed, spread over the keys, and the CPU is counted", async () => {
  const dir = await Deno.makeTempDir();
  const bench = await commitCostBench(dir, 3);
  try {
    const c = await bench.measure(7, 20); // 100 warm-up rounds, then 3 measured rounds of 7 rows
    assert.equal(c.rowsPerRound, 7);
    assert.equal(c.rows, 21);
    assert.equal(await bench.stored(), 100 * 7 + 21);
    for (const v of [c.mainUs, c.writerUs, c.allUs, c.wallUs]) {
      assert.ok(Number.isFinite(v) && v >= 0, `${v}`);
    }
    assert.ok(c.allUs >= c.mainUs + c.writerUs, `all ${c.allUs} < main ${c.mainUs} + writer ${c.writerUs}`);
    assert.ok(c.wallUs > 0);
  } finally {
    await bench.close();
    await Deno.remove(dir, { recursive: true });
  }
});
