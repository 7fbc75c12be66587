/**
 * wrk (C, epoll; Debian package `wrk`) as the side-by-side section's load generator (bench/side_by_side.ts):
 * a closed loop of keep-alive connections that costs far less CPU per request than a Deno fetch loop, so the
 * servers measured, not the client, set the rate. POST bodies come from a Lua script (`wrk -s`) whose `done`
 * hook prints the exact figures as one JSON line; the client's own CPU is its shell's cutime + cstime after it.
 */

export interface WrkResult {
  /** Responses completed in the run (a stream counts once, when its last chunk arrives). */
  requests: number;
  seconds: number;
  rps: number;
  /** Latency of a whole response, ms (wrk's histogram has 1 µs steps). */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Socket errors (connect, read, write, timeout) plus non-2xx/3xx responses. */
  errors: number;
  /** CPU time of the wrk process, ms. */
  clientCpuMs: number;
}

const CLK_TCK = 100;

/** The Lua script: method, headers and body of every request; `done` prints "WRK_DONE {json}". */
export function wrkScript(headers: Record<string, string>, body: string): string {
  // A long bracket takes the body verbatim; pick a level the body does not close.
  let eq = "=";
  while (body.includes(`]${eq}]`)) eq += "=";
  const lines = [
    'wrk.method = "POST"',
    `wrk.body = [${eq}[${body}]${eq}]`,
    ...Object.entries(headers).map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`),
    "function done(summary, latency, requests)",
    "  local e = summary.errors",
    '  io.write(string.format("WRK_DONE {\\"requests\\":%d,\\"duration_us\\":%d,\\"p50_us\\":%d,' +
    '\\"p99_us\\":%d,\\"max_us\\":%d,\\"errors\\":%d}\\n", summary.requests, summary.duration, ' +
    "latency:percentile(50), latency:percentile(99), latency.max, " +
    "e.connect + e.read + e.write + e.status + e.timeout))",
    "end",
    "",
  ];
  return lines.join("\n");
}

/** The result from the output of `wrk …; cat /proc/$$/stat` (bench/wrk.ts runWrk). */
export function parseWrk(stdout: string): WrkResult {
  const done = /^WRK_DONE (\{.*\})$/m.exec(stdout)?.[1];
  const stat = /^\d+ \(.*\) .*$/m.exec(stdout)?.[0];
  if (!done || !stat) throw new Error(`unexpected wrk output: ${stdout.slice(0, 500)}`);
  const d = JSON.parse(done) as Record<string, number>;
  const f = stat.slice(stat.lastIndexOf(") ") + 2).split(" ");
  const seconds = d.duration_us! / 1e6;
  return {
    requests: d.requests!,
    seconds,
    rps: d.requests! / seconds,
    p50Ms: d.p50_us! / 1000,
    p99Ms: d.p99_us! / 1000,
    maxMs: d.max_us! / 1000,
    errors: d.errors!,
    clientCpuMs: (Number(f[13]) + Number(f[14])) / CLK_TCK * 1000, // cutime, cstime (fields 16, 17)
  };
}

export interface WrkRun {
  /** Path of a script from wrkScript. */
  script: string;
  url: string;
  connections: number;
  threads: number;
  seconds: number;
}

/** One wrk run, in a shell that reports wrk's CPU time after it. */
export async function runWrk(r: WrkRun): Promise<WrkResult> {
  const args = [
    "-t",
    String(r.threads),
    "-c",
    String(r.connections),
    "-d",
    `${r.seconds}s`,
    "-s",
    r.script,
    r.url,
  ];
  const out = await new Deno.Command("sh", {
    args: ["-c", 'wrk "$@" && cat /proc/$$/stat', "sh", ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  if (!out.success) {
    throw new Error(`wrk failed (${out.code}): ${text.slice(-500)} ${new TextDecoder().decode(out.stderr)}`);
  }
  return parseWrk(text);
}

/** "wrk debian/4.1.0-3+b2 [epoll]": the first line of `wrk -v` (which exits 1), up to its copyright. */
export async function wrkVersion(): Promise<string> {
  const out = await new Deno.Command("wrk", { args: ["-v"], stdout: "piped", stderr: "null" }).output();
  return new TextDecoder().decode(out.stdout).split("\n")[0]!.replace(/\s*Copyright.*$/, "").trim();
}

const hasCommand = async (name: string) =>
  (await new Deno.Command("sh", { args: ["-c", `command -v ${name}`], stdout: "null", stderr: "null" })
    .output())
    .success;

/**
 * Makes sure wrk is installed (`apt-get install -y wrk`, after `apt-get update` if the package lists do not
 * know it yet). Returns undefined when it is there, else why not (the section is then skipped).
 */
export function ensureWrk(log: (s: string) => void): Promise<string | undefined> {
  return ensureDebianTool("wrk", log);
}

/** Makes sure the command `name`, from the Debian package of that name, is installed (see ensureWrk). */
export async function ensureDebianTool(name: string, log: (s: string) => void): Promise<string | undefined> {
  if (await hasCommand(name)) return undefined;
  const apt = async (...args: string[]) => {
    log(`  apt-get ${args.join(" ")}`);
    const out = await new Deno.Command("apt-get", {
      args,
      env: { DEBIAN_FRONTEND: "noninteractive" },
      stdout: "null",
      stderr: "piped",
    }).output().catch((err) => ({ success: false, stderr: new TextEncoder().encode(String(err)) }));
    return out.success ? "" : new TextDecoder().decode(out.stderr).trim().split("\n").slice(-2).join(" ");
  };
  log(`${name} is not installed: installing the Debian package`);
  let err = await apt("install", "-y", name);
  if (err) err = (await apt("update")) || (await apt("install", "-y", name));
  if (!err && await hasCommand(name)) return undefined;
  return `skipped: ${name} is not installed and \`apt-get install -y ${name}\` failed${
    err ? ` (${err})` : ""
  }`;
}
