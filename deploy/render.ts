/**
 * Fills the double-brace placeholders of a deployment template (deploy/nginx/gateway.conf,
 * deploy/caddy/Caddyfile; docs/deploy/reverse-proxy.md). It refuses a value for a name the template does not
 * have (a typo would otherwise leave the real placeholder unset), a placeholder left without a value, and a
 * value spanning lines (it would write directives of its own).
 *
 *   deno run --allow-read deploy/render.ts deploy/nginx/gateway.conf SERVER_NAME=gw.example.com … > out.conf
 */

const PLACEHOLDER = /\{\{([A-Z][A-Z0-9_]*)\}\}/g;

/** The placeholder names a template uses, in order of first use. */
export function placeholders(template: string): string[] {
  return [...new Set([...template.matchAll(PLACEHOLDER)].map((m) => m[1]!))];
}

/** The template with every placeholder replaced by its value; throws on an unknown, missing or bad value. */
export function render(template: string, values: Record<string, string>): string {
  const names = placeholders(template);
  const unknown = Object.keys(values).filter((n) => !names.includes(n));
  if (unknown.length > 0) throw new Error(`the template has no placeholder ${unknown.join(", ")}`);
  const missing = names.filter((n) => values[n] === undefined);
  if (missing.length > 0) throw new Error(`no value for ${missing.join(", ")}`);
  for (const [name, value] of Object.entries(values)) {
    if (value === "" || /[\r\n]/.test(value)) {
      throw new Error(`${name}: the value must be one non-empty line`);
    }
  }
  return template.replaceAll(PLACEHOLDER, (_, name: string) => values[name]!);
}

if (import.meta.main) {
  const [file, ...pairs] = Deno.args;
  if (!file || pairs.some((p) => !p.includes("="))) {
    console.error("usage: deno run --allow-read deploy/render.ts <template> NAME=value … > <output>");
    Deno.exit(2);
  }
  const values = Object.fromEntries(
    pairs.map((p) => [p.slice(0, p.indexOf("=")), p.slice(p.indexOf("=") + 1)]),
  );
  try {
    const text = render(await Deno.readTextFile(file), values);
    await Deno.stdout.write(new TextEncoder().encode(text));
  } catch (err) {
    console.error(`render: ${(err as Error).message}`);
    Deno.exit(1);
  }
}
