/** What a handler gets for one request, from the server (src/http/): the request, its id and envelope. */
import type { Account } from "../accounts/accounts.ts";
import type { Envelope } from "../errors/render.ts";

export interface RouteContext {
  req: Request;
  url: URL;
  requestId: string;
  params: Record<string, string>;
  envelope: Envelope;
  /** The key's account when the route requires a key (the server authenticated it before the handler). */
  account?: Account;
  /** Headers every response to this request carries, error or not (e.g. x-request-id for alpha, §2.5). */
  headers: Record<string, string>;
}
