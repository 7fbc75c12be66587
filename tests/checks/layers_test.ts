/** The layering check of `deno task check` (scripts/check_layers.ts), run as a test too. */
import assert from "node:assert/strict";
import { runCheck } from "../support/run_check.ts";

const run = (root?: string) => runCheck("check_layers.ts", root);

Deno.test("layers: every import in src/ points down the layers", async () => {
  const r = await run();
  assert.equal(r.code, 0, r.text);
  assert.match(r.text, /every import points down/);
});

Deno.test("layers: an import pointing up, or out of src/, is reported", async () => {
  const root = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${root}/src/util`, { recursive: true });
    await Deno.mkdir(`${root}/src/engine`, { recursive: true });
    await Deno.writeTextFile(`${root}/main.ts`, 'import { b } from "./src/engine/b.ts";\n');
    await Deno.writeTextFile(
      `${root}/src/engine/b.ts`,
      'import { a } from "../util/a.ts";\nexport const b = a;\n',
    );
    await Deno.writeTextFile(
      `${root}/src/util/a.ts`,
      'import type { X } from "../engine/b.ts";\nimport { s } from "../../sim/s.ts";\nexport const a = 1;\n',
    );
    const r = await run(root);
    assert.equal(r.code, 1, r.text);
    assert.match(r.text, /src\/util\/a\.ts \(util\) → \.\.\/engine\/b\.ts \(engine\)/);
    assert.match(r.text, /src\/util\/a\.ts → \.\.\/\.\.\/sim\/s\.ts \(outside src\/\)/);
    assert.doesNotMatch(r.text, /engine\/b\.ts \(engine\) →/); // engine → util points down
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

/** The rows of a layer table: LAYERS in scripts/check_layers.ts, or the diagram of docs/architecture.md. */
const scriptRows = (text: string) => {
  const table = text.slice(text.indexOf("const LAYERS"), text.indexOf("];"));
  return [...table.matchAll(/^\s*\[([^\]]*)\],/gm)].map((m) =>
    [...m[1]!.matchAll(/"([^"]+)"/g)].map((n) => n[1]!)
  );
};
const diagramRows = (text: string) => {
  const start = text.indexOf("```\n", text.indexOf("## Layers")) + 4;
  const block = text.slice(start, text.indexOf("```", start)).trim();
  return block.split("\n").map((line) =>
    line.split(/\s{2,}/)[0]!.split(" ").map((n) => n.replace(/\/$/, ""))
  );
};

Deno.test("layers: docs/architecture.md's layer diagram has the rows of LAYERS, in order", async () => {
  const root = new URL("../../", import.meta.url);
  const layers = scriptRows(await Deno.readTextFile(new URL("scripts/check_layers.ts", root)));
  const diagram = diagramRows(await Deno.readTextFile(new URL("docs/architecture.md", root)));
  assert.ok(layers.length > 10, JSON.stringify(layers));
  assert.deepEqual(diagram, layers);
});
