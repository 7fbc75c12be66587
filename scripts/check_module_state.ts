/**
 * `deno task check` part: no module-level mutable state in src/. A gateway's state lives in what
 * src/gateway.ts builds and closes, so two gateways in one process share nothing. Flags, at the top level
 * of a source file (test files `*_test.ts` excepted): a `let` or `var`, and a `const` holding a container
 * that starts empty and so exists to be filled at run time (`new Map()`, `new Set()`, `new WeakMap()`,
 * `new WeakSet()`, `new Array()`, `[]`, `{}`). Tables built from their contents (`new Set([...])`, frozen
 * records) and compiled regexes are constants. Prints each finding and exits 1 if any.
 */

/** What may stay, by `path:name`, and why: process-wide by nature, not a gateway's. */
const ALLOWED: Readonly<Record<string, string>> = {
  // One coarse interval for the whole process is the point of the ticker (its cost per request).
  "src/util/ticker.ts:ticks": "one timer per process",
  "src/util/ticker.ts:period": "one timer per process",
  "src/util/ticker.ts:timer": "one timer per process",
  "src/util/ticker.ts:dues": "one timer per process",
  "src/util/yield_turn.ts:waiting": "the runtime's event loop is the process's",
  "src/util/yield_turn.ts:batch":
    "a loop turn is the process's: its writes go together, whichever gateway made them",
  "src/util/yield_turn.ts:opened": "a loop turn is the process's (its batch, above)",
  // Files shipped beside the code: the same bytes for every gateway.
  "src/dashboard/assets.ts:loaded": "a cache of files that never change",
  "src/telemetry/metrics.ts:STATUS_LABELS": "a memo of String(status), the same for all",
  // These run inside the extraction worker process, pacing its own CPU.
  "src/documents/pdf_streams.ts:lastYield": "the extraction process's own pacing",
  "src/documents/pdf_budget.ts:sinceGc": "the extraction process's own pacing",
  "src/documents/pdf_syntax.ts:CMDS": "a bounded cache of parsed operators, the same for all",
  // Keyed by the App: one random secret per gateway, gone with it (App cannot name CursorSigner, above it).
  "src/usage/handlers.ts:SIGNERS": "per App",
  // Test support: a contract suite's sequence for unique ids.
  "src/store/testing/usage_hours_contract.ts:seq": "test support",
};

/** The repository root; a test passes another one (a small planted tree). */
const ROOT = Deno.args[0]
  ? new URL(`file://${Deno.args[0].replace(/\/?$/, "/")}`)
  : new URL("../", import.meta.url);

const LET = /^(?:export\s+)?(?:let|var)\s+([\w$]+)/;
const EMPTY_CONTAINER =
  /^(?:export\s+)?const\s+([\w$]+)(?:\s*:[^=]+)?\s*=\s*(?:new\s+(?:Map|Set|WeakMap|WeakSet|Array)\s*(?:<.*>)?\(\s*\)|\[\s*\]|\{\s*\})\s*;?\s*(?:\/\/.*)?$/;

async function* sources(dir: URL): AsyncGenerator<URL> {
  for await (const e of Deno.readDir(dir)) {
    const url = new URL(e.name + (e.isDirectory ? "/" : ""), dir);
    if (e.isDirectory) yield* sources(url);
    else if (e.name.endsWith(".ts") && !e.name.endsWith("_test.ts")) yield url;
  }
}

const problems: string[] = [];
let files = 0;
for await (const url of sources(new URL("src/", ROOT))) {
  files++;
  const rel = url.pathname.slice(ROOT.pathname.length);
  const lines = (await Deno.readTextFile(url)).split("\n");
  lines.forEach((line, i) => {
    // Top-level statements start at column 0 in formatted code.
    const name = line.match(LET)?.[1] ?? line.match(EMPTY_CONTAINER)?.[1];
    if (name !== undefined && ALLOWED[`${rel}:${name}`] === undefined) {
      problems.push(`${rel}:${i + 1}: ${name} (${line.trim()})`);
    }
  });
}
if (problems.length > 0) {
  console.error(
    `module-level mutable state (scripts/check_module_state.ts; build it in src/gateway.ts):\n  ${
      problems.join("\n  ")
    }`,
  );
  Deno.exit(1);
}
console.log(`module state: ${files} files, none outside the allow-list`);
