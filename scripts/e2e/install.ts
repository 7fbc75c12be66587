/**
 * Installs the real clients from npm into a gitignored folder, once: `npm install --prefix <dir> <pkg@ver>…`.
 * Skipped when the installed package.json versions already match.
 */

export const CLIENT_PACKAGES = {
  claude: { pkg: "@anthropic-ai/claude-code", version: Deno.env.get("E2E_CLAUDE_VERSION") ?? "2.1.330" },
  codex: { pkg: "@openai/codex", version: Deno.env.get("E2E_CODEX_VERSION") ?? "0.169.0" },
} as const;

export interface Installed {
  claude: string;
  codex: string;
  versions: { claude: string; codex: string };
}

async function installedVersion(dir: string, pkg: string): Promise<string | undefined> {
  try {
    return JSON.parse(await Deno.readTextFile(`${dir}/node_modules/${pkg}/package.json`)).version;
  } catch {
    return undefined;
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

export async function ensureClients(dir: string): Promise<Installed> {
  const bin = `${dir}/node_modules/.bin`;
  const wanted = Object.values(CLIENT_PACKAGES);
  const current = await Promise.all(wanted.map((p) => installedVersion(dir, p.pkg)));
  const upToDate = wanted.every((p, i) => current[i] === p.version) &&
    await exists(`${bin}/claude`) && await exists(`${bin}/codex`);
  if (!upToDate) {
    const specs = wanted.map((p) => `${p.pkg}@${p.version}`);
    console.log(`installing ${specs.join(" ")} into ${dir} (npm) …`);
    await Deno.mkdir(dir, { recursive: true });
    const out = await new Deno.Command("npm", {
      args: ["install", "--prefix", dir, "--no-audit", "--no-fund", ...specs],
      stdout: "inherit",
      stderr: "inherit",
    }).output();
    if (!out.success) throw new Error(`npm install failed (exit ${out.code})`);
  }
  // Claude Code's bin/claude.exe is a placeholder until its postinstall copies the native binary over it; an
  // npm that holds back install scripts leaves the placeholder, so run that step here.
  const exe = `${dir}/node_modules/${CLIENT_PACKAGES.claude.pkg}/bin/claude.exe`;
  if ((await Deno.stat(exe)).size < 1_000_000) {
    console.log("running Claude Code's postinstall (native binary) …");
    const out = await new Deno.Command("node", {
      args: ["install.cjs"],
      cwd: `${dir}/node_modules/${CLIENT_PACKAGES.claude.pkg}`,
      stdout: "inherit",
      stderr: "inherit",
    }).output();
    if (!out.success) throw new Error(`claude-code postinstall failed (exit ${out.code})`);
  }
  return {
    claude: `${bin}/claude`,
    codex: `${bin}/codex`,
    versions: {
      claude: (await installedVersion(dir, CLIENT_PACKAGES.claude.pkg)) ?? "?",
      codex: (await installedVersion(dir, CLIENT_PACKAGES.codex.pkg)) ?? "?",
    },
  };
}
