import assert from "node:assert/strict";
import { catProc } from "./cpu.ts";
import { coreSplit, parseCpuList, setCores, splitCores } from "./affinity.ts";

Deno.test("parseCpuList: single CPUs and ranges as taskset prints them", () => {
  assert.deepEqual(parseCpuList("0,1"), [0, 1]);
  assert.deepEqual(parseCpuList(" 0-3,6\n"), [0, 1, 2, 3, 6]);
  assert.deepEqual(parseCpuList("2"), [2]);
  assert.throws(() => parseCpuList("0,a"), /not a CPU list/);
  assert.throws(() => parseCpuList(""), /not a CPU list/);
});

Deno.test("splitCores: the last core for the proxy, the others for the load; none with one core", () => {
  assert.deepEqual(splitCores([0, 1]), { all: "0,1", proxy: "1", load: "0" });
  assert.deepEqual(splitCores([0, 1, 2, 3]), { all: "0,1,2,3", proxy: "3", load: "0,1,2" });
  assert.equal(splitCores([5]), undefined);
});

const split = await coreSplit();

Deno.test({
  name: "setCores: every thread of a running process is moved, and moved back",
  ignore: typeof split === "string",
  fn: async () => {
    if (typeof split === "string") return;
    const child = new Deno.Command("sleep", { args: ["30"], stdout: "null" }).spawn();
    const allowed = async () =>
      parseCpuList(
        /Cpus_allowed_list:\s*(\S+)/.exec(await catProc([`/proc/${child.pid}/status`]))![1]!,
      );
    try {
      await setCores(split.proxy, [child.pid]);
      assert.deepEqual(await allowed(), parseCpuList(split.proxy));
      await setCores(split.all, [child.pid]);
      assert.deepEqual(await allowed(), parseCpuList(split.all));
    } finally {
      child.kill();
      await child.status;
    }
  },
});

Deno.test("setCores: a process that is not there is an error", async () => {
  if (typeof split === "string") return;
  await assert.rejects(setCores(split.all, [2 ** 22 + 1]), /could not move pid/);
});
