/** The body of a dashboard form, bounded before it is read. */
import { readBodyBytes } from "../request/body.ts";

/** A form holds a key, a CSRF token and a flag: 4 KiB is plenty (413 request_body_too_large beyond). */
export const FORM_LIMIT_BYTES = 4096;

/**
 * The fields of an `application/x-www-form-urlencoded` body (what an HTML form posts). Any other body has no
 * fields, so its CSRF check refuses it.
 */
export async function readForm(req: Request): Promise<URLSearchParams> {
  const bytes = await readBodyBytes(req, FORM_LIMIT_BYTES);
  const type = (req.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded") return new URLSearchParams();
  return new URLSearchParams(new TextDecoder().decode(bytes));
}
