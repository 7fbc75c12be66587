/** Upstreams settings: the upstream providers and the calls to them. */
import { z } from "zod";
import { ms, optionalString, optionalUrl } from "./fields.ts";

export const upstreams = {
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
