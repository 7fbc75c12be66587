import assert from "node:assert/strict";
import { sessionOf } from "./session.ts";

const meta = (sid: string) => ({
  metadata: { user_id: JSON.stringify({ device_id: "d", session_id: sid }) },
});

Deno.test("theta session rule: x-session-id, then Claude Code's header, Codex's, metadata.user_id, else the key", () => {
  const all = new Headers({
    "x-session-id": "own",
    "x-claude-code-session-id": "cc",
    "session-id": "codex",
  });
  assert.equal(sessionOf(all, meta("m"), "key_a"), "x-session-id:own");
  all.delete("x-session-id");
  assert.equal(sessionOf(all, meta("m"), "key_a"), "x-claude-code-session-id:cc");
  all.delete("x-claude-code-session-id");
  assert.equal(sessionOf(all, meta("m"), "key_a"), "session-id:codex");
  all.delete("session-id");
  assert.equal(sessionOf(all, meta("m"), "key_a"), "metadata:m");
  assert.equal(sessionOf(all, {}, "key_a"), "key:key_a");
  // The same id from two sources is two sessions; an empty header does not count.
  assert.notEqual(
    sessionOf(new Headers({ "session-id": "x" }), {}, "k"),
    sessionOf(new Headers(), meta("x"), "k"),
  );
  assert.equal(sessionOf(new Headers({ "x-session-id": "  " }), {}, "k"), "key:k");
});

Deno.test("theta session rule: metadata.user_id that is not a JSON string with a session_id is no session; ids are bounded", () => {
  for (
    const body of [
      { metadata: { user_id: "plain-user" } },
      { metadata: { user_id: "{not json" } },
      { metadata: { user_id: JSON.stringify({ session_id: 7 }) } },
      { metadata: { user_id: JSON.stringify({ session_id: "" }) } },
      { metadata: "x" },
      { metadata: { user_id: "{" + " ".repeat(5000) + "}" } },
    ]
  ) {
    assert.equal(sessionOf(new Headers(), body, "key_a"), "key:key_a", JSON.stringify(body).slice(0, 60));
  }
  assert.equal(
    sessionOf(new Headers({ "x-session-id": "s".repeat(500) }), {}, "k"),
    `x-session-id:${"s".repeat(200)}`,
  );
});
