import assert from "node:assert/strict";
import {
  type CpuProfile,
  originOf,
  PROFILE_ROOT,
  summariseProfiles,
  topInclusive,
  topSelf,
} from "./profile.ts";

const frame = (functionName: string, url = "", lineNumber = -1) => ({ functionName, url, lineNumber });
// Five samples 1 ms apart (at 1..5 ms): f, f, g, idle, f.
const profile: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame("(root)") },
    { id: 2, callFrame: frame("(idle)"), hitCount: 1 },
    { id: 3, callFrame: frame("f", "file:///repo/src/a.ts", 3), hitCount: 3 },
    { id: 4, callFrame: frame("g"), hitCount: 1 },
  ],
  startTime: 0,
  endTime: 5000,
  samples: [3, 3, 4, 2, 3],
  timeDeltas: [1000, 1000, 1000, 1000, 1000],
};

Deno.test("topSelf: the whole profile from hit counts, locations relative to the root", () => {
  const t = topSelf(profile, "/repo/");
  assert.equal(t.total, 5);
  assert.equal(t.busy, 4);
  assert.deepEqual(t.top, [{ name: "f src/a.ts:4", samples: 3, share: 0.75 }, {
    name: "g",
    samples: 1,
    share: 0.25,
  }]);
});

Deno.test("originOf: runtime JavaScript, ops, dependencies, the gateway's code, GC and native time", () => {
  const o = (name: string, url = "") => originOf(frame(name, url), "/repo/");
  assert.equal(o("resolve", "ext:deno_web/06_streams.js"), "Deno runtime JavaScript (ext:)");
  assert.equal(o("op_read"), "Deno ops (native calls from JavaScript)");
  assert.equal(
    o("parse", "file:///root/.cache/deno/npm/registry.npmjs.org/zod/4.0.0/index.js"),
    "dependencies (npm)",
  );
  assert.equal(o("log", "file:///repo/src/util/log.ts"), "the gateway's own code (src/, main.ts)");
  assert.equal(o("(garbage collector)"), "V8 garbage collector");
  assert.equal(o("(program)"), "native, outside JavaScript: (program)");
});

Deno.test("topSelf: a window counts only the samples taken in it", () => {
  const t = topSelf(profile, "/repo/", 15, { fromMs: 2, toMs: 4 });
  assert.equal(t.total, 3);
  assert.equal(t.busy, 2);
  assert.deepEqual(t.top, [{ name: "f src/a.ts:4", samples: 1, share: 0.5 }, {
    name: "g",
    samples: 1,
    share: 0.5,
  }]);
});

Deno.test("topInclusive: a sample counts once for each of the gateway's own functions on its stack", () => {
  // h (own) calls k (own) calls op_x (native) and k again (recursion); m is not own code.
  const nested: CpuProfile = {
    nodes: [
      { id: 1, callFrame: frame("(root)"), children: [2, 3, 8] },
      { id: 2, callFrame: frame("(idle)"), hitCount: 1 },
      { id: 3, callFrame: frame("h", "file:///repo/src/h.ts", 0), children: [4, 7] },
      { id: 4, callFrame: frame("k", "file:///repo/src/k.ts", 9), hitCount: 1, children: [5, 6] },
      { id: 5, callFrame: frame("op_x"), hitCount: 2 },
      { id: 6, callFrame: frame("k", "file:///repo/src/k.ts", 9), hitCount: 1 },
      { id: 7, callFrame: frame("m", "ext:deno_web/06_streams.js", 0), hitCount: 1 },
      { id: 8, callFrame: frame("g"), hitCount: 1 },
    ],
    startTime: 0,
    endTime: 7000,
    samples: [4, 5, 5, 6, 7, 8, 2],
    timeDeltas: [1000, 1000, 1000, 1000, 1000, 1000, 1000],
  };
  assert.deepEqual(topInclusive(nested, "/repo/"), [
    { name: "h src/h.ts:1", samples: 5, share: 5 / 6 },
    { name: "k src/k.ts:10", samples: 4, share: 4 / 6 },
  ]);
  assert.deepEqual(topInclusive(nested, "/repo/", 15, { fromMs: 4.5, toMs: 7 }), [
    { name: "h src/h.ts:1", samples: 1, share: 1 / 2 },
  ]);
});

Deno.test("summariseProfiles: one line of self time per profile, and with totals one of total time", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const own: CpuProfile = {
      ...profile,
      nodes: [
        { id: 1, callFrame: frame("(root)"), children: [2, 3] },
        { id: 2, callFrame: frame("(idle)"), hitCount: 1 },
        { id: 3, callFrame: frame("f", `file://${PROFILE_ROOT}src/a.ts`, 3), hitCount: 3, children: [4] },
        { id: 4, callFrame: frame("g"), hitCount: 1 },
      ],
    };
    await Deno.writeTextFile(`${dir}/one.cpuprofile`, JSON.stringify(own));
    const [self, ...rest] = await summariseProfiles(dir);
    assert.deepEqual(rest, []);
    assert.match(self!, /Top self time \(share of busy samples\): `f src\/a\.ts:4` 75\.0%; `g` 25\.0%$/);
    const lines = await summariseProfiles(dir, true);
    assert.equal(lines.length, 2);
    assert.equal(lines[1], "one.cpuprofile: top total time (share of busy samples): `f src/a.ts:4` 100.0%");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
