/**
 * `deno task check` part: every import in src/ (and main.ts) points down the layers (docs/architecture.md), never
 * up, so the composition root sits on top and the data types at the bottom. Type-only imports count
 * too. Test files (`*_test.ts`) may import anything. Prints each upward import and exits 1 if any.
 */
const LAYERS: string[][] = [
  ["main.ts"],
  ["gateway.ts"],
  ["http"], // the server: routing table, handler registration, authentication stage, connections
  ["engine", "web", "usage", "admin", "dashboard", "bot"], // feature handlers… (bot: the key shop's Telegram bot)
  ["files", "reports"], // …and what two of them share: the file store (generation), usage rows read back
  ["app.ts"], // the services a handler can reach
  ["request"], // what a handler reads and answers with
  ["telemetry"], // what a request did: its metrics and log line
  ["families"], // app services, each layer using only those below it
  ["billing", "auth", "upstream", "shop", "backup", "idempotency"], // shop: the key shop; backup: snapshot, restore
  ["accounts"],
  ["documents"], // text of uploaded and fetched documents, in extraction processes (files and web use it)
  ["protocols", "store"],
  ["ir", "catalog", "money", "config"], // data types and rules as data
  ["http1"], // HTTP/1.1 on a socket: head, framing, chunked coding, a bounded reader (upstream and web use it)
  ["errors"],
  ["util"],
];
/** The repository root; a test passes another one (a small planted tree). */
const ROOT = Deno.args[0]
  ? new URL(`file://${Deno.args[0].replace(/\/?$/, "/")}`)
  : new URL("../", import.meta.url);
const SRC = new URL("src/", ROOT);
const rankOf = new Map<string, number>();
LAYERS.forEach((names, i) => names.forEach((n) => rankOf.set(n, i)));

/** The layer unit of a file: its folder under src/, or the file itself at the top of src/ or the root. */
function unit(path: string): string | undefined {
  const rel = path.startsWith(SRC.pathname) ? path.slice(SRC.pathname.length) : undefined;
  if (rel === undefined) return path === new URL("main.ts", ROOT).pathname ? "main.ts" : undefined;
  return rel.includes("/") ? rel.slice(0, rel.indexOf("/")) : rel;
}

async function* sources(dir: URL): AsyncGenerator<string> {
  for await (const e of Deno.readDir(dir)) {
    const url = new URL(e.name + (e.isDirectory ? "/" : ""), dir);
    if (e.isDirectory) yield* sources(url);
    else if (e.name.endsWith(".ts") && !e.name.endsWith("_test.ts")) yield url.pathname;
  }
}

const IMPORT = /^\s*(?:import|export)\s[^;]*?from\s+["'](\.{1,2}\/[^"']+)["']/gms;
const problems: string[] = [];
const files = [new URL("main.ts", ROOT).pathname];
for await (const f of sources(SRC)) files.push(f);
for (const file of files) {
  const from = unit(file)!;
  const fromRank = rankOf.get(from);
  if (fromRank === undefined) {
    problems.push(`${file}: folder "${from}" has no layer`);
    continue;
  }
  const text = await Deno.readTextFile(file);
  for (const m of text.matchAll(IMPORT)) {
    const target = new URL(m[1]!, "file://" + file).pathname;
    const to = unit(target);
    if (to === from) continue;
    if (to === undefined) {
      // Only the composition root may reach outside src/ (main.ts composes the simulator for demo mode).
      if (from !== "main.ts") problems.push(`${file.slice(ROOT.pathname.length)} → ${m[1]} (outside src/)`);
      continue;
    }
    const toRank = rankOf.get(to);
    if (toRank === undefined) {
      problems.push(`${file.slice(ROOT.pathname.length)}: imports "${to}", which has no layer`);
    } else if (toRank < fromRank || (toRank === fromRank && from !== to && LAYERS[toRank]!.length > 1)) {
      problems.push(`${file.slice(ROOT.pathname.length)} (${from}) → ${m[1]} (${to})`);
    }
  }
}
if (problems.length > 0) {
  console.error(`imports pointing up the layers (scripts/check_layers.ts):\n  ${problems.join("\n  ")}`);
  Deno.exit(1);
}
console.log(`layers: ${files.length} files, every import points down`);
