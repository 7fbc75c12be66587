/**
 * The database as operators see it: scheme, user, host, port, database and schema — never the password. Kept
 * apart from the Postgres client, so naming a store loads no client code.
 */
export function describeDatabase(url: string): string {
  try {
    const u = new URL(url);
    const user = u.username ? `${decodeURIComponent(u.username)}@` : "";
    const schema = u.searchParams.get("search_path");
    return `${u.protocol}//${user}${u.host}${u.pathname}${schema ? ` (schema ${schema})` : ""}`;
  } catch {
    return "(unparsable postgres URL)";
  }
}
