/** The module-state check of `deno task check` (scripts/check_module_state.ts), run as a test too. */
import assert from "node:assert/strict";
import { runCheck } from "../support/run_check.ts";

const run = (root?: string) => runCheck("check_module_state.ts", root);

Deno.test("module state: src/ holds none outside the allow-list", async () => {
  const r = await run();
  assert.equal(r.code, 0, r.text);
  assert.match(r.text, /none outside the allow-list/);
});

Deno.test("module state: a top-level let, or an empty container at the top level, is reported", async () => {
  const root = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${root}/src/families`, { recursive: true });
    await Deno.writeTextFile(
      `${root}/src/families/pools.ts`,
      [
        "let count = 0;",
        "const pools = new WeakMap<object, Map<string, Promise<void>>>();",
        "export const queue: string[] = [];",
        "const byId = {};",
        // Constants: a table built from its contents, a frozen record, a regex, state inside a function.
        'const CODES = new Set(["a", "b"]);',
        "const TABLE = Object.freeze({ a: 1 });",
        "const WORD = /\\w+/g;",
        "export function f() {",
        "  let local = 0;",
        "  const m = new Map();",
        "  return [count, pools, queue, byId, CODES, TABLE, WORD, local, m];",
        "}",
      ].join("\n") + "\n",
    );
    // Test files are not product code.
    await Deno.writeTextFile(`${root}/src/families/pools_test.ts`, "let n = 0;\n");
    const r = await run(root);
    assert.equal(r.code, 1, r.text);
    for (const name of ["count", "pools", "queue", "byId"]) {
      assert.match(r.text, new RegExp(`src/families/pools\\.ts:\\d+: ${name} `), name);
    }
    for (const name of ["CODES", "TABLE", "WORD", "local", "m", "n"]) {
      assert.doesNotMatch(r.text, new RegExp(`: ${name} \\(`), name);
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
