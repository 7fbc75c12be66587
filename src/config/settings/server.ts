/** Server settings: the listening socket, connection bounds, shutdown, operator API, request admission. */
import { z } from "zod";
import { burst, ms, rps } from "./fields.ts";
import { parseCidrList } from "../../util/ip.ts";

export const server = {
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
