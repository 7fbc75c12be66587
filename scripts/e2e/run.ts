/** Runs a client binary with a given (minimal) environment, bounded by a timeout. */

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  ms: number;
}

let setsid: string | undefined | null = null;
function setsidPath(): string | undefined {
  if (setsid !== null) return setsid;
  setsid = undefined;
  for (const p of ["/usr/bin/setsid", "/bin/setsid"]) {
    try {
      if (Deno.statSync(p).isFile) setsid = p;
    } catch {
      // not here
    }
    if (setsid) break;
  }
  return setsid;
}

function killGroup(pid: number): void {
  try {
    // The child runs in its own session (setsid), so its process group id is its pid: this reaches the shells
    // and helpers it started, and nothing else.
    Deno.kill(-pid, "SIGKILL");
  } catch {
    try {
      Deno.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

/**
 * Runs `bin args` in `cwd` with exactly `env` (nothing inherited), stdin closed. On timeout the process (and
 * its process group) is killed with SIGKILL.
 */
export async function runClient(
  bin: string,
  args: string[],
  opts: { cwd: string; env: Record<string, string>; timeoutMs: number },
): Promise<RunResult> {
  const wrap = setsidPath();
  const cmd = new Deno.Command(wrap ?? bin, {
    args: wrap ? [bin, ...args] : args,
    cwd: opts.cwd,
    env: opts.env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  });
  const started = performance.now();
  const child = cmd.spawn();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(child.pid);
  }, opts.timeoutMs);
  try {
    const out = await child.output();
    const dec = new TextDecoder();
    return {
      code: out.code,
      stdout: dec.decode(out.stdout),
      stderr: dec.decode(out.stderr),
      timedOut,
      ms: Math.round(performance.now() - started),
    };
  } finally {
    clearTimeout(timer);
    // Leftovers of a finished run (a helper still holding the group) go too.
    if (wrap) killGroup(child.pid);
  }
}
