/**
 * Everything that differs between families, behind one interface (docs/architecture.md "Where things live"). The engine calls a policy
 * in one fixed order and names no family:
 *   admitKey → answerHeaders → rawBody → (file translation if `translatesFiles`) → request → admitRequest
 *   (async, with the store, before the hold) → dispatch → upstream call (errors through `codes`) →
 *   beforeContent (before the 200) or answered / answerFailed (JSON) → inspect on every streamed event → the
 *   request session's `settled` (from `admitRequest`).
 * The lease from `dispatch` is held until the request settles, however it ends.
 */
import type { Account } from "../accounts/accounts.ts";
import type { CapCodes } from "../accounts/caps.ts";
import type { ModelEntry } from "../catalog/models.ts";
import type { Config } from "../config/env.ts";
import type { ErrorCode } from "../errors/codes.ts";
import type { GatewayError } from "../errors/gateway_error.ts";
import type { IREvent, IRStopReason } from "../ir/events.ts";
import type { IRRequest } from "../ir/request.ts";
import type { IRResponse } from "../ir/response.ts";
import type { ProtocolName } from "../protocols/codec.ts";
import type { Store } from "../store/store.ts";
import type { KeyRecord, UsageRow } from "../store/types.ts";
import type { UpstreamTarget } from "../upstream/targets.ts";

/** The family's error codes (spec §7.3–spec §7.6) for what every family can meet. */
export interface FamilyCodes {
  /** Upstream unreachable, or 5xx before the first byte. */
  unavailable: ErrorCode;
  /** An upstream 500 when the family has its own code for it (gamma/eta); otherwise `unavailable`. */
  serverError?: ErrorCode;
  /** An in-band upstream error after the stream started. */
  inStream: ErrorCode;
  /** The provider answered 429. */
  rateLimited: ErrorCode;
  /** No response head within the headers timeout (spec §7.2: 504). */
  timedOut: ErrorCode;
  /** A 200 its protocol does not allow (not JSON, not SSE on a stream request). */
  invalidResponse: ErrorCode;
  /**
   * The upstream stream broke off after the 200 (connection cut, malformed frame, body ended before the
   * answer's end) when the family has its own code for it (gamma/eta); otherwise `stream_service_error`.
   */
  streamBroken?: ErrorCode;
  /** The key's own caps (spec §7.3, §7.5). */
  caps: CapCodes;
}

/** The model name an upstream call carries, and the top-level fields the id implies (gamma/eta effort, tier). */
export interface UpstreamModel {
  model: string;
  /** Merged over the upstream body, in the family's upstream protocol. */
  fields?: Record<string, unknown>;
}

/** What the family's answer checks know of the upstream call (`beforeContent`, `inspect`, `answered`). */
export interface UpstreamCallFacts {
  /** The model name the upstream request carried (`upstreamModel`, else the gateway's id). */
  upstreamModel: string;
  /** The client's output budget, sent upstream as its own; undefined when the client gave none. */
  maxOutputTokens: number | undefined;
}

/**
 * A family's bound on one upstream run (gamma/eta, spec §8.4): from the request going out to the answer's
 * last byte. Past it the upstream request is aborted and the request ends with `code` — an HTTP error, or
 * the stream's error frame — billed for the work done (docs/billing.md).
 */
export interface RunLimit {
  ms: number;
  code: ErrorCode;
}

/** The upstream account one call runs on, from `dispatch` until settlement. */
export interface UpstreamLease {
  key: string;
  release(): void;
  /** The upstream model to ask instead of the requested one (theta's fallback, decided at the grant). */
  model?: string;
  /** Headers of the answer, errors after the grant included (theta: queue wait, the model serving). */
  headers?: Record<string, string>;
  /**
   * The upstream refused the call for capacity (429) before anything was answered: another model to try on
   * the same account, with the headers that now apply; undefined to answer the refusal as it is. May throw
   * the family's error instead (theta: provider_at_capacity when no model is left).
   */
  refused?(
    retryAfterSeconds: number | undefined,
  ): { model: string; headers: Record<string, string> } | undefined;
}

/** What a family's `dispatch` knows of the request it finds an account for. */
export interface DispatchRequest {
  store: Store;
  config: Config;
  keyId: string;
  requestId: string;
  /** The client's request headers and body (theta's session rule). */
  headers: Headers;
  body: Record<string, unknown>;
  model: ModelEntry;
  ir: IRRequest;
  inputTokens: number;
  outputBudget: number;
  /** The exchange's signal, aborted when the client leaves (request/client_watch.ts) or the shutdown cuts the
   *  request: a queued request quits the queue. */
  signal: AbortSignal;
  now(): number;
  /** The request waited `ms` for its upstream account (the queue-wait metric). */
  queued(ms: number): void;
}

/** The family's upstream: its native protocol and the configuration variables naming it. */
export interface FamilyUpstream {
  protocol: ProtocolName;
  urlVar: "ALPHA_UPSTREAM_URL" | "BETA_UPSTREAM_URL" | "DELTA_UPSTREAM_URL" | "THETA_UPSTREAM_URL";
  /** Comma-separated keys, one upstream account each. */
  keysVar: "ALPHA_UPSTREAM_KEY" | "BETA_UPSTREAM_KEY" | "DELTA_UPSTREAM_KEY" | "THETA_UPSTREAM_KEYS";
  /** Accounts the demo simulator stands in for. */
  simulatorAccounts: number;
}

/** What `admitRequest` sees: the decoded request, its key and the state shared across requests. */
export interface RequestAdmission {
  store: Store;
  config: Config;
  /** The key's (account's) id. */
  keyId: string;
  /** The key's record as this process knows it (theta's request limits). */
  key: KeyRecord;
  requestId: string;
  ir: IRRequest;
  now(): number;
}

/** How a settled request's answer ended; collected by the engine only for a request with a session. */
export interface AnswerSummary {
  /** The usage row's status: "ok" is a complete answer; "error" and "cancelled" are not. */
  status: UsageRow["status"];
  /** The answer's stop reason; undefined when it never finished. */
  stopReason: IRStopReason | undefined;
  /** The ids of the client tool calls the answer made, in order. */
  toolCallIds: string[];
}

/** A family's state for one admitted request, from `admitRequest` until it settles. */
export interface RequestSession {
  /** Called once, after the request settled however it ended (never for one refused before the hold). */
  settled(answer: AnswerSummary): void;
}

export interface FamilyPolicy {
  readonly upstream: FamilyUpstream;
  readonly codes: FamilyCodes;
  /** Key states that matter only to this family (theta: paused, spec §3.2). Throws to refuse. */
  admitKey(account: Account): void;
  /** Headers every answer of the family carries on this surface, errors included. */
  answerHeaders(surface: ProtocolName, requestId: string): Record<string, string>;
  /** Field rules on the client's raw body; the same object back when nothing changed. */
  rawBody(model: ModelEntry, surface: ProtocolName, body: Record<string, unknown>): Record<string, unknown>;
  /**
   * Rules on the decoded request, the same on every surface (tool limits, image rules): throws to refuse,
   * and may drop what the family ignores so no translation sends it upstream.
   */
  request(model: ModelEntry, ir: IRRequest): void;
  /**
   * An async check with the store after every other local rule and before the hold (gamma/eta's tool loops):
   * throws to refuse, with nothing held or sent. A returned session hears how the answer ended. A family
   * without it takes no store round trip.
   */
  admitRequest?(a: RequestAdmission): Promise<RequestSession | undefined>;
  /**
   * Operator text put before the client's own system prompt (beta's server prompt, spec §2.1), or undefined.
   * The engine adds it on the translated request, or on a native body the surface's codec can prefix.
   */
  serverPrompt?(model: ModelEntry, config: Config): string | undefined;
  /**
   * How many provider-billed searches the request may make, so their fee is held too (beta: the web search
   * tool's max_uses). `ir` is absent where the body is only quoted (count_tokens).
   */
  searchBudget?(surface: ProtocolName, body: Record<string, unknown>, ir?: IRRequest): number;
  /** What the upstream is asked for this id; without it the upstream gets the gateway's own id. */
  upstreamModel?(model: ModelEntry): UpstreamModel;
  /** Whether `input_file` references are translated into document blocks (alpha, spec §4.2). */
  readonly translatesFiles: boolean;
  /** The upstream account for one call (theta: the account queue, src/families/theta/dispatch.ts). */
  dispatch(target: UpstreamTarget, req: DispatchRequest): Promise<UpstreamLease>;
  /** Looks at every streamed event before it is encoded; an error ends the stream with it. */
  inspect(ev: IREvent, call: UpstreamCallFacts): GatewayError | undefined;
  /**
   * Checks the upstream's stream events up to its first content event, before the 200 goes out (a
   * structured refusal, a model mismatch): an error becomes an ordinary HTTP error and costs nothing.
   * `"pass"` ends the check early (the 200 goes out after this event). A family without it gets its 200 at once.
   */
  beforeContent?(ev: IREvent, call: UpstreamCallFacts): GatewayError | "pass" | undefined;
  /** The same check on a whole JSON answer before it goes out: an error replaces it and costs nothing. */
  answered?(res: IRResponse, call: UpstreamCallFacts): GatewayError | undefined;
  /**
   * A whole JSON answer the provider ran but cut for a reason of its own (gamma/eta's output limit for the
   * whole loop, spec §7.5): the error replaces it and the provider's usage is billed.
   */
  answerFailed?(res: IRResponse, call: UpstreamCallFacts): GatewayError | undefined;
  /** The family's bound on one upstream run; without it only the headers and idle timeouts apply. */
  runLimit?(config: Config): RunLimit;
}

/** The common cap codes (spec §7.3). */
export const COMMON_CAP_CODES: CapCodes = {
  hourly_reserve_limit: "hourly_reserve_limit",
  daily_reserve_limit: "daily_reserve_limit",
  hourly_spend_limit: "hourly_spend_limit",
  daily_spend_limit: "daily_spend_limit",
};

/** A policy with no family behaviour beyond its codes: the first key, no rules, nothing to inspect. */
export function plainPolicy(
  upstream: FamilyUpstream,
  codes: FamilyCodes,
  overrides: Partial<FamilyPolicy> = {},
): FamilyPolicy {
  return {
    upstream,
    codes,
    admitKey() {},
    answerHeaders: () => ({}),
    rawBody: (_model, _surface, body) => body,
    request() {},
    translatesFiles: false,
    dispatch: (target) => Promise.resolve({ key: target.keys[0]!, release() {} }),
    inspect: () => undefined,
    ...overrides,
  };
}
