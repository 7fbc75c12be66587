import assert from "node:assert/strict";
import { deployRefusals, onDenoDeploy } from "./deploy_rules.ts";
import { parseConfig } from "./env.ts";

const UPSTREAM = { ALPHA_UPSTREAM_URL: "https://alpha.example.com", ALPHA_UPSTREAM_KEY: "k" };
const DEPLOY = { DENO_DEPLOY: "true", DENO_DEPLOYMENT_ID: "abc123" };
const BOT = { TELEGRAM_BOT_TOKEN: "123:abc", PUBLIC_BASE_URL: "https://gw.example.com" };

/** parseConfig's message for `vars` (on Deploy unless they say otherwise), or "" when they are accepted. */
function refusal(vars: Record<string, string>): string {
  try {
    parseConfig({ ...DEPLOY, ...UPSTREAM, ...vars });
    return "";
  } catch (err) {
    return (err as Error).message;
  }
}

Deno.test("Deploy is recognised by DENO_DEPLOY (the current Deploy) or DENO_DEPLOYMENT_ID (both)", () => {
  assert.equal(onDenoDeploy({ DENO_DEPLOY: "true" }), true);
  assert.equal(onDenoDeploy({ DENO_DEPLOY: "1" }), true);
  assert.equal(onDenoDeploy({ DENO_DEPLOYMENT_ID: "abc123" }), true);
  assert.equal(onDenoDeploy({}), false);
  assert.equal(onDenoDeploy({ DENO_DEPLOY: "", DENO_DEPLOYMENT_ID: "" }), false);
});

Deno.test("on Deploy the unset settings take Deploy's values: its KV, Worker extraction, no deadlines, 3 s grace", () => {
  const c = parseConfig({ ...DEPLOY, ...UPSTREAM });
  assert.equal(c.DATABASE_URL, "kv:");
  assert.equal(c.FILES_EXTRACT_MODE, "worker");
  assert.equal(c.HTTP_CONNECTION_DEADLINES, "off");
  assert.equal(c.SHUTDOWN_GRACE_MS, 3_000);
  assert.deepEqual(deployRefusals(c), []);
});

Deno.test("off Deploy nothing changes: the KV file, auto extraction, deadlines on, 30 s grace", () => {
  const c = parseConfig({ ...UPSTREAM });
  assert.equal(c.DATABASE_URL, undefined);
  assert.equal(c.FILES_EXTRACT_MODE, "auto");
  assert.equal(c.HTTP_CONNECTION_DEADLINES, "on");
  assert.equal(c.SHUTDOWN_GRACE_MS, 30_000);
  // The same settings Deploy refuses are fine elsewhere.
  assert.doesNotThrow(() => parseConfig({ ...UPSTREAM, WORKERS: "2", DATABASE_URL: "memory", ...BOT }));
});

Deno.test("on Deploy the shared stores are accepted: Deploy's KV, a KV Connect URL, Postgres", () => {
  for (
    const url of ["kv:", "kv:https://api.deno.com/databases/x/connect", "postgres://u:p@db.example.com/gw"]
  ) {
    assert.equal(refusal({ DATABASE_URL: url }), "", url);
  }
});

Deno.test("on Deploy each setting that cannot work is refused, named, with the reason", () => {
  const cases: [Record<string, string>, string][] = [
    [{ DATABASE_URL: "memory" }, "DATABASE_URL: memory loses every balance"],
    [{ DATABASE_URL: "kv:/tmp/gateway.kv" }, "DATABASE_URL: a KV file on Deno Deploy belongs to one isolate"],
    [{ WORKERS: "2" }, "WORKERS: Deno Deploy starts isolates itself"],
    [{ SHUTDOWN_GRACE_MS: "30000" }, "SHUTDOWN_GRACE_MS: Deno Deploy kills an isolate 5 s after"],
    [BOT, "TELEGRAM_WEBHOOK_SECRET: the bot's long polling needs one process"],
    [{ FILES_EXTRACT_MODE: "process" }, "FILES_EXTRACT_MODE: documents are extracted in Workers"],
    [{ FILES_EXTRACT_MODE: "auto" }, "FILES_EXTRACT_MODE: documents are extracted in Workers"],
  ];
  for (const [vars, expected] of cases) {
    const message = refusal(vars);
    assert.ok(message.startsWith("invalid configuration on Deno Deploy:\n  "), message);
    assert.equal(message.split("\n").length, 2, message); // this one refusal only
    assert.ok(message.includes(expected), `${JSON.stringify(vars)}: ${message}`);
  }
});

Deno.test("on Deploy demo mode is refused: it would fund a new demo key at every isolate start", () => {
  assert.throws(() => parseConfig({ ...DEPLOY }), /\*_UPSTREAM_URL: no \*_UPSTREAM_URL is set: demo mode/);
});

Deno.test("on Deploy every refusal is listed at once, and the accepted limits pass", () => {
  const message = refusal({ DATABASE_URL: "memory", WORKERS: "4", ...BOT });
  assert.deepEqual(message.split("\n").map((l) => l.split(":")[0]!.trim()), [
    "invalid configuration on Deno Deploy",
    "DATABASE_URL",
    "WORKERS",
    "TELEGRAM_WEBHOOK_SECRET",
  ]);
  assert.equal(refusal({ SHUTDOWN_GRACE_MS: "4000", WORKERS: "1" }), "");
  assert.equal(refusal({ ...BOT, TELEGRAM_WEBHOOK_SECRET: "s".repeat(16) }), "");
});

Deno.test("a value the schema refuses is reported as before, on Deploy too", () => {
  assert.match(refusal({ WORKERS: "0" }), /^invalid configuration:\n {2}WORKERS: /);
});
