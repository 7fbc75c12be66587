/**
 * `deno task e2e:clients`: the real coding agents (Claude Code, Codex CLI, installed from npm into the gitignored
 * `.e2e-clients/`) against the gateway in front of the built-in upstream simulator, all on 127.0.0.1. Not part
 * of `deno task test` (the two clients are ~800 MB).
 *
 * Each case gives one client one model and a two-turn task: the prompt carries the simulator's `write`
 * directive (sim/write_task.ts), so the first answer is a call of the client's file-writing tool (Claude Code
 * `Write`, Codex `exec_command`), the client runs it, sends the tool result back, and the second answer is the
 * simulator's text. Checked: exit code, the file's exact content, the final text, the key's money (balance
 * down, nothing held; refusals: unchanged) and the upstream protocol the gateway used. Models of the closed
 * families (gamma, eta) are expected to be refused with `delta_parameter_unavailable` naming the field.
 *
 * The clients talk to a transparent recording pass-through in front of the gateway (scripts/e2e/tap.ts) so a
 * failure can show the exact request and answer; their proxy variables point at a sentinel that refuses and
 * records any attempt to leave loopback (scripts/e2e/sentinel.ts).
 *
 * Usage: deno task e2e:clients [FILTER…]   (a case runs when its label "client model base" contains every
 * FILTER, e.g. `codex k3`). Env: E2E_TIMEOUT_MS (120000), E2E_KEEP=1 keeps each case's temp HOME / work dir.
 * Evidence of every case (exchanges, client output, upstream requests) goes to .e2e-clients/runs/<stamp>/.
 */
import { assertLedgerIdentity, startTestGateway, type TestGateway } from "../tests/support/harness.ts";
import { writeDirective } from "../sim/write_task.ts";
import { ensureClients, type Installed } from "./e2e/install.ts";
import { runClient, type RunResult } from "./e2e/run.ts";
import { type Sentinel, startSentinel } from "./e2e/sentinel.ts";
import { type Exchange, startTap, type Tap } from "./e2e/tap.ts";

const ROOT = new URL("../", import.meta.url).pathname.replace(/\/$/, "");
const CLIENTS_DIR = `${ROOT}/.e2e-clients`;
const TIMEOUT_MS = Number(Deno.env.get("E2E_TIMEOUT_MS") ?? 120_000);
const KEEP = Deno.env.get("E2E_KEEP") === "1";
const BALANCE = "1.00";
/** The start of the simulator's answer once a tool result is the last user turn (sim/words.ts). */
const TOOL_RESULT_TEXT = "Результат инструмента получен";

type Client = "claude" | "codex";
type Upstream = "/v1/messages" | "/v1/chat/completions" | "/v1/responses";
const PROTOCOL: Record<Upstream, string> = {
  "/v1/messages": "Messages",
  "/v1/chat/completions": "Chat",
  "/v1/responses": "Responses",
};
const SURFACE: Record<Client, string> = { claude: "Messages", codex: "Responses" };

interface Case {
  client: Client;
  model: string;
  /** "" (the gateway's /v1) or "/theta" (theta's own prefix). */
  base: "" | "/theta";
  upstream: Upstream;
  expect: "pass" | "refuse";
}

const MODELS: { model: string; upstream: Upstream; expect: Case["expect"]; bases: Case["base"][] }[] = [
  { model: "beta-sonnet-5", upstream: "/v1/messages", expect: "pass", bases: [""] },
  { model: "k3", upstream: "/v1/chat/completions", expect: "pass", bases: [""] },
  { model: "theta3.8-max", upstream: "/v1/chat/completions", expect: "pass", bases: ["", "/theta"] },
  { model: "delta-eta-4.6-high", upstream: "/v1/responses", expect: "refuse", bases: [""] },
  { model: "gamma-2.5", upstream: "/v1/responses", expect: "refuse", bases: [""] },
];

const CASES: Case[] = (["claude", "codex"] as const).flatMap((client) =>
  MODELS.flatMap((m) =>
    m.bases.map((base) => ({ client, model: m.model, base, upstream: m.upstream, expect: m.expect }))
  )
);

const label = (c: Case) => `${c.client} ${c.model} ${c.base || "/v1"}`;
const surfacePath = (c: Case) => `${c.base}/v1/${c.client === "claude" ? "messages" : "responses"}`;
const route = (c: Case) => `${SURFACE[c.client]} → ${PROTOCOL[c.upstream]} (${surfacePath(c)})`;

interface Outcome {
  c: Case;
  ok: boolean;
  reasons: string[];
  notes: string[];
  evidence?: string;
}

// ---------------------------------------------------------------------------------------------------------
// money

function pico(usd: string): bigint {
  const m = /^(-?)(\d+)(?:\.(\d{0,12}))?$/.exec(usd);
  if (!m) throw new Error(`not a USD amount: ${usd}`);
  const v = BigInt(m[2]!) * 10n ** 12n + BigInt((m[3] ?? "").padEnd(12, "0") || "0");
  return m[1] ? -v : v;
}

interface KeyView {
  balance_usd: string;
  held_usd: string;
  spent_usd: string;
  credited_usd: string;
}

async function keyView(t: TestGateway, id: string): Promise<KeyView> {
  const { status, json } = await t.admin("GET", `/admin/keys/${id}`);
  if (status !== 200) throw new Error(`GET /admin/keys/${id}: ${status} ${JSON.stringify(json)}`);
  return json as KeyView;
}

/** The key once its holds are settled (settlement may trail the client's exit by a moment). */
async function settledView(t: TestGateway, id: string): Promise<KeyView> {
  let v = await keyView(t, id);
  for (let i = 0; i < 50 && pico(v.held_usd) !== 0n; i++) {
    await new Promise((r) => setTimeout(r, 100));
    v = await keyView(t, id);
  }
  return v;
}

// ---------------------------------------------------------------------------------------------------------
// environment

function minimalPath(): string {
  const dirs: string[] = [];
  for (const d of (Deno.env.get("PATH") ?? "").split(":")) {
    if (!d) continue;
    try {
      if (Deno.statSync(`${d}/node`).isFile) {
        dirs.push(d); // Codex's launcher is a node script
        break;
      }
    } catch {
      // no node here
    }
  }
  for (const d of ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"]) {
    if (!dirs.includes(d)) dirs.push(d);
  }
  return dirs.join(":");
}

/** What every child gets: nothing of this process's environment but PATH; proxies point at the sentinel. */
function baseEnv(home: string, tmp: string, sentinel: Sentinel): Record<string, string> {
  return {
    PATH: minimalPath(),
    HOME: home,
    TMPDIR: tmp,
    LANG: "C.UTF-8",
    TERM: "dumb",
    HTTPS_PROXY: sentinel.url,
    HTTP_PROXY: sentinel.url,
    ALL_PROXY: sentinel.url,
    https_proxy: sentinel.url,
    http_proxy: sentinel.url,
    all_proxy: sentinel.url,
    NO_PROXY: "127.0.0.1,localhost",
    no_proxy: "127.0.0.1,localhost",
  };
}

// ---------------------------------------------------------------------------------------------------------
// running one case

interface Prepared {
  bin: string;
  args: string[];
  env: Record<string, string>;
  /** Reads the client's final text after the run. */
  finalText: (r: RunResult) => Promise<{ text?: string; error?: string }>;
  /** The command line as printed in the report (prompt shortened). */
  shown: string;
}

/** What preparing one client run needs. */
interface RunContext {
  c: Case;
  bins: Installed;
  tap: Tap;
  key: string;
  /** The case's temp dir, and HOME, TMPDIR under it. */
  dir: string;
  home: string;
  tmp: string;
  sentinel: Sentinel;
  prompt: string;
}

function prepareClaude({ c, bins, tap, key, home, tmp, sentinel, prompt }: RunContext): Prepared {
  const args = [
    "-p",
    prompt,
    "--model",
    c.model,
    "--permission-mode",
    "acceptEdits",
    "--output-format",
    "json",
  ];
  const env = {
    ...baseEnv(home, tmp, sentinel),
    ANTHROPIC_BASE_URL: tap.url + c.base,
    ANTHROPIC_API_KEY: key,
    ANTHROPIC_SMALL_FAST_MODEL: "beta-haiku-4-5",
    ANTHROPIC_DEFAULT_HAIKU_MODEL: "beta-haiku-4-5",
    DISABLE_TELEMETRY: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    IS_SANDBOX: "1",
  };
  return {
    bin: bins.claude,
    args,
    env,
    shown: `claude -p "<task>" --model ${c.model} --permission-mode acceptEdits --output-format json`,
    finalText(r) {
      const line = r.stdout.trim().split("\n").reverse().find((l) => l.startsWith("{"));
      if (!line) return Promise.resolve({ error: "no JSON on stdout" });
      try {
        const j = JSON.parse(line);
        if (j.is_error) return Promise.resolve({ text: String(j.result ?? ""), error: "is_error: true" });
        return Promise.resolve({ text: String(j.result ?? "") });
      } catch {
        return Promise.resolve({ error: "stdout is not JSON" });
      }
    },
  };
}

async function prepareCodex(
  { c, bins, tap, key, dir, home, tmp, sentinel, prompt }: RunContext,
): Promise<Prepared> {
  const codexHome = `${home}/.codex`;
  await Deno.mkdir(codexHome, { recursive: true });
  await Deno.writeTextFile(
    `${codexHome}/config.toml`,
    [
      `model = ${JSON.stringify(c.model)}`,
      `model_provider = "gw"`,
      ``,
      `[model_providers.gw]`,
      `name = "gw"`,
      `base_url = ${JSON.stringify(`${tap.url}${c.base}/v1`)}`,
      `env_key = "GW_KEY"`,
      `wire_api = "responses"`,
      ``,
      // Not in the shapes doc's config; without them Codex leaves loopback at start-up (seen by the sentinel):
      // the curated-plugins sync (git / GitHub API at github.com, api.github.com, then the export archive at
      // chatgpt.com/backend-api/plugins/export/curated) and analytics metrics (ab.chatgpt.com/otlp/v1/metrics).
      `[features]`,
      `plugins = false`,
      ``,
      `[analytics]`,
      `enabled = false`,
      ``,
    ].join("\n"),
  );
  const last = `${dir}/last-message.txt`;
  const args = [
    "exec",
    "--skip-git-repo-check",
    "--dangerously-bypass-approvals-and-sandbox",
    "--color",
    "never",
    "-o",
    last,
    prompt,
  ];
  return {
    bin: bins.codex,
    args,
    env: { ...baseEnv(home, tmp, sentinel), CODEX_HOME: codexHome, GW_KEY: key },
    shown:
      `codex exec --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox --color never -o <last-message-file> "<task>"`,
    async finalText() {
      try {
        return { text: await Deno.readTextFile(last) };
      } catch {
        return { error: "no -o file" };
      }
    },
  };
}

/** The value at a dotted `param` path (`tools.8`, `context_management`) of a JSON body, shortened. */
function valueAt(body: string, param: string): string {
  try {
    let v: any = JSON.parse(body);
    for (const k of param.split(".")) v = v?.[/^\d+$/.test(k) ? Number(k) : k];
    const s = JSON.stringify(v);
    return s === undefined ? "(absent)" : s.length > 400 ? s.slice(0, 400) + "…" : s;
  } catch {
    return "(body not JSON)";
  }
}

function errorOf(ex: Exchange): { code?: string; param?: string; message?: string } {
  try {
    const j = JSON.parse(ex.responseBody);
    const e = j.error ?? j.detail?.error ?? {};
    return { code: e.code ?? e.type, param: e.param ?? undefined, message: e.message };
  } catch {
    return {};
  }
}

function short(s: string, n = 300): string {
  const one = s.replace(/\s+/g, " ").trim();
  return one.length > n ? one.slice(0, n) + "…" : one;
}

async function runCase(
  c: Case,
  t: TestGateway,
  tap: Tap,
  s: Sentinel,
  bins: Installed,
  runsDir: string,
): Promise<Outcome> {
  const out: Outcome = { c, ok: false, reasons: [], notes: [] };
  const k = await t.newKey(BALANCE);
  const dir = await Deno.makeTempDir({ prefix: `e2e-${c.client}-${c.model}-` });
  const home = `${dir}/home`, work = `${dir}/work`, tmp = `${dir}/tmp`;
  for (const d of [home, work, tmp]) await Deno.mkdir(d, { recursive: true });
  const file = `${work}/hello.txt`;
  const content =
    `Hello from ${c.client} via ${c.model}: it's "quoted", $HOME and \`cmd\` stay literal \\ ok.\nПривет, шлюз!\n`;
  const prompt =
    `Create the file hello.txt in the current directory with the agreed content, then say done. ${
      writeDirective({ path: file, content })
    }`;
  const tapMark = tap.exchanges.length, simMark = t.sim.requests.length, sentMark = s.attempts.length;

  const ctx: RunContext = { c, bins, tap, key: k.key, dir, home, tmp, sentinel: s, prompt };
  const p = c.client === "claude" ? prepareClaude(ctx) : await prepareCodex(ctx);
  const r = await runClient(p.bin, p.args, { cwd: work, env: p.env, timeoutMs: TIMEOUT_MS });
  const view = await settledView(t, k.id);
  const exchanges = tap.exchanges.slice(tapMark);
  const upstreamRequests = t.sim.requests.slice(simMark);
  const upstream = upstreamRequests.map((q) => q.path);
  const egress = s.attempts.slice(sentMark);
  const printed = r.stdout + "\n" + r.stderr;
  const fail = (why: string) => out.reasons.push(why);

  try {
    assertLedgerIdentity(t.gw, k.id);
  } catch (e) {
    fail(String(e instanceof Error ? e.message : e));
  }
  if (pico(view.held_usd) !== 0n) fail(`hold left open: held_usd ${view.held_usd}`);
  if (egress.length) fail(`left loopback: ${[...new Set(egress)].join("; ")}`);
  if (r.timedOut) fail(`timed out after ${TIMEOUT_MS} ms (killed)`);
  const errors = exchanges.filter((e) => e.status >= 400);
  out.notes.push(
    `${exchanges.length} gateway call(s)${errors.length ? `, ${errors.length} refused` : ""}; upstream: ${
      upstream.length ? [...new Set(upstream)].join(", ") : "none"
    }`,
  );

  if (c.expect === "pass") {
    if (r.code !== 0) fail(`exit ${r.code}`);
    let written: string | undefined;
    try {
      written = await Deno.readTextFile(file);
    } catch {
      // not written
    }
    if (written === undefined) fail("file not written");
    else if (written !== content) fail(`file content differs: ${JSON.stringify(short(written, 120))}`);
    const fin = await p.finalText(r);
    if (fin.error) fail(`final text: ${fin.error}${fin.text ? ` (${short(fin.text, 200)})` : ""}`);
    else if (!fin.text?.includes(TOOL_RESULT_TEXT)) {
      fail(`final text lacks the tool-result answer: ${JSON.stringify(short(fin.text ?? "", 120))}`);
    }
    if (!(pico(view.balance_usd) < pico(BALANCE))) fail(`balance not charged: ${view.balance_usd}`);
    const wrong = upstream.filter((u) => u !== c.upstream);
    if (wrong.length) fail(`unexpected upstream protocol: ${[...new Set(wrong)].join(", ")}`);
    if (upstream.length < 2 && written === content) fail(`only ${upstream.length} upstream call(s)`);
    out.notes.push(`charged ${(Number(pico(BALANCE) - pico(view.balance_usd)) / 1e12).toFixed(6)} USD`);
  } else {
    if (r.code === 0) fail("exit 0, expected a refusal");
    const last = errors.at(-1);
    if (!last) fail("the gateway refused nothing");
    else {
      const e = errorOf(last);
      if (e.code !== "delta_parameter_unavailable") {
        fail(
          `gateway answered ${last.status} ${e.code ?? "?"}${
            e.param ? ` (param ${e.param})` : ""
          }, not delta_parameter_unavailable`,
        );
      }
      if (!printed.includes("delta_parameter_unavailable")) {
        fail("the client did not print delta_parameter_unavailable");
      }
      if (!e.param) fail("the refusal names no param");
      else if (!printed.includes(e.param)) {
        fail(`the client's printed error does not name the field \`${e.param}\``);
      } else out.notes.push(`refused field \`${e.param}\``);
    }
    if (pico(view.balance_usd) !== pico(BALANCE)) fail(`balance changed: ${view.balance_usd}`);
    if (upstream.length) fail(`the upstream was called: ${upstream.join(", ")}`);
  }
  out.ok = out.reasons.length === 0;

  // Evidence: the whole exchange log, the client's output and the command line.
  const evidence = `${runsDir}/${label(c).replace(/[^a-z0-9.-]+/gi, "_")}.json`;
  await Deno.writeTextFile(
    evidence,
    JSON.stringify(
      {
        case: label(c),
        route: route(c),
        command: p.shown,
        env: Object.fromEntries(Object.entries(p.env).map(([k2, v]) => [k2, /KEY/.test(k2) ? "gd-…" : v])),
        prompt,
        result: { code: r.code, timedOut: r.timedOut, ms: r.ms, stdout: r.stdout, stderr: r.stderr },
        key: view,
        upstream,
        upstreamRequests,
        egress,
        exchanges,
        reasons: out.reasons,
      },
      null,
      2,
    ),
  );
  out.evidence = evidence;
  if (!out.ok) {
    // The first and last refusals, with the refused field's value in the client's request.
    for (const ex of errors.length > 1 ? [errors[0]!, errors.at(-1)!] : errors) {
      const e = errorOf(ex);
      out.notes.push(
        `${ex.method} ${ex.path} → ${ex.status} ${short(ex.responseBody, 500)}` +
          (e.param ? `; request ${e.param} = ${valueAt(ex.requestBody, e.param)}` : ""),
      );
    }
    if (!errors.length && r.code !== 0) out.notes.push(`client output: ${short(printed, 600)}`);
  }
  if (!KEEP) await Deno.remove(dir, { recursive: true }).catch(() => {});
  else out.notes.push(`kept ${dir}`);
  return out;
}

// ---------------------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const filters = Deno.args;
  const cases = CASES.filter((c) => filters.every((f) => label(c).includes(f)));
  if (!cases.length) {
    console.error(`no case matches ${filters.join(" ")}; cases: ${CASES.map(label).join(", ")}`);
    return 2;
  }
  const bins = await ensureClients(CLIENTS_DIR);
  console.log(`clients: Claude Code ${bins.versions.claude}, Codex CLI ${bins.versions.codex}`);
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const runsDir = `${CLIENTS_DIR}/runs/${stamp}`;
  await Deno.mkdir(runsDir, { recursive: true });

  const t = await startTestGateway();
  const tap = await startTap(t.url);
  const sentinel = startSentinel();
  console.log(`gateway ${t.url} (simulator ${t.sim.url}), clients via ${tap.url}; evidence in ${runsDir}`);
  const results: Outcome[] = [];
  try {
    for (const c of cases) {
      let o: Outcome;
      try {
        o = await runCase(c, t, tap, sentinel, bins, runsDir);
      } catch (e) {
        o = { c, ok: false, reasons: [`harness error: ${e instanceof Error ? e.message : e}`], notes: [] };
      }
      results.push(o);
      const verdict = o.ok ? "PASS" : `FAIL: ${o.reasons.join("; ")}`;
      console.log(`${c.client.padEnd(6)} ${c.model.padEnd(19)} ${route(c).padEnd(46)} ${verdict}`);
      for (const n of o.notes) console.log(`         · ${n}`);
    }
  } finally {
    sentinel.close();
    await tap.close();
    try {
      await t.close(); // checks the ledger identity of every key once more
    } catch (e) {
      console.log(`FAIL at shutdown: ${e instanceof Error ? e.message : e}`);
      results.push({ c: cases[0]!, ok: false, reasons: ["ledger identity at shutdown"], notes: [] });
    }
  }
  const passed = results.filter((o) => o.ok).length;
  const failed = results.length - passed;
  console.log(`${passed} passed, ${failed} failed`);

  console.log(
    `\n| Client | Model | Route (surface → upstream) | Expected | Result |\n| --- | --- | --- | --- | --- |`,
  );
  const client = (c: Case) =>
    c.client === "claude" ? `Claude Code ${bins.versions.claude}` : `Codex CLI ${bins.versions.codex}`;
  for (const o of results) {
    const expected = o.c.expect === "pass"
      ? "writes the file, final text"
      : "refused: `delta_parameter_unavailable`";
    const res = o.ok ? "PASS" : `FAIL: ${o.reasons.join("; ").replace(/\|/g, "\\|")}`;
    console.log(`| ${client(o.c)} | \`${o.c.model}\` | ${route(o.c)} | ${expected} | ${res} |`);
  }
  return failed ? 1 : 0;
}

Deno.exit(await main());
