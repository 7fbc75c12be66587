/**
 * `deno task check` part: below the HTTP layer nothing prints. Code in src/ logs through the Logger it is
 * given (src/util/log.ts: one JSON object per line, no keys or content); only the HTTP layer (src/http/), the
 * entry point (main.ts, outside src/) and the files of ALLOWED may use `console`. Test files (`*_test.ts`)
 * and test support (`*_contract.ts`, `test_*.ts`, a `testing/` folder) are exempt. Prints each use and
 * exits 1 if any; an ALLOWED entry that is gone or no longer uses `console` is reported too, so the list
 * stays true.
 */

/** Files below the HTTP layer that use `console`, each with the reason. */
export const ALLOWED: Readonly<Record<string, string>> = {
  // Inside the extraction child process or worker: no Logger there, and stdout is the frame channel.
  "src/documents/quiet_stdout.ts":
    "the extraction child's stdout carries frames only: what a library prints is sent to stderr",
  "src/documents/protocol.ts":
    "errorReply runs in the extraction child (its stderr lines become the gateway's log lines) or worker",
};

/** Folders under src/ whose files may print: the HTTP layer. */
const PRINTING_FOLDERS = ["http/"];

const TEST_SUPPORT = /_test\.ts$|_contract\.ts$|(^|\/)test_[^/]*\.ts$|(^|\/)testing\//;

/** The repository root; a test passes another one (a small planted tree). */
const ROOT = Deno.args[0]
  ? new URL(`file://${Deno.args[0].replace(/\/?$/, "/")}`)
  : new URL("../", import.meta.url);
const SRC = new URL("src/", ROOT);

async function* sources(dir: URL, rel = ""): AsyncGenerator<string> {
  for await (const e of Deno.readDir(dir)) {
    const path = rel + e.name;
    if (e.isDirectory) yield* sources(new URL(e.name + "/", dir), path + "/");
    else if (e.name.endsWith(".ts")) yield path;
  }
}

/** Comments blanked out (line breaks kept, so line numbers hold); `//` after a colon is a URL, not a comment. */
function withoutComments(text: string): string {
  return text
    .replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, " "))
    .replace(/(^|[^:])\/\/.*$/gm, "$1");
}

/** A use of the console object: a member of it (`console.error`, `globalThis.console.log`, `console["warn"]`), or
 *  the object itself taken apart, assigned or passed on. A word "console" in a message is no use of it. */
const CONSOLE = /\bconsole\s*(?:\??\.|\[)|[=(,:]\s*console\b/;

/** `path:line: text` for each use of `console` in a file that may not print, and what is stale in ALLOWED. */
async function consoleUses(): Promise<string[]> {
  const problems: string[] = [];
  const allowedSeen = new Set<string>();
  for await (const rel of sources(SRC)) {
    if (TEST_SUPPORT.test(rel) || PRINTING_FOLDERS.some((f) => rel.startsWith(f))) continue;
    const path = `src/${rel}`;
    const lines = withoutComments(await Deno.readTextFile(new URL(rel, SRC))).split("\n");
    const uses = lines.flatMap((line, i) => line.match(CONSOLE) ? [`${path}:${i + 1}: ${line.trim()}`] : []);
    if (path in ALLOWED) {
      allowedSeen.add(path);
      if (uses.length === 0) {
        problems.push(`${path}: allowed, but no longer uses console: remove it from ALLOWED`);
      }
    } else problems.push(...uses);
  }
  for (const path of Object.keys(ALLOWED)) {
    if (!allowedSeen.has(path)) problems.push(`${path}: allowed, but there is no such file: update ALLOWED`);
  }
  return problems;
}

if (import.meta.main) {
  const problems = await consoleUses();
  if (problems.length > 0) {
    console.error(
      `console used below the HTTP layer (scripts/check_console.ts; log through the Logger instead):\n  ${
        problems.join("\n  ")
      }`,
    );
    Deno.exit(1);
  }
  console.log(`console: none below the HTTP layer but the ${Object.keys(ALLOWED).length} allowed files`);
}
