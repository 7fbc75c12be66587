/**
 * Responses `namespace` tools: a named group of function tools, `{type:"namespace", name, description,
 * tools:[functions…]}`, which Codex sends by default (client-request-shapes §2). Chat Completions and
 * Messages have only flat function tools, so each member travels upstream as one flat tool named
 * `<namespace>__<member>`; a call of it returns to the Responses client as a `function_call` item with the
 * member's own `name` and a `namespace` field, which is what Codex dispatches on. The flat name is mapped
 * back through the request's tools (`IRTool.member`), never parsed, so a `__` inside a name is harmless.
 */
import type { IRTool } from "../../ir/request.ts";

const SEPARATOR = "__";

/** The flat name a member travels under on every protocol without namespaces. */
export function flatToolName(namespace: string, name: string): string {
  return namespace + SEPARATOR + name;
}

/** How the client names a call: a namespace member by its own name plus its namespace, others as they are. */
export function clientCallName(tools: readonly IRTool[], flat: string): { name: string; namespace?: string } {
  for (const t of tools) {
    if (t.name === flat && t.member) return { name: t.member.name, namespace: t.member.namespace };
  }
  return { name: flat };
}
