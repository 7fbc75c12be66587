/**
 * `bench/RESULTS.md` holds the bench's own tables, its theta queue and shared-store sections
 * (bench/theta_queue.ts, bench/shared_stores.ts, each of which can run alone) and the last soak run
 * (`deno task soak`): each script replaces only its own `## ` section, so no run erases another's record.
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
/** Recorded by hand from `deno run -A bench/stream_hop.ts` (its figures are printed, not written). */
export const STREAM_HOP_HEADING = "One JavaScript stream hop (issue 18: the runtime cost in the way)";
/** Recorded by hand from bench/json_floor.ts and the JSON load's profiles. */
export const JSON_PATH_HEADING = "JSON path: the gateway's own work (issue 18)";
/** Recorded by hand from bench/idle_hold.ts and bench/heap_per_stream.ts. */
export const IDLE_MEMORY_HEADING = "Idle streams: what one holds (issue 18)";
/** Recorded by hand from timelines marked inside a patched gateway, strace and the side by side. */
export const STREAM_TTFB_HEADING = "Stream TTFB at c=1: where the time goes (issue 18)";
/** Recorded by hand from bench/cut_watch_bench.ts, bench/busy_with_open_streams.ts and bench/ab.ts. */
export const CUT_WATCH_HEADING =
  "Registrations that come and go: the shutdown's cut, the ticker, the ledger (issue 18)";
/** Recorded by hand from `AB_LOAD=json1 bench/ab.ts` (the bare proxy beside the gateway) and V8's GC trace. */
export const TAIL_HEADING = "The c=1 p99: the runtime's own tail (issue 18)";
/** Sections recorded by hand: `deno task bench` keeps them as they are. */
export const HAND_RECORDED_HEADINGS = [
  STREAM_HOP_HEADING,
  JSON_PATH_HEADING,
  CUT_WATCH_HEADING,
  STREAM_TTFB_HEADING,
  TAIL_HEADING,
  IDLE_MEMORY_HEADING,
];
/** The sections bench/main.ts writes itself, after the table (bench/report.ts document). */
export const CPU_HEADING = "CPU use per run (cores; 2 available)";
export const NOTES_HEADING = "Notes";
/** Written by bench/shared_stores.ts (the last part of `deno task bench`, or alone). */
export const SHARED_HEADING = "Shared stores: KV file vs Postgres vs WORKERS=2 (issue 15)";
/** Written by bench/theta_queue.ts (part of `deno task bench`, or alone). */
export const THETA_HEADING = "Theta account queue: KV vs Postgres (issue 16)";
/** Written by bench/side_by_side.ts (part of `deno task bench`, or alone). */
export const SIDE_HEADING = "Side by side under wrk: mock, bare Deno proxy, gateway (issue 18)";
/** The side-by-side run recorded before issue 18's work (BENCH_SIDE_BASELINE=1): later runs keep it. */
export const SIDE_BASELINE_HEADING = "Side by side under wrk: the baseline before issue 18's work";
