/** Runs one of `deno task check`'s scripts (scripts/) as a test does: on the repository, or on a planted tree. */
export async function runCheck(script: string, root?: string): Promise<{ code: number; text: string }> {
  const path = new URL(`../../scripts/${script}`, import.meta.url).pathname;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-read", path, ...(root ? [root] : [])],
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: out.code,
    text: new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr),
  };
}
