/** What a handler gets for one request, from the server (src/http/): the request, its id and envelope. */
import type { Account } from "../accounts/accounts.ts";
import type { Envelope } from "../errors/render.ts";
import type { RequestTrace } from "../telemetry/request_trace.ts";

export interface RouteContext {
  req: Request;
  url: URL;
  requestId: string;
  params: Record<string, string>;
  envelope: Envelope;
  /** Headers every response to this request carries, error or not (e.g. x-request-id for alpha, spec §2.5). */
  headers: Record<string, string>;
  /** What the request did, for its log line and metrics; the layers fill it in as it passes. */
  trace: RequestTrace;
}

/** The context of a route that requires a key: the server authenticated it before the handler ran. */
export interface KeyContext extends RouteContext {
  account: Account;
}
