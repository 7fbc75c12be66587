/**
 * Operator configuration from environment variables, validated once at start-up.
 *
 * Every setting carries its description (`.describe()`), and the settings are grouped by area: both feed
 * the generated reference docs/configuration.md (`deno task config:docs`; `deno task check` fails when it
 * is stale).
 */
import { z } from "zod";
import { parseCidrList } from "../util/ip.ts";
import { DEPLOY_DEFAULTS, deployRefusals, onDenoDeploy } from "./deploy_rules.ts";
import { LOG_LEVELS } from "../util/log.ts";

const optionalUrl = z.string().url().optional();
const optionalString = z.string().min(1).optional();
const ms = (def: number) => z.coerce.number().int().positive().default(def);
const rps = z.coerce.number().min(0).max(1_000_000).default(0);
const burst = z.coerce.number().int().min(0).max(1_000_000).optional();

const server = {
  PORT: z.coerce.number().int().min(0).max(65535).default(8787)
    .describe("Port to listen on; 0 takes any free port. Default 8787."),
  HOST: z.string().min(1).default("0.0.0.0").describe("Address to bind. Default 0.0.0.0, every interface."),
  WORKERS: z.coerce.number().int().min(1).max(64).default(1).describe(
    "Serving processes on one port (SO_REUSEPORT), each answer naming its process in " +
      "`x-gateway-worker`. More than 1 needs a shared store (`DATABASE_URL` postgres:// or kv:). " +
      "Default 1.",
  ),
  BODY_LIMIT_BYTES: z.coerce.number().int().positive().default(32 * 1024 * 1024).describe(
    "Hard limit on a request body, bytes; a larger body is 413 `request_body_too_large` (spec " +
      "§7.3; spec §8.4 leaves the figure open). Default 32 MiB.",
  ),
  HTTP_HEADER_TIMEOUT_MS: ms(10_000).describe(
    "A new connection must send a complete request head within this long, ms (the slowloris " +
      "bound). Default 10 s.",
  ),
  HTTP_IDLE_TIMEOUT_MS: ms(75_000).describe(
    "A connection with no request in progress is closed after this long, ms. Default 75 s.",
  ),
  HTTP_CONNECTION_DEADLINES: z.enum(["on", "off"]).default("on").describe(
    "`off`: plain `Deno.serve` without the two connection bounds above, for a gateway behind a " +
      "reverse proxy that enforces them itself (nginx `client_header_timeout`, `keepalive_timeout`); " +
      "it saves about 12 KB per open connection. Default `on`.",
  ),
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(30_000).describe(
    "On SIGTERM or SIGINT, open streams and requests in flight may finish within this long, ms; " +
      "then each is cut with `service_unavailable` and billed for what ran. 0 cuts at once. Default " +
      "30 s.",
  ),
  ADMIN_TOKEN: z.string().min(16, "ADMIN_TOKEN must be at least 16 characters").optional().describe(
    "Bearer token of the operator API under /admin/ and of GET /metrics, at least 16 characters. " +
      "Unset: the /admin/ routes do not exist (404).",
  ),
  BACKUP_HOLD_MS: z.coerce.number().int().min(1).default(120_000).describe(
    "GET /admin/backup reads one consistent snapshot: on the KV store this process's money writes wait for it, " +
      "on Postgres one transaction stays open. Past this long, ms, the backup is cut and its file ends without " +
      "its trailer (a restore refuses it). Default 120 s.",
  ),
  TRUSTED_PROXIES: z.string().default("").transform((s, ctx) => {
    try {
      return parseCidrList(s);
    } catch (err) {
      ctx.addIssue({ code: "custom", message: (err as Error).message });
      return z.NEVER;
    }
  }).describe(
    "Comma-separated CIDRs (IPv4, IPv6) of the proxies in front of the gateway. Only from them is " +
      "X-Forwarded-For read (its right-most address that is not a trusted proxy is the client). " +
      "Default empty: the connection's peer is the client.",
  ),
  KEY_RATE_LIMIT_RPS: rps.describe(
    "Requests per second one key may make, sustained, per process (fractions allowed); beyond, 429 " +
      "`client_key_rate_limit` with Retry-After (spec §7.3). Default 0, off.",
  ),
  KEY_RATE_LIMIT_BURST: burst.describe(
    "Burst of the per-key rate, requests. Unset: one second's worth of `KEY_RATE_LIMIT_RPS` (at " +
      "least 1); 0 turns the limit off.",
  ),
  IP_RATE_LIMIT_RPS: rps.describe(
    "Requests per second one client address may make, sustained, per process, checked before the " +
      "key (IPv6 counted per /64); beyond, 429 `client_ip_rate_limit` (spec §7.3). Behind a proxy it " +
      "needs `TRUSTED_PROXIES`. Default 0, off.",
  ),
  IP_RATE_LIMIT_BURST: burst.describe(
    "Burst of the per-address rate, requests. Unset: one second's worth of `IP_RATE_LIMIT_RPS` (at " +
      "least 1); 0 turns the limit off.",
  ),
  SUSPEND_BAD_REQUESTS: z.coerce.number().int().min(0).max(1_000_000).default(50).describe(
    "The suspension rule, per process: a key with more than this many requests refused for bad " +
      "input at a pace above this many per `SUSPEND_WINDOW_MS` is suspended for `SUSPEND_FOR_MS`, " +
      "429 `api_key_suspended` (spec §5.3). 0 turns the rule off. Default 50.",
  ),
  SUSPEND_WINDOW_MS: ms(60_000).describe("The suspension rule's counting window, ms. Default 60 s."),
  SUSPEND_FOR_MS: ms(600_000).describe(
    "How long a key suspended by the rule stays suspended, ms. Default 10 min.",
  ),
};

const store = {
  DATABASE_URL: z.string().regex(
    /^(memory|postgres(ql)?:\/\/.+|kv:.*)$/,
    "expected 'memory', a postgres:// URL or kv:<path or URL>",
  ).optional().describe(
    "The store. Unset: a Deno KV file at `DATA_DIR/gateway.kv`, one gateway process. `memory`: " +
      "in-memory KV, lost on exit, for tests only: every usage row stays in the process's memory, so its RSS " +
      "grows with traffic (about 400 MiB after minutes of load). `postgres://user:password@host:5432/db`: Postgres, " +
      "migrated at start-up. `kv:<path or KV Connect URL>` (`kv:` alone on Deno Deploy): a shared " +
      "Deno KV. Postgres and kv: serve any number of gateway processes (docs/ledger_leases.md).",
  ),
  DATA_DIR: z.string().min(1).default("./data").describe(
    "Directory of the KV file store, created if missing; one gateway process per directory, the " +
      "single writer. Default ./data.",
  ),
};

const billing = {
  LEASE_TTL_MS: ms(30_000).describe(
    "Shared stores: a dead process's leased credit is back after at most this long, ms " +
      "(docs/ledger_leases.md). Default 30 s.",
  ),
  LEASE_IDLE_MS: ms(5_000).describe(
    "Shared stores: a key's unused leased credit goes back after this long without a hold, ms. " +
      "Default 5 s.",
  ),
  KEY_REFRESH_MS: ms(1_000).describe(
    "Shared stores: how often a process reads the key changes other processes made (revocations, " +
      "caps, new keys), ms. Default 1 s.",
  ),
  SETTLE_DURABILITY_MS: ms(250).describe(
    "The durability window of settlements, what a kill -9 may lose, ms: /readyz fails " +
      "(`settlements`) while a settlement has waited longer than this to be durable. Default 250 ms.",
  ),
  IDEMPOTENCY_TTL_MS: ms(86_400_000).describe(
    "How long an `Idempotency-Key` stays bound to its request and answer, per gateway key, ms " +
      "(docs/idempotency.md). Default 24 h.",
  ),
  IDEMPOTENCY_DETACH_MS: ms(30_000).describe(
    "A keyed request whose client went away keeps running this long waiting for a retry to attach, ms; " +
      "then it is cancelled and billed as a cut stream. Default 30 s.",
  ),
  IDEMPOTENCY_MAX_BUFFER_BYTES: ms(8 * 1024 * 1024).describe(
    "The most one keyed answer keeps for replay, bytes; a longer one is not kept and a retry gets 409 " +
      "`idempotency_replay_unavailable`. Default 8 MiB.",
  ),
  IDEMPOTENCY_MAX_TOTAL_BYTES: ms(256 * 1024 * 1024).describe(
    "The most every running keyed answer of this process keeps together, bytes; an answer that would " +
      "pass it is not kept (as above). Default 256 MiB.",
  ),
  IDEMPOTENCY_LEASE_MS: ms(15_000).describe(
    "A process running a keyed request renews its claim on the key within this long, ms; the key of a " +
      "process that died is free again after it. Default 15 s.",
  ),
  DEMO_BALANCE_USD: z.string().regex(/^\d+(\.\d{1,12})?$/).default("1.00").describe(
    "Balance in USD of the demo key created and printed at start-up in demo mode (no " +
      "`*_UPSTREAM_URL` set). Default 1.00.",
  ),
};

const upstreams = {
  ALPHA_UPSTREAM_URL: optionalUrl.describe(
    "Base URL of family alpha's upstream (Chat Completions protocol, spec §4.2). Unset with every " +
      "other `*_UPSTREAM_URL`: demo mode, the built-in simulator serves every family.",
  ),
  ALPHA_UPSTREAM_KEY: optionalString.describe("Family alpha's upstream key."),
  BETA_UPSTREAM_URL: optionalUrl.describe(
    "Base URL of family beta's upstream (Anthropic Messages protocol, spec §4.5).",
  ),
  BETA_UPSTREAM_KEY: optionalString.describe("Family beta's upstream key."),
  DELTA_UPSTREAM_URL: optionalUrl.describe(
    "Base URL of the upstream of families gamma and eta, which share it (Responses protocol, spec " +
      "§4.6).",
  ),
  DELTA_UPSTREAM_KEY: optionalString.describe("The upstream key of families gamma and eta."),
  THETA_UPSTREAM_URL: optionalUrl.describe(
    "Base URL of family theta's upstream (Chat Completions protocol, spec §4.7).",
  ),
  THETA_UPSTREAM_KEYS: optionalString.describe(
    "Family theta's upstream keys, comma-separated, one upstream account per key (spec §4.7).",
  ),
  UPSTREAM_CLIENT: z.enum(["wire", "fetch"]).default("wire").describe(
    "The upstream calls' HTTP client: `wire`, the gateway's own keep-alive HTTP/1.1 client, or " +
      "`fetch`, Deno's. An HTTP_PROXY, HTTPS_PROXY or ALL_PROXY in the environment keeps `fetch`, " +
      "which honours it. Default `wire`.",
  ),
  UPSTREAM_HEADERS_TIMEOUT_MS: ms(120_000).describe(
    "Time allowed for the upstream to answer a stream request with its response head, connecting " +
      "included, ms; then 504 `upstream_timeout`. Default 120 s.",
  ),
  UPSTREAM_GENERATION_TIMEOUT_MS: ms(600_000).describe(
    "Alpha and beta: a non-streaming request's whole upstream call, from going out to the answer's " +
      "last byte, ms (its head comes only with the whole answer); then 504 `upstream_timeout`, the " +
      "upstream cancelled, nothing charged. Gamma/eta and theta keep their own run limits. Default " +
      "600 s, as the official SDKs wait.",
  ),
  STREAM_HEARTBEAT_MS: ms(15_000).describe(
    "Interval of the SSE comment heartbeat while a stream is quiet, ms (spec §6). Default 15 s.",
  ),
  STREAM_IDLE_TIMEOUT_MS: ms(120_000).describe(
    "An upstream stream that sends nothing this long ends with `stream_timeout`, ms (spec §7.3). " +
      "Default 120 s.",
  ),
  MAX_INFLIGHT_UPSTREAM: z.coerce.number().int().min(0).max(1_000_000).default(1024).describe(
    "Capacity slots: upstream generation requests in flight at once, per process; a request " +
      "finding every slot busy is 429 `service_capacity_saturated` with Retry-After 1 (spec §7.3). 0 " +
      "= no bound. Default 1024.",
  ),
  PRIORITY_SLOT_SHARE: z.coerce.number().min(0).max(1).default(0.1).describe(
    "The share of the capacity slots, 0 to 1, only priority requests may take " +
      '(`service_tier: "priority"`, gamma/eta -fast ids): ceil(`MAX_INFLIGHT_UPSTREAM` × share) slots. ' +
      "Standard requests finding the rest busy get 429 `standard_capacity_saturated` (spec §7.3). " +
      "Default 0.1.",
  ),
};

const families = {
  BETA_SERVER_PROMPT: z.string().min(1).default(
    "Отвечай на русском языке, если пользователь явно не попросил другой язык.",
  ).describe(
    "Family beta: the operator's server prompt, put before the client's own system prompt on every " +
      "beta id but beta-fable-5 and beta-fable-5-1 (spec §2.1). Default: answer in Russian unless " +
      "asked otherwise (spec §1.9).",
  ),
  DELTA_RUN_TIMEOUT_MS: ms(600_000).describe(
    "Families gamma and eta: a run (the upstream call to its last byte) not finished within this " +
      "long is cancelled upstream and ends with `delta_run_timeout`, the work done billed, ms (spec " +
      "§7.5, §8.4). Default 600 s.",
  ),
  DELTA_MAX_OPEN_LOOPS: z.coerce.number().int().positive().default(8).describe(
    "Families gamma and eta: unfinished client tool loops one key may have open; at the limit a " +
      "request that continues none of them is 429 `delta_key_pause_limit` (spec §7.5). Default 8.",
  ),
  DELTA_LOOP_TTL_MS: ms(600_000).describe(
    "Families gamma and eta: an open tool loop not continued within this long is dropped, ms. " +
      "Default 10 min.",
  ),
  THETA_QUEUE_TIMEOUT_MS: ms(30_000).describe(
    "Family theta: the queue wait, how long a request waits for a free upstream account before 429 " +
      "`queue_timeout`, ms (spec §7.6, §8.4). Default 30 s.",
  ),
  THETA_GENERATION_TIMEOUT_MS: ms(600_000).describe(
    "Family theta: one generation runs at most this long, then `generation_timeout`, billed for " +
      "the work done, ms (spec §7.6, §8.4). Default 10 min.",
  ),
  THETA_IDLE_RELEASE_MS: ms(600_000).describe(
    "Family theta: an upstream account bound to a key is free for other keys after this long " +
      "without a request, ms (spec §8.4). Default 10 min.",
  ),
};

const filesWeb = {
  FILES_TTL_MS: ms(86_400_000).describe(
    "Lifetime of an uploaded file before automatic deletion, ms (spec §8.2: 24 hours); " +
      "configurable for tests. Default 24 h.",
  ),
  FILES_EXTRACT_TIMEOUT_MS: ms(30_000).describe(
    "One document extraction (PDF, DOCX, XLSX, PPTX) is killed after this long: 422 " +
      "`file_limit_exceeded`, ms (spec §8.2). Default 30 s.",
  ),
  FILES_EXTRACT_MODE: z.enum(["auto", "process", "worker"]).default("auto").describe(
    "Where documents are extracted: `process`, extraction processes with a heap and memory limit each; " +
      "`worker`, a Deno Worker per document, with weaker bounds (docs/files.md); `auto`, processes when " +
      "the gateway may start them (`--allow-run`), else workers. Default `auto` (`worker` on Deno Deploy).",
  ),
  SEARCH_UPSTREAM_URL: optionalUrl.describe(
    "Base URL of the search API behind POST /v1/alpha/search (spec §4.4). Unset: in demo mode the " +
      "simulator answers, otherwise search answers 503. Page fetch goes to the page itself, not " +
      "here.",
  ),
  SEARCH_UPSTREAM_KEY: optionalString.describe(
    "Key of the search API: a Bearer token for SearXNG (sent when set), X-Subscription-Token for " +
      "Brave.",
  ),
  SEARCH_BACKEND: z.enum(["searxng", "brave"]).default("searxng").describe(
    "The API `SEARCH_UPSTREAM_URL` speaks: `searxng` (GET /search?q=…&format=json) or `brave` " +
      "(Brave Search API). Default `searxng`.",
  ),
};

const bot = {
  PUBLIC_BASE_URL: optionalUrl.describe(
    "The gateway's address as its clients reach it (https://gw.example.com): the bot shows it with " +
      "a new key and, in webhook mode, registers its webhook under it.",
  ),
  TELEGRAM_BOT_TOKEN: z.string().regex(
    /^\d+:[A-Za-z0-9_-]+$/,
    "expected a Telegram bot token (<id>:<secret>)",
  ).optional().describe("The bot's token from @BotFather (`<id>:<secret>`). Unset: no bot."),
  TELEGRAM_API_ROOT: z.string().url().default("https://api.telegram.org").describe(
    "The Bot API server; tests point it at a fake one. Default https://api.telegram.org.",
  ),
  TELEGRAM_WEBHOOK_SECRET: z.string().regex(
    /^[A-Za-z0-9_-]{16,256}$/,
    "16 to 256 characters of A-Z, a-z, 0-9, _ and -",
  ).optional().describe(
    "Set: webhook mode, Telegram posts updates to `PUBLIC_BASE_URL/telegram/<hook>` (a hook " +
      "derived from this secret) with the secret in X-Telegram-Bot-Api-Secret-Token; needs " +
      "`PUBLIC_BASE_URL`. Unset: long polling, one gateway process.",
  ),
  TELEGRAM_ADMIN_CHAT_IDS: z.string().default("").transform((s, ctx) => {
    const ids = s.split(",").map((p) => p.trim()).filter((p) => p !== "");
    if (ids.some((id) => !/^-?\d{1,20}$/.test(id) || !Number.isSafeInteger(Number(id)))) {
      ctx.addIssue({ code: "custom", message: "expected comma-separated Telegram chat ids" });
      return z.NEVER;
    }
    return ids.map(Number);
  }).describe(
    "Comma-separated Telegram chat ids allowed the operator's commands /confirm, /refund and " +
      "/method. Default empty: none.",
  ),
  BOT_ALERT_CHECK_MS: ms(30_000).describe(
    "How often the bot looks for keys whose balance fell below their alert threshold, ms. Default " +
      "30 s.",
  ),
  BOT_COMMANDS_PER_MINUTE: z.coerce.number().int().min(1).max(10_000).default(20).describe(
    "Messages and button presses one chat may send per minute, per process; beyond, a polite " +
      "refusal. Default 20.",
  ),
};

const dashboard = {
  DASHBOARD_SESSION_TTL_MS: ms(43_200_000).describe(
    "How long a dashboard sign-in lasts, ms; sign-out ends it at once on every process. Default 12 " +
      "h.",
  ),
  DASHBOARD_LOGIN_FAILURES_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(10).describe(
    "Failed dashboard sign-ins allowed per minute per client address, per process: a burst of that " +
      "many, then one more every 60/N s; beyond, 429 `dashboard_login_rate_limit` with Retry-After. " +
      "Default 10.",
  ),
};

const telemetry = {
  LOG_LEVEL: z.enum(LOG_LEVELS).default("info").describe(
    "JSON log lines on stdout below this level are dropped; request lines are `info`, failures " +
      "`error`. Default `info`.",
  ),
};

/** The areas in the order docs/configuration.md shows them. */
export const CONFIG_AREAS = [
  {
    title: "Server",
    about: "The listening socket, connection bounds, shutdown, the operator API and request admission.",
    settings: server,
  },
  { title: "Store", about: "Where keys, balances, usage and files are kept.", settings: store },
  {
    title: "Billing and leases",
    about: "Credit leases on a shared store, the durability of settlements, the demo key.",
    settings: billing,
  },
  { title: "Upstreams", about: "The upstream providers and the calls to them.", settings: upstreams },
  { title: "Families", about: "What one family adds to the common path.", settings: families },
  {
    title: "Files and web",
    about: "Family alpha's file store and its search and page fetch helpers.",
    settings: filesWeb,
  },
  { title: "Bot", about: "The key shop's Telegram bot (spec §1.6, §5.5).", settings: bot },
  { title: "Dashboard", about: "The key holder's dashboard at /dashboard.", settings: dashboard },
  {
    title: "Telemetry",
    about: "Logs; /metrics, /healthz and /readyz need no setting of their own.",
    settings: telemetry,
  },
] as const;

export const ConfigSchema = z.object({
  ...server,
  ...store,
  ...billing,
  ...upstreams,
  ...families,
  ...filesWeb,
  ...bot,
  ...dashboard,
  ...telemetry,
}).refine((c) => !c.TELEGRAM_WEBHOOK_SECRET || c.PUBLIC_BASE_URL, {
  // Telegram has to be told where to post: the bot registers PUBLIC_BASE_URL/telegram/<hook> itself.
  path: ["PUBLIC_BASE_URL"],
  message: "TELEGRAM_WEBHOOK_SECRET (webhook mode) needs PUBLIC_BASE_URL",
});

export type Config = z.infer<typeof ConfigSchema>;

export const UPSTREAM_URL_VARS = [
  "ALPHA_UPSTREAM_URL",
  "BETA_UPSTREAM_URL",
  "DELTA_UPSTREAM_URL",
  "THETA_UPSTREAM_URL",
] as const;

/** Parse a variable map (Deno.env.toObject() in production); throws a readable Error on bad values. */
export function parseConfig(vars: Record<string, string | undefined>): Config {
  const cleaned = Object.fromEntries(Object.entries(vars).filter(([, v]) => v !== undefined && v !== ""));
  const deploy = onDenoDeploy(cleaned);
  const result = ConfigSchema.safeParse(deploy ? { ...DEPLOY_DEFAULTS, ...cleaned } : cleaned);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new Error(`invalid configuration:\n${lines.join("\n")}`);
  }
  // What cannot work on Deno Deploy is refused like a bad value (src/config/deploy_rules.ts).
  const refusals = deploy ? deployRefusals(result.data) : [];
  if (refusals.length > 0) {
    throw new Error(`invalid configuration on Deno Deploy:\n${refusals.map((r) => `  ${r}`).join("\n")}`);
  }
  return result.data;
}

/** Demo mode: no upstream configured at all, every family served by the built-in simulator. */
export function isDemoMode(config: Config): boolean {
  return UPSTREAM_URL_VARS.every((k) => config[k] === undefined);
}
