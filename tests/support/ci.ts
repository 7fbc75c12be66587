/**
 * Tests that need a program from a Debian package (Chromium, nginx, Caddy, systemd-analyze; .ci/run installs
 * them): skipped with the reason when it is absent outside CI, failed under CI.
 */

/** Under CI (CI set and not "false"/"0") a missing tool fails its test instead of skipping it. */
export function underCi(): boolean {
  const ci = Deno.env.get("CI") ?? "";
  return ci !== "" && ci !== "false" && ci !== "0";
}

/** Whether `path` is an executable file. */
export function toolPresent(path: string): boolean {
  try {
    const info = Deno.statSync(path);
    return info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0;
  } catch {
    return false;
  }
}

/**
 * Registers a test that needs the programs `tools` (absolute paths): skipped with a printed reason when one
 * is absent outside CI; under CI it runs and fails saying which is missing.
 */
export function toolTest(name: string, tools: string[], fn: (t: Deno.TestContext) => Promise<void>): void {
  const absent = tools.filter((p) => !toolPresent(p));
  const skip = absent.length > 0 && !underCi();
  if (skip) console.warn(`${name}: skipped, ${absent.join(", ")} not found (with CI=true this fails)`);
  Deno.test({ name, ignore: skip }, async (t) => {
    if (absent.length > 0) {
      throw new Error(`${absent.join(", ")} not found: .ci/run installs the Debian package`);
    }
    await fn(t);
  });
}
