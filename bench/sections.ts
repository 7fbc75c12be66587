/**
 * `bench/RESULTS.md` holds the bench's own tables, its theta queue, shared-store and side-by-side sections
 * (bench/theta_queue.ts, bench/shared_stores.ts, bench/side_by_side.ts, each of which can run alone) and the
 * last soak run (`deno task soak`): each script replaces only its own `## ` section, so no run erases another's
 * record. What the figures mean and the findings behind them are in docs/performance.md.
 */

/** The `## heading` section of `doc` (heading line to the next `## ` or the end), or "" when absent. */
export function sectionOf(doc: string, heading: string): string {
  const start = doc.indexOf(`\n## ${heading}`);
  if (start < 0) return "";
  const next = doc.indexOf("\n## ", start + 1);
  return doc.slice(start + 1, next < 0 ? doc.length : next + 1).trimEnd() + "\n";
}

/** `doc` with its `## heading` section replaced by `section` (appended when absent). */
export function withSection(doc: string, heading: string, section: string): string {
  const old = sectionOf(doc, heading);
  const body = section.trimEnd() + "\n";
  if (!old) return doc.trimEnd() + "\n\n" + body;
  return doc.replace(old, body);
}

export const SOAK_HEADING = "Soak (`deno task soak`)";
/** The sections bench/main.ts writes itself, after the table (bench/report.ts document). */
export const CPU_HEADING = "CPU use per run (cores; 2 available)";
export const NOTES_HEADING = "Notes";
/** Written by bench/shared_stores.ts (the last part of `deno task bench`, or alone). */
export const SHARED_HEADING = "Shared stores: KV file vs Postgres vs WORKERS=2";
/** Written by bench/theta_queue.ts (part of `deno task bench`, or alone). */
export const THETA_HEADING = "Theta account queue: KV vs Postgres";
/** Written by bench/side_by_side.ts (part of `deno task bench`, or alone). */
export const SIDE_HEADING = "Side by side under wrk: mock, bare Deno proxy, gateway";
/** Written by bench/idempotency_bench.ts (part of `deno task bench`, or alone). */
export const IDEMPOTENCY_HEADING = "Idempotency-Key: what a key costs";
