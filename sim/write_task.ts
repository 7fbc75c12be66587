/**
 * The `write` directive: a two-turn file-writing task for coding agents (Claude Code, Codex CLI).
 *
 * `[[sim:write=<base64url of JSON {"path": "...", "content": "..."}>]]` in the last user turn makes the
 * simulator answer with a call of the request's file-writing tool, with arguments that write `content` to
 * `path`:
 *
 * - `Write` (Claude Code): `{"file_path": path, "content": content}`;
 * - `exec_command` (Codex CLI): `{"cmd": "printf '%s' '<content>' > '<path>'"}`, both single-quoted for a
 *   POSIX shell (a `'` inside becomes `'\''`), so nothing in them is expanded.
 *
 * Once the tool result comes back the directive is no longer in the last user turn and the ordinary
 * tool-result answer follows. Pure: imports nothing but types.
 */

export interface WriteTask {
  path: string;
  content: string;
}

/** Tool names the simulator knows how to drive, in order of preference. */
export const WRITE_TOOLS = ["Write", "exec_command"] as const;
export type WriteTool = typeof WRITE_TOOLS[number];

function base64UrlDecode(s: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9_-]*={0,2}$/.test(s)) return undefined;
  let b = s.replace(/=+$/, "").replace(/-/g, "+").replace(/_/g, "/");
  if (b.length % 4 === 1) return undefined;
  while (b.length % 4) b += "=";
  try {
    return Uint8Array.from(atob(b), (c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
}

function base64UrlEncode(bytes: Uint8Array): string {
  let bin = "";
  for (const x of bytes) bin += String.fromCharCode(x);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** The directive value for a task (what a test or script puts after `write=`). */
export function encodeWriteTask(task: WriteTask): string {
  return base64UrlEncode(
    new TextEncoder().encode(JSON.stringify({ path: task.path, content: task.content })),
  );
}

/** The whole directive, `[[sim:write=…]]`. */
export function writeDirective(task: WriteTask): string {
  return `[[sim:write=${encodeWriteTask(task)}]]`;
}

/** Decodes a directive value; undefined when it is not base64url of `{path: non-empty string, content: string}`. */
export function parseWriteTask(value: string | undefined): WriteTask | undefined {
  if (!value) return undefined;
  const bytes = base64UrlDecode(value);
  if (!bytes) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    return undefined;
  }
  if (v === null || typeof v !== "object" || Array.isArray(v)) return undefined;
  const { path, content } = v as Record<string, unknown>;
  if (typeof path !== "string" || !path || typeof content !== "string") return undefined;
  return { path, content };
}

/** Single-quotes `s` for a POSIX shell: nothing inside is expanded. */
export function shellQuote(s: string): string {
  return "'" + s.replace(/'/g, "'\\''") + "'";
}

/** The shell command that writes `task.content` to `task.path` exactly (no trailing newline added). */
export function writeCommand(task: WriteTask): string {
  return `printf '%s' ${shellQuote(task.content)} > ${shellQuote(task.path)}`;
}

/** The arguments (JSON text) of a call of `tool` that performs `task`. */
export function writeArgs(tool: WriteTool, task: WriteTask): string {
  return tool === "Write"
    ? JSON.stringify({ file_path: task.path, content: task.content })
    : JSON.stringify({ cmd: writeCommand(task) });
}

/** The file-writing tool to call among the offered `names`, honouring a named tool choice. */
export function pickWriteTool(names: readonly string[], named?: string): WriteTool | undefined {
  for (const t of WRITE_TOOLS) {
    if (names.includes(t) && (named === undefined || named === t)) return t;
  }
  return undefined;
}
