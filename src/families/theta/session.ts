/**
 * Which client session a theta request belongs to (docs/families/theta.md, the session rule): the first of
 * the header `x-session-id` (any client), `x-claude-code-session-id` (Claude Code), `session-id` (Codex CLI),
 * the `session_id` inside a Messages `metadata.user_id` JSON string (Claude Code's body), or else the key
 * itself (../shared/docs/client-request-shapes.md). Bounded: an id longer than 200 characters is cut.
 */

const HEADERS = ["x-session-id", "x-claude-code-session-id", "session-id"] as const;
const MAX_LENGTH = 200;

export function sessionOf(headers: Headers, body: Record<string, unknown>, keyId: string): string {
  for (const name of HEADERS) {
    const v = headers.get(name)?.trim();
    if (v) return `${name}:${v.slice(0, MAX_LENGTH)}`;
  }
  const fromMetadata = metadataSession(body.metadata);
  return fromMetadata ? `metadata:${fromMetadata.slice(0, MAX_LENGTH)}` : `key:${keyId}`;
}

/** `metadata.user_id` is a JSON string holding `session_id` (Claude Code); anything else is not a session. */
function metadataSession(metadata: unknown): string | undefined {
  if (typeof metadata !== "object" || metadata === null) return undefined;
  const userId = (metadata as Record<string, unknown>).user_id;
  if (typeof userId !== "string" || userId.length > 4096 || !userId.startsWith("{")) return undefined;
  try {
    const sid = (JSON.parse(userId) as Record<string, unknown>).session_id;
    return typeof sid === "string" && sid !== "" ? sid : undefined;
  } catch {
    return undefined;
  }
}
