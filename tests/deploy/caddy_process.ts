/**
 * Debian's Caddy with deploy/caddy/Caddyfile rendered into a temp dir: `caddy validate` on it as an operator
 * renders it, and `caddy run` on loopback for a test, with a few global options added for the test (its own
 * ports, loopback only, Caddy's internal CA instead of ACME, no admin endpoint, every file in the temp dir).
 */
import { render } from "../../deploy/render.ts";
import { freePort, sleep } from "../support/gateway_process.ts";
import { ProxyRun } from "./proxy_run.ts";

export const CADDY = "/usr/bin/caddy";
export const TEMPLATE = new URL("../../deploy/caddy/Caddyfile", import.meta.url);

/** Caddy's state (certificates, autosave) in `dir`, never the user's home. */
const caddyEnv = (dir: string) => ({
  HOME: dir,
  XDG_DATA_HOME: `${dir}/data`,
  XDG_CONFIG_HOME: `${dir}/config`,
});

/** The template rendered with `values`, written to `dir`/Caddyfile. */
export async function writeCaddyfile(dir: string, values: Record<string, string>): Promise<string> {
  const file = `${dir}/Caddyfile`;
  await Deno.writeTextFile(file, render(await Deno.readTextFile(TEMPLATE), values));
  return file;
}

/** `caddy validate` on the Caddyfile `file`: its exit code and output. */
export async function validate(file: string, dir: string): Promise<{ code: number; output: string }> {
  const out = await new Deno.Command(CADDY, {
    args: ["validate", "--adapter", "caddyfile", "--config", file],
    env: caddyEnv(dir),
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, output: dec.decode(out.stdout) + dec.decode(out.stderr) };
}

export interface Caddy {
  /** https://127.0.0.1:<port> */
  base: string;
  /** A fetch client trusting Caddy's internal CA. */
  client: Deno.HttpClient;
  close(): Promise<void>;
}

/** Runs Caddy on the rendered Caddyfile in front of `upstream` (host:port), on loopback ports. */
export async function startCaddy(upstream: string, bodyLimit = "33MiB"): Promise<Caddy> {
  const run = await ProxyRun.create("caddy-test-");
  const { dir, close } = run;
  try {
    const httpsPort = freePort();
    const file = await writeCaddyfile(dir, {
      SERVER_NAME: "127.0.0.1",
      UPSTREAM: upstream,
      BODY_LIMIT: bodyLimit,
    });
    const testGlobals = [
      "admin off",
      `http_port ${freePort()}`,
      `https_port ${httpsPort}`,
      "default_bind 127.0.0.1",
      "local_certs",
      "skip_install_trust",
      `storage file_system {\n\t\troot ${dir}/storage\n\t}`,
    ].map((line) => `\t${line}\n`).join("");
    const text = await Deno.readTextFile(file);
    if (!/^\{\n/m.test(text)) throw new Error("the Caddyfile has no global options block to add to");
    await Deno.writeTextFile(file, text.replace(/^\{\n/m, `{\n${testGlobals}`));
    const proc = run.proc = new Deno.Command(CADDY, {
      args: ["run", "--adapter", "caddyfile", "--config", file],
      env: caddyEnv(dir),
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const log = collect(proc.stderr);
    const rootCa = `${dir}/storage/pki/authorities/local/root.crt`;
    await waitReady(httpsPort, rootCa, proc, log);
    const client = run.client = Deno.createHttpClient({ caCerts: [await Deno.readTextFile(rootCa)] });
    return { base: `https://127.0.0.1:${httpsPort}`, client, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** Caddy's log, read in the background so its pipe never fills. */
function collect(stream: ReadableStream<Uint8Array>) {
  const log = { text: "" };
  stream.pipeThrough(new TextDecoderStream()).pipeTo(
    new WritableStream({ write: (chunk) => void (log.text += chunk) }),
  ).catch(() => {});
  return log;
}

/** Resolves once Caddy serves TLS with a certificate of its CA; throws (with its log) on exit or after 20 s. */
async function waitReady(port: number, rootCa: string, proc: Deno.ChildProcess, log: { text: string }) {
  let exited: number | undefined;
  proc.status.then((s) => exited = s.code);
  for (let i = 0; i < 400 && exited === undefined; i++) {
    try {
      // Ready when a TLS handshake trusting the CA succeeds: the certificate is issued after the port opens.
      const conn = await Deno.connectTls({
        hostname: "127.0.0.1",
        port,
        caCerts: [await Deno.readTextFile(rootCa)],
      });
      try {
        await conn.handshake();
        return;
      } finally {
        conn.close();
      }
    } catch {
      await sleep(50);
    }
  }
  throw new Error(
    `caddy ${exited === undefined ? "was not ready within 20 s" : `exited ${exited}`}: ${log.text}`,
  );
}
