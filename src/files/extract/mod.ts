/**
 * Extraction entry point. Documents (PDF, DOCX, XLSX, PPTX) are extracted off the gateway's event
 * loop, in the extraction pool (pool.ts: separate processes with time and memory limits, a bounded
 * queue). Text formats are decoded right here: strict UTF-8 and line splitting are linear in a file of
 * at most 10 MiB (~25 ms measured) and cannot amplify, so they need neither a process nor a queue
 * slot. Errors are the same GatewayErrors as before (file_limit_exceeded, file_unreadable), plus 429
 * service_capacity_saturated when the documents' queue is full.
 */
import type { FileSection } from "../../store/store.ts";
import type { FileKind } from "../limits.ts";
import { ExtractionPool, type ExtractOptions, type PoolOptions } from "./pool.ts";
import { SectionSink } from "./sections.ts";
import { extractText } from "./text.ts";

export type { ExtractOptions, PoolOptions };

let pool: ExtractionPool | undefined;
let pending: PoolOptions = {};

/** The shared pool, created on first use with `configureExtraction`'s options (or the defaults). */
export function extractionPool(): ExtractionPool {
  return pool ??= new ExtractionPool(pending);
}

/** Sets the pool's options (e.g. `{ timeoutMs }` from FILES_EXTRACT_TIMEOUT_MS); idle processes are replaced. */
export function configureExtraction(opts: PoolOptions): void {
  if (JSON.stringify(opts) === JSON.stringify(pending)) return; // several gateways in one test process
  pending = opts;
  pool?.close();
  pool = undefined;
}

/** Back to the event loop, so work before and after does not add up to one long block. */
const yieldToLoop = () => new Promise<void>((r) => setTimeout(r, 0));

export async function extractSections(
  fileId: string,
  kind: FileKind,
  bytes: Uint8Array,
  opts: ExtractOptions = {},
): Promise<FileSection[]> {
  if (kind === "pdf" || kind === "docx" || kind === "xlsx" || kind === "pptx") {
    const sections = await extractionPool().extract(fileId, kind, bytes, opts);
    await yieldToLoop();
    return sections;
  }
  await yieldToLoop(); // the upload's multipart parse has just run
  const sink = new SectionSink(fileId);
  extractText(bytes, kind, sink);
  return sink.sections;
}
