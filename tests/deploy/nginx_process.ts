/**
 * Debian's nginx in front of a test gateway: deploy/nginx/gateway.conf rendered into a temp dir with the
 * repository's test certificate for 127.0.0.1 (src/upstream/testing/tls/, signed by its own test CA), included from a main nginx.conf written here (temp paths only), run in
 * the foreground on free loopback ports.
 */
import { render } from "../../deploy/render.ts";
import { freePort, sleep } from "../support/gateway_process.ts";
import { ProxyRun } from "./proxy_run.ts";

export const NGINX = "/usr/sbin/nginx";
export const TEMPLATE = new URL("../../deploy/nginx/gateway.conf", import.meta.url);
const TLS = new URL("../../src/upstream/testing/tls/", import.meta.url).pathname;

export interface Nginx {
  /** https://127.0.0.1:<port>, the TLS server. */
  base: string;
  httpsPort: number;
  httpPort: number;
  /** The test CA that signed nginx's certificate (PEM), trusted by every client here. */
  ca: string;
  /** A fetch client trusting `ca`. */
  client: Deno.HttpClient;
  close(): Promise<void>;
}

/** The values of the template's placeholders for a test nginx in front of `upstream` (host:port). */
export function testValues(upstream: string, bodyLimit = "33m") {
  return {
    SERVER_NAME: "127.0.0.1",
    TLS_CERT: `${TLS}test_tls_cert.pem`,
    TLS_KEY: `${TLS}test_tls_key.pem`,
    UPSTREAM: upstream,
    BODY_LIMIT: bodyLimit,
    HTTPS_LISTEN: `127.0.0.1:${freePort()}`,
    HTTP_LISTEN: `127.0.0.1:${freePort()}`,
  };
}

async function run(cmd: string, args: string[]): Promise<{ code: number; output: string }> {
  const out = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "piped" }).output();
  const dec = new TextDecoder();
  return { code: out.code, output: dec.decode(out.stdout) + dec.decode(out.stderr) };
}

/** The main nginx.conf of a test: one worker, every path in `dir`, the rendered gateway.conf included. */
function mainConf(dir: string): string {
  // A root master switches its workers to `nobody`, who could not read the temp dir. (Whether we are root
  // from the owner of the dir we made: Deno.uid() needs --allow-sys, which the test task does not give.)
  const user = Deno.statSync(dir).uid === 0 ? "user root;\n" : "";
  return `${user}worker_processes 1;
events { worker_connections 256; }
http {
    access_log ${dir}/access.log;
    client_body_temp_path ${dir}/client_body;
    proxy_temp_path ${dir}/proxy;
    fastcgi_temp_path ${dir}/fastcgi;
    uwsgi_temp_path ${dir}/uwsgi;
    scgi_temp_path ${dir}/scgi;
    include gateway.conf;
}
`;
}

/** The command-line arguments that run nginx on the test config in `dir` (with `extra`, e.g. -t). */
function nginxArgs(dir: string, extra: string[] = []): string[] {
  const global = `daemon off; pid ${dir}/nginx.pid;`;
  return ["-p", dir, "-c", `${dir}/nginx.conf`, "-e", `${dir}/error.log`, "-g", global, ...extra];
}

/**
 * Writes the test's nginx.conf and the rendered template (`values` from `testValues`, `template` the file's
 * text, by default deploy/nginx/gateway.conf) into `dir`; returns the PEM of the CA clients trust.
 */
export async function writeConfig(dir: string, values: Record<string, string>, template?: string) {
  const ca = await Deno.readTextFile(`${TLS}test_ca.pem`);
  await Deno.writeTextFile(
    `${dir}/gateway.conf`,
    render(template ?? await Deno.readTextFile(TEMPLATE), values),
  );
  await Deno.writeTextFile(`${dir}/nginx.conf`, mainConf(dir));
  return ca;
}

/** `nginx -t` on the config written in `dir`: its exit code and output. */
export function configTest(dir: string): Promise<{ code: number; output: string }> {
  return run(NGINX, nginxArgs(dir, ["-t"]));
}

/** Starts nginx in front of `upstream` (host:port); resolves once its TLS port accepts connections. */
export async function startNginx(
  upstream: string,
  opts: { bodyLimit?: string; template?: string } = {},
): Promise<Nginx> {
  const run = await ProxyRun.create("nginx-test-");
  const { dir, close } = run;
  try {
    const values = testValues(upstream, opts.bodyLimit);
    const ca = await writeConfig(dir, values, opts.template);
    const proc = run.proc = new Deno.Command(NGINX, { args: nginxArgs(dir), stdout: "null", stderr: "null" })
      .spawn();
    const httpsPort = Number(values.HTTPS_LISTEN.split(":")[1]);
    await waitListening(httpsPort, proc, dir);
    const client = run.client = Deno.createHttpClient({ caCerts: [ca] });
    return {
      base: `https://127.0.0.1:${httpsPort}`,
      httpsPort,
      httpPort: Number(values.HTTP_LISTEN.split(":")[1]),
      ca,
      client,
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** Resolves once 127.0.0.1:`port` accepts a connection; throws (with nginx's error log) if nginx exits or 10 s pass. */
async function waitListening(port: number, proc: Deno.ChildProcess, dir: string): Promise<void> {
  let exited: number | undefined;
  proc.status.then((s) => exited = s.code);
  for (let i = 0; i < 200 && exited === undefined; i++) {
    try {
      (await Deno.connect({ hostname: "127.0.0.1", port })).close();
      return;
    } catch {
      await sleep(50);
    }
  }
  const log = await Deno.readTextFile(`${dir}/error.log`).catch(() => "(no error log)");
  throw new Error(
    `nginx ${exited === undefined ? "did not listen within 10 s" : `exited ${exited}`}: ${log}`,
  );
}
