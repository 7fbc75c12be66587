/**
 * The privacy test (issue 17 item 7; docs/operator-guide.md "Operating"): the gateway runs as its own process
 * (`main.ts`, LOG_LEVEL=debug) with a planted admin token and upstream keys; a client key and a secret prompt
 * go through success and failure paths — JSON and stream answers on the three surfaces, count_tokens, an
 * upstream 500, bad keys on both headers, a refused field, a body that is not JSON, mid-stream faults, the
 * metrics. Everything the process wrote (stdout and stderr), every answer body and the metrics must carry
 * none of the secrets. The secret sits past the 40 characters the simulator quotes back, so no answer holds
 * it legitimately.
 */
import assert from "node:assert/strict";
import { startSimulator } from "../../sim/server.ts";
import { ANTHROPIC_HEADERS } from "../support/harness.ts";

const ADMIN_TOKEN = "admin-SECRET-3f9a1c7e5b2d40689e17";
const UPSTREAM_KEYS = {
  ALPHA_UPSTREAM_KEY: "up-SECRET-alpha-5c2b8e91d0a7",
  BETA_UPSTREAM_KEY: "up-SECRET-beta-7a41c9e03f6d",
  DELTA_UPSTREAM_KEY: "up-SECRET-delta-1e8d62b4a9c0",
  THETA_UPSTREAM_KEYS: "up-SECRET-theta-a-93fd0c,up-SECRET-theta-b-28e4a1",
};
const SECRET_PROMPT = "PROMPT-SECRET-c41f7a0e9b3d";
const BAD_KEY = "gd-SECRETBADKEY4b9e2c7a1f05d83e6c0b9a47f2";
/** More than the simulator quotes of the last user turn (40 characters), then the secret. */
const PROMPT = `Расскажите, пожалуйста, подробно и обстоятельно о погоде: ${SECRET_PROMPT}`;

function freePort(): number {
  const l = Deno.listen({ port: 0, hostname: "127.0.0.1" });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

async function waitReady(url: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    try {
      const r = await fetch(url + "/healthz");
      await r.body?.cancel();
      if (r.ok) return;
    } catch { /* not listening yet */ }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("gateway did not start");
}

Deno.test("no key, upstream key, admin token or prompt in the logs, the metrics or any answer", async () => {
  const sim = await startSimulator();
  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  const proc = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-kv", "--unstable-no-legacy-abort", "main.ts"],
    cwd: new URL("../..", import.meta.url).pathname,
    env: {
      PORT: String(port),
      HOST: "127.0.0.1",
      DATABASE_URL: "memory",
      LOG_LEVEL: "debug",
      LOG_OK_GENERATIONS: "on", // a line for every request, the successful generations too
      ADMIN_TOKEN,
      ALPHA_UPSTREAM_URL: sim.url,
      BETA_UPSTREAM_URL: sim.url,
      DELTA_UPSTREAM_URL: sim.url,
      THETA_UPSTREAM_URL: sim.url,
      ...UPSTREAM_KEYS,
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const output = proc.output();
  /** Every answer body (and its headers) the client saw, but the one that hands out the key. */
  const answers: string[] = [];
  let key = "";
  try {
    await waitReady(url);
    const created = await fetch(url + "/admin/keys", {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ balance_usd: "5.00" }),
    });
    assert.equal(created.status, 201);
    key = (await created.json()).key;

    const call = async (
      path: string,
      body: unknown,
      opts: { key?: string; header?: "x-api-key"; headers?: Record<string, string>; status?: number } = {},
    ) => {
      const k = opts.key ?? key;
      const res = await fetch(url + path, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(opts.header === "x-api-key" ? { "x-api-key": k } : { authorization: `Bearer ${k}` }),
          ...opts.headers,
        },
        body: typeof body === "string" ? body : JSON.stringify(body),
      });
      const text = await res.text();
      answers.push(JSON.stringify([...res.headers]) + text);
      if (opts.status !== undefined) assert.equal(res.status, opts.status, `${path}: ${text.slice(0, 300)}`);
      return text;
    };
    const user = (extra: string) => [{ role: "user", content: `${PROMPT} ${extra}` }];
    const chat = (extra: string, stream = false) => ({
      model: "k3",
      max_tokens: 50,
      stream,
      messages: user(extra),
    });
    const messages = (extra: string, stream = false) => ({
      model: "beta-haiku-4-5",
      max_tokens: 50,
      stream,
      messages: user(extra),
    });

    // Success: JSON and streams on the three surfaces, count_tokens.
    await call("/v1/chat/completions", chat("[[sim:words=5]]"), { status: 200 });
    await call("/v1/chat/completions", chat("[[sim:words=5]]", true), { status: 200 });
    await call("/v1/messages", messages("[[sim:words=5]]"), { status: 200, headers: ANTHROPIC_HEADERS });
    await call("/v1/messages", messages("[[sim:words=5]]", true), {
      status: 200,
      header: "x-api-key",
      headers: ANTHROPIC_HEADERS,
    });
    await call("/v1/responses", { model: "gamma-2.5", input: `${PROMPT} [[sim:words=5]]`, stream: true }, {
      status: 200,
    });
    await call("/v1/messages/count_tokens", messages(""), { status: 200, headers: ANTHROPIC_HEADERS });
    // Failures: an upstream 500, mid-stream faults, bad keys on both headers, a refused field, not JSON.
    await call("/v1/chat/completions", chat("[[sim:fault=status:500]]"), { status: 503 });
    await call("/v1/chat/completions", chat("[[sim:fault=error_mid]] [[sim:words=10]]", true), {
      status: 200,
    });
    await call("/v1/messages", messages("[[sim:fault=cut_mid]] [[sim:words=10]]", true), {
      status: 200,
      headers: ANTHROPIC_HEADERS,
    });
    await call("/v1/chat/completions", chat(""), { key: BAD_KEY, status: 401 });
    await call("/v1/messages", messages(""), {
      key: BAD_KEY,
      header: "x-api-key",
      headers: ANTHROPIC_HEADERS,
      status: 401,
    });
    await call("/v1/chat/completions", { ...chat(""), n: 2 }, { status: 400 });
    await call("/v1/chat/completions", `{"model":"k3","messages":[{"role":"user","content":"${PROMPT}`, {
      status: 400,
    });
    // The metrics: with the token, and refused with the client's key in its place.
    const scraped = await fetch(url + "/metrics", { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    assert.equal(scraped.status, 200);
    answers.push(await scraped.text());
    const refused = await fetch(url + "/metrics", { headers: { authorization: `Bearer ${key}` } });
    assert.equal(refused.status, 401);
    answers.push(await refused.text());
  } finally {
    try {
      proc.kill("SIGTERM");
    } catch { /* already exited: its output is what it wrote */ }
    const out = await output;
    await sim.close();
    const decode = (b: Uint8Array) => new TextDecoder().decode(b);
    const logs = decode(out.stdout) + decode(out.stderr);
    // The process did log: one request line per request above (the key's creation, 13 API requests; not
    // the metrics).
    const requestLines = logs.split("\n").filter((l) => l.startsWith("{") && JSON.parse(l).msg === "request");
    assert.equal(requestLines.length, 14, logs);
    const secrets = {
      key,
      admin_token: ADMIN_TOKEN,
      bad_key: BAD_KEY,
      prompt: SECRET_PROMPT,
      ...Object.fromEntries(
        Object.entries(UPSTREAM_KEYS).flatMap(([name, v]) => v.split(",").map((k, i) => [`${name}${i}`, k])),
      ),
    };
    for (const [name, secret] of Object.entries(secrets)) {
      assert.ok(secret.length > 10, name);
      assert.ok(!logs.includes(secret), `${name} in the logs`);
      for (const a of answers) assert.ok(!a.includes(secret), `${name} in an answer: ${a.slice(0, 400)}`);
    }
    // The key's own hint is the only part of it an operator sees (admin API), and not in the logs either.
    assert.ok(!logs.includes(key.slice(3, 15)), "a long piece of the key in the logs");
  }
});
