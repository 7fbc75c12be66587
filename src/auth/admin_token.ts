/** The operator API's token (docs/operator-guide.md "Operator API and CLI"): `Authorization: Bearer <ADMIN_TOKEN>`, matched exactly. */
import { timingSafeEqual } from "../accounts/api_key.ts";
import { GatewayError } from "../errors/gateway_error.ts";
import { bearerToken } from "./authenticate.ts";

export function requireAdmin(token: string | undefined, headers: Headers): void {
  const presented = bearerToken(headers.get("authorization"));
  if (!token || presented === undefined || !timingSafeEqual(presented, token)) {
    throw new GatewayError("admin_unauthorized");
  }
}
