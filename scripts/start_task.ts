/**
 * The "start" task of deno.json, read as a command line: the variables it sets before `deno` (the runtime's
 * memory settings, docs/performance.md "Stream RSS under load") and the words after. The service unit
 * (tests/deploy/systemd_test.ts) and the bench (bench/procs.ts) start the gateway with the same.
 */
export interface StartTask {
  /** `NAME=value` words before the program. */
  env: Record<string, string>;
  /** The program ("deno") and its arguments. */
  words: string[];
}

export function startTask(): StartTask {
  const line = JSON.parse(Deno.readTextFileSync(new URL("../deno.json", import.meta.url))).tasks.start;
  const words = String(line).trim().split(/\s+/);
  const env: Record<string, string> = {};
  while (words.length > 0) {
    const m = /^([A-Z_][A-Z0-9_]*)=(\S*)$/.exec(words[0]!);
    if (!m) break;
    env[m[1]!] = m[2]!;
    words.shift();
  }
  return { env, words };
}
