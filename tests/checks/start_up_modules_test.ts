/**
 * What a gateway loads when it starts: the libraries only some gateways use are loaded when first needed
 * (docs/performance.md, "Memory at rest"), so no static import chain from main.ts may reach them.
 */
import assert from "node:assert/strict";

interface Dependency {
  specifier: string;
  code?: { specifier: string };
  isDynamic?: boolean;
}
interface Graph {
  modules: { specifier: string; dependencies?: Dependency[] }[];
}

const ROOT = new URL("../../", import.meta.url);

/** Every module main.ts reaches through static imports alone (`deno info --json`), by specifier. */
async function staticallyLoaded(): Promise<Set<string>> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", "main.ts"],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  const graph = JSON.parse(new TextDecoder().decode(out.stdout)) as Graph;
  const bySpecifier = new Map(graph.modules.map((m) => [m.specifier, m]));
  const seen = new Set<string>();
  const stack = [new URL("main.ts", ROOT).href];
  while (stack.length > 0) {
    const at = stack.pop()!;
    if (seen.has(at)) continue;
    seen.add(at);
    for (const d of bySpecifier.get(at)?.dependencies ?? []) {
      if (!d.isDynamic && d.code) stack.push(d.code.specifier);
    }
  }
  return seen;
}

Deno.test("start-up loads neither the page converter's libraries nor the bot's nor the Postgres driver", async () => {
  const loaded = [...await staticallyLoaded()];
  for (
    const lazy of [
      "npm:linkedom",
      "npm:turndown",
      "npm:grammy",
      "npm:postgres",
      "src/bot/lifecycle.ts",
      "src/store/pg_store.ts",
    ]
  ) {
    const found = loaded.filter((s) => s.includes(lazy));
    assert.deepEqual(found, [], `${lazy} is reached from main.ts by static imports`);
  }
  // The walk itself reaches the serving path (else the assertions above would pass on an empty graph).
  for (const used of ["src/gateway.ts", "src/engine/generate.ts", "npm:zod"]) {
    assert.ok(loaded.some((s) => s.includes(used)), `${used} not reached: the walk is broken`);
  }
});
