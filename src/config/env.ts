/** Operator configuration from environment variables, validated once at start-up. */
import { z } from "zod";
import { parseCidrList } from "../util/ip.ts";
import { LOG_LEVELS } from "../util/log.ts";

const optionalUrl = z.string().url().optional();
const optionalString = z.string().min(1).optional();
const ms = (def: number) => z.coerce.number().int().positive().default(def);
const rps = z.coerce.number().min(0).max(1_000_000).default(0);
const burst = z.coerce.number().int().min(0).max(1_000_000).optional();

export const ConfigSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8787),
  HOST: z.string().min(1).default("0.0.0.0"),
  /**
   * Unset: Deno KV file under DATA_DIR, one process; "memory": in-memory KV (tests); postgres://…: the Postgres
   * store, shared by any number of processes; kv:<path or KV Connect URL> (kv: alone: Deno Deploy's KV): a
   * Deno KV shared the same way (README "Several processes").
   */
  DATABASE_URL: z.string().regex(
    /^(memory|postgres(ql)?:\/\/.+|kv:.*)$/,
    "expected 'memory', a postgres:// URL or kv:<path or URL>",
  ).optional(),
  /** Shared stores: a dead process's leased credit is back after at most this long (docs/ledger_leases.md). */
  LEASE_TTL_MS: ms(30_000),
  /** Shared stores: a key's unused leased credit goes back after this long without a hold. */
  LEASE_IDLE_MS: ms(5_000),
  /** Shared stores: how often a process reads the key changes other processes made (revocations, caps, new keys). */
  KEY_REFRESH_MS: ms(1_000),
  /**
   * The durability window of settlements (README "The hot path and its durability promise"): what a kill -9
   * may lose. `/readyz` fails ("settlements") while a change has waited longer than this to be durable.
   */
  SETTLE_DURABILITY_MS: ms(250),
  /** Serving processes on one port (reusePort); more than one needs a shared store (README "Several processes"). */
  WORKERS: z.coerce.number().int().min(1).max(64).default(1),
  DATA_DIR: z.string().min(1).default("./data"),
  ADMIN_TOKEN: z.string().min(16, "ADMIN_TOKEN must be at least 16 characters").optional(),
  ALPHA_UPSTREAM_URL: optionalUrl,
  ALPHA_UPSTREAM_KEY: optionalString,
  BETA_UPSTREAM_URL: optionalUrl,
  BETA_UPSTREAM_KEY: optionalString,
  DELTA_UPSTREAM_URL: optionalUrl,
  DELTA_UPSTREAM_KEY: optionalString,
  /** Gamma/eta: unfinished client tool loops a key may have open (spec §7.5 delta_key_pause_limit). */
  DELTA_MAX_OPEN_LOOPS: z.coerce.number().int().positive().default(8),
  /** Gamma/eta: an open tool loop not continued within this long is dropped, ms (10 minutes). */
  DELTA_LOOP_TTL_MS: ms(600_000),
  /**
   * Operator's server prompt, put before the client's own system prompt on every beta model but the fable
   * ids (spec §2.1). The default asks for answers in Russian (spec §1.9).
   */
  BETA_SERVER_PROMPT: z.string().min(1).default(
    "Отвечай на русском языке, если пользователь явно не попросил другой язык.",
  ),
  THETA_UPSTREAM_URL: optionalUrl,
  /** Comma-separated; one upstream account per key. */
  THETA_UPSTREAM_KEYS: optionalString,
  /** Theta (spec §4.7, §8.4): a request waits at most this long for an account, then 429 queue_timeout. */
  THETA_QUEUE_TIMEOUT_MS: ms(30_000),
  /** Theta: one generation runs at most this long, then generation_timeout (billed for the work done). */
  THETA_GENERATION_TIMEOUT_MS: ms(600_000),
  /** Theta: an account bound to a key is free for other keys after this long without a request. */
  THETA_IDLE_RELEASE_MS: ms(600_000),
  SEARCH_UPSTREAM_URL: optionalUrl,
  SEARCH_UPSTREAM_KEY: optionalString,
  /** Search API spoken by SEARCH_UPSTREAM_URL: SearXNG JSON (`/search?format=json`) or Brave Search. */
  SEARCH_BACKEND: z.enum(["searxng", "brave"]).default("searxng"),
  /** Hard limit on a request body in bytes (spec §8.4 leaves it open). */
  BODY_LIMIT_BYTES: z.coerce.number().int().positive().default(32 * 1024 * 1024),
  /** SSE comment heartbeat while a stream is quiet. */
  STREAM_HEARTBEAT_MS: ms(15_000),
  /** An upstream stream that sends nothing this long ends with `stream_timeout`. */
  STREAM_IDLE_TIMEOUT_MS: ms(120_000),
  /** Time allowed for the upstream to answer with headers (connect included: Deno's fetch has no connect bound). */
  UPSTREAM_HEADERS_TIMEOUT_MS: ms(120_000),
  /**
   * A non-streaming request's upstream call, from going out to the answer's last byte (its head comes with the
   * whole answer, so the headers timeout does not bound it): then 504 upstream_timeout, free. 600 s, as long as
   * the official SDKs wait. Families with a run limit of their own (gamma/eta, theta) keep theirs instead.
   */
  UPSTREAM_GENERATION_TIMEOUT_MS: ms(600_000),
  /**
   * The upstream calls' HTTP client (README "Upstream connections"): `wire`, the gateway's own keep-alive
   * HTTP/1.1 client (src/upstream/wire_client.ts); `fetch`, Deno's. An HTTP(S)_PROXY in the environment keeps
   * fetch whatever this says.
   */
  UPSTREAM_CLIENT: z.enum(["wire", "fetch"]).default("wire"),
  /**
   * In-flight upstream generation requests per process (README "Errors", capacity slots); 0 = no bound.
   * A request finding every slot busy is 429 service_capacity_saturated.
   */
  MAX_INFLIGHT_UPSTREAM: z.coerce.number().int().min(0).max(1_000_000).default(1024),
  /** The share of those slots only `service_tier: "priority"` requests may take: ceil(max × share) slots. */
  PRIORITY_SLOT_SHARE: z.coerce.number().min(0).max(1).default(0.1),
  /**
   * Gamma/eta: one run (the upstream call, from the request going out to its last byte) not finished within
   * this long is cancelled upstream and ends with `delta_run_timeout`, billed for the work done (spec §7.5,
   * §8.4: 600 s). It replaces the headers timeout on their non-streaming requests, whose head comes with the answer.
   */
  DELTA_RUN_TIMEOUT_MS: ms(600_000),
  /** Lifetime of an uploaded file (spec §8.2: 24 hours); configurable for tests. */
  FILES_TTL_MS: ms(86_400_000),
  /** One document extraction (PDF, DOCX, XLSX, PPTX) is killed after this long: 422 file_limit_exceeded. */
  FILES_EXTRACT_TIMEOUT_MS: ms(30_000),
  /** A new connection must send a complete request head within this long (slowloris bound). */
  HTTP_HEADER_TIMEOUT_MS: ms(10_000),
  /** A connection with no request in progress is closed after this long. */
  HTTP_IDLE_TIMEOUT_MS: ms(75_000),
  /**
   * `off`: plain `Deno.serve`, without the two bounds above, for a gateway behind a reverse proxy that enforces
   * them itself (nginx `client_header_timeout`, `keepalive_timeout`). It saves the per-connection server the
   * bounds need: ≈12 KB per open connection (README "Performance", idle streams).
   */
  HTTP_CONNECTION_DEADLINES: z.enum(["on", "off"]).default("on"),
  /**
   * SIGTERM/SIGINT: open streams and requests in flight may finish within this long; then each is cut with
   * service_unavailable (README "Graceful shutdown"). 0 = cut at once.
   */
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(30_000),
  /**
   * The automatic suspension rule (README "Errors", per process): more than SUSPEND_BAD_REQUESTS requests of
   * one key refused for bad input at a pace above that many per SUSPEND_WINDOW_MS suspend the key for
   * SUSPEND_FOR_MS (429 api_key_suspended). 0 = off.
   */
  SUSPEND_BAD_REQUESTS: z.coerce.number().int().min(0).max(1_000_000).default(50),
  SUSPEND_WINDOW_MS: ms(60_000),
  SUSPEND_FOR_MS: ms(600_000),
  /**
   * The gateway's own request rates, per process (README "Configuration"): sustained requests per second
   * and burst, per key (after authentication) and per client address (before it). A rate of 0 (the
   * default) or a burst of 0 turns the limit off; an unset burst is one second's worth of the rate (≥ 1).
   */
  KEY_RATE_LIMIT_RPS: rps,
  KEY_RATE_LIMIT_BURST: burst,
  IP_RATE_LIMIT_RPS: rps,
  IP_RATE_LIMIT_BURST: burst,
  /** Comma-separated CIDRs (IPv4, IPv6) of proxies whose X-Forwarded-For is believed. */
  TRUSTED_PROXIES: z.string().default("").transform((s, ctx) => {
    try {
      return parseCidrList(s);
    } catch (err) {
      ctx.addIssue({ code: "custom", message: (err as Error).message });
      return z.NEVER;
    }
  }),
  /** Log lines below this level are dropped; request lines are `info` (README "Operating the gateway"). */
  LOG_LEVEL: z.enum(LOG_LEVELS).default("info"),
  /** The key holder's dashboard (src/dashboard/): how long a sign-in lasts (12 h). */
  DASHBOARD_SESSION_TTL_MS: ms(43_200_000),
  /**
   * The dashboard's failed sign-ins allowed per minute per client address (per process): a burst of that
   * many, then one more every 60/N s; beyond, 429 dashboard_login_rate_limit with Retry-After.
   */
  DASHBOARD_LOGIN_FAILURES_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(10),
  /**
   * The gateway's address as its clients reach it (https://gw.example.com): the bot shows it with a new key
   * and, in webhook mode, registers its webhook under it (setWebhook).
   */
  PUBLIC_BASE_URL: optionalUrl,
  /** The key shop's Telegram bot (src/bot/, issue 20; spec §1.6, §5.5): unset, no bot. */
  TELEGRAM_BOT_TOKEN: z.string().regex(
    /^\d+:[A-Za-z0-9_-]+$/,
    "expected a Telegram bot token (<id>:<secret>)",
  )
    .optional(),
  /** The Bot API server (tests point it at a fake one). */
  TELEGRAM_API_ROOT: z.string().url().default("https://api.telegram.org"),
  /**
   * Set: webhook mode — Telegram posts updates to PUBLIC_BASE_URL/telegram/<a hook derived from this secret>
   * with the secret in X-Telegram-Bot-Api-Secret-Token (Telegram allows A–Z, a–z, 0–9, _ and -, up to 256);
   * unset: long polling (one process).
   */
  TELEGRAM_WEBHOOK_SECRET: z.string().regex(
    /^[A-Za-z0-9_-]{16,256}$/,
    "16 to 256 characters of A-Z, a-z, 0-9, _ and -",
  ).optional(),
  /** Comma-separated Telegram chat ids whose chats may use the bot's admin commands (/confirm, /refund, /method). */
  TELEGRAM_ADMIN_CHAT_IDS: z.string().default("").transform((s, ctx) => {
    const ids = s.split(",").map((p) => p.trim()).filter((p) => p !== "");
    if (ids.some((id) => !/^-?\d{1,20}$/.test(id) || !Number.isSafeInteger(Number(id)))) {
      ctx.addIssue({ code: "custom", message: "expected comma-separated Telegram chat ids" });
      return z.NEVER;
    }
    return ids.map(Number);
  }),
  /** How often the bot looks for keys whose balance fell below their alert threshold, ms. */
  BOT_ALERT_CHECK_MS: ms(30_000),
  /** Commands (messages and button presses) one chat may send per minute; beyond, a polite refusal. */
  BOT_COMMANDS_PER_MINUTE: z.coerce.number().int().min(1).max(10_000).default(20),
  /** Balance of the demo key printed in demo mode, in USD. */
  DEMO_BALANCE_USD: z.string().regex(/^\d+(\.\d{1,12})?$/).default("1.00"),
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
  const result = ConfigSchema.safeParse(cleaned);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new Error(`invalid configuration:\n${lines.join("\n")}`);
  }
  return result.data;
}

/** Demo mode: no upstream configured at all, every family served by the built-in simulator. */
export function isDemoMode(config: Config): boolean {
  return UPSTREAM_URL_VARS.every((k) => config[k] === undefined);
}
