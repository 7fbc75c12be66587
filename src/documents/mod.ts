/**
 * Extraction entry point. Documents (PDF, DOCX, XLSX, PPTX) are extracted off the gateway's event
 * loop, in the gateway's extraction pool (pool.ts: separate processes with time and memory limits, a
 * bounded queue). Text formats are decoded right here: strict UTF-8 and line splitting are linear in a file
 * of at most 10 MiB (~25 ms measured) and cannot amplify, so they need neither a process nor a queue
 * slot. Errors are the same GatewayErrors as before (file_limit_exceeded, file_unreadable), plus 429
 * service_capacity_saturated when the documents' queue is full.
 */
import type { FileSection } from "../store/store.ts";
import { Logger } from "../util/log.ts";
import type { FileKind } from "./limits.ts";
import { ExtractionPool, type ExtractOptions, type PoolOptions } from "./pool.ts";
import { SectionSink } from "./sections.ts";
import { extractText } from "./text.ts";

export type { ExtractOptions, PoolOptions };

/** Back to the event loop, so work before and after does not add up to one long block. */
const yieldToLoop = () => new Promise<void>((r) => setTimeout(r, 0));

/**
 * One gateway's document extraction (src/gateway.ts builds it from FILES_EXTRACT_TIMEOUT_MS and closes it).
 * Its pool is made on first use, so a gateway that never sees a document starts no process. It is the App's
 * DocumentExtractor (src/app.ts) by shape: this library sits below app.ts and does not import it.
 */
export class DocumentExtraction {
  #pool: ExtractionPool | undefined;
  /** Pools replaced by `configure`, being ended: `close` waits for them too. */
  readonly #retiring: Promise<void>[] = [];

  constructor(private options: PoolOptions = {}, private readonly log: Logger = new Logger("error")) {}

  /** The pool, created on first use with this extraction's options. */
  get pool(): ExtractionPool {
    return this.#pool ??= new ExtractionPool(this.options, this.log);
  }

  /** Other pool options from now on (tests: tighter limits); idle processes are replaced. */
  configure(options: PoolOptions): void {
    this.options = options;
    if (this.#pool) this.#retiring.push(this.#pool.close());
    this.#pool = undefined;
  }

  async sections(
    fileId: string,
    kind: FileKind,
    bytes: Uint8Array,
    opts: ExtractOptions = {},
  ): Promise<FileSection[]> {
    if (kind === "pdf" || kind === "docx" || kind === "xlsx" || kind === "pptx") {
      const sections = await this.pool.extract(fileId, kind, bytes, opts);
      await yieldToLoop();
      return sections;
    }
    await yieldToLoop(); // the upload's multipart parse has just run
    const sink = new SectionSink(fileId);
    extractText(bytes, kind, sink);
    return sink.sections;
  }

  /** Ends the extraction processes (the gateway's close, after its requests); resolves once they exited. */
  async close(): Promise<void> {
    await Promise.all([...this.#retiring.splice(0), this.#pool?.close()]);
  }
}
