/** What a handler gets for one request, from the server (src/http/): the request, its id and envelope. */
import type { Account } from "../accounts/accounts.ts";
import type { Session } from "../auth/session.ts";
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

/**
 * The context of a dashboard route (src/dashboard/): the server read the session cookie — never a key header —
 * and who the client is before the handler ran.
 */
export interface SessionContext extends RouteContext {
  /** The signed-in key's session, when the `gw_session` cookie names a live one. */
  session: Session | undefined;
  /** The client's address as the request rates see it (src/http/client_address.ts): the sign-in limit's id. */
  client: string;
  /** The request came over HTTPS (directly, or through a trusted proxy): the dashboard's cookies are Secure. */
  https: boolean;
}
