/**
 * The extraction pool: every document (uploads and /v1/alpha/fetch PDFs) is extracted outside the
 * gateway's event loop, in one of `workers` long-lived extraction processes (runner_process.ts), or —
 * when the gateway has no `--allow-run` — in a worker per job (runner_worker.ts). At most `workers`
 * documents are extracted at once and at most `queue` wait; one more is refused at once with 429
 * service_capacity_saturated (Retry-After 1), so concurrent uploads cannot pile up unbounded work.
 * Each job runs under a time limit and a memory limit (runner.ts); a process that grew large is
 * replaced after its job, so garbage of one document never counts against the next.
 */
import { GatewayError } from "../errors/gateway_error.ts";
import type { FileSection } from "../store/store.ts";
import { Logger } from "../util/log.ts";
import { FILE_LIMITS, type FileKind } from "./limits.ts";
import type { RunLimits, Runner } from "./runner.ts";
import { canSpawn, ProcessRunner } from "./runner_process.ts";
import { WorkerRunner } from "./runner_worker.ts";

export interface PoolOptions {
  /** "auto": processes when allowed, else workers. */
  mode?: "auto" | "process" | "worker";
  workers?: number;
  queue?: number;
  /** Time limit of one extraction (env FILES_EXTRACT_TIMEOUT_MS once wired; default 30 s). */
  timeoutMs?: number;
  /** Resident-memory limit of one extraction process (or RSS growth of the gateway for a worker). */
  memoryBytes?: number;
  /** V8 heap limit of an extraction process (--max-old-space-size). */
  heapMiB?: number;
  sampleMs?: number;
  /** A process whose RSS after a job is above this is replaced. */
  recycleBytes?: number;
  /** A process is replaced after this many jobs. */
  maxJobs?: number;
}

export interface ExtractOptions {
  timeoutMs?: number;
  /** The caller gives up `bytes` (a worker may then take the buffer instead of a copy). */
  transfer?: boolean;
}

export class ExtractionPool {
  readonly mode: "process" | "worker";
  readonly options: Required<Omit<PoolOptions, "mode">>;
  #idle: Runner[] = [];
  #running = 0;
  #queue: (() => void)[] = [];
  /** Runners being ended (recycled or closed): `close` waits for them. */
  readonly #closing = new Set<Promise<void>>();

  /** `log`: where extraction failures go (the gateway's logger). */
  constructor(opts: PoolOptions = {}, private readonly log: Logger = new Logger("error")) {
    const mode = opts.mode ?? "auto";
    this.mode = mode === "auto" ? (canSpawn() ? "process" : "worker") : mode;
    this.options = {
      workers: opts.workers ?? FILE_LIMITS.extractWorkers,
      queue: opts.queue ?? FILE_LIMITS.extractQueue,
      timeoutMs: opts.timeoutMs ?? FILE_LIMITS.extractTimeoutMs,
      memoryBytes: opts.memoryBytes ?? FILE_LIMITS.extractMemoryBytes,
      heapMiB: opts.heapMiB ?? FILE_LIMITS.extractHeapMiB,
      sampleMs: opts.sampleMs ?? 20,
      recycleBytes: opts.recycleBytes ?? FILE_LIMITS.extractRecycleBytes,
      maxJobs: opts.maxJobs ?? 200,
    };
  }

  /** Documents being extracted and waiting. */
  get load(): { running: number; queued: number } {
    return { running: this.#running, queued: this.#queue.length };
  }

  async extract(
    fileId: string,
    kind: FileKind,
    bytes: Uint8Array,
    opts: ExtractOptions = {},
  ): Promise<FileSection[]> {
    await this.#admit();
    try {
      let runner = this.#idle.pop();
      while (runner && !runner.alive) runner = this.#idle.pop(); // died while idle
      runner ??= this.#spawn();
      const limits: RunLimits = {
        timeoutMs: opts.timeoutMs ?? this.options.timeoutMs,
        memoryBytes: this.options.memoryBytes,
        sampleMs: this.options.sampleMs,
      };
      try {
        return await runner.extract({ fileId, kind, bytes, transfer: opts.transfer ?? false }, limits);
      } finally {
        const keep = runner.alive && runner.rssBytes <= this.options.recycleBytes &&
          runner.jobs < this.options.maxJobs;
        if (keep) this.#idle.push(runner);
        else this.#end(runner);
      }
    } finally {
      const next = this.#queue.shift();
      if (next) next();
      else this.#running--;
    }
  }

  /**
   * Ends the idle extraction processes (running jobs finish first); resolves once every process this pool
   * ended has exited.
   */
  async close(): Promise<void> {
    for (const r of this.#idle.splice(0)) this.#end(r);
    while (this.#closing.size > 0) await Promise.all(this.#closing);
  }

  #end(runner: Runner): void {
    const closed: Promise<void> = runner.close().finally(() => this.#closing.delete(closed));
    this.#closing.add(closed);
  }

  #admit(): Promise<void> | void {
    if (this.#running < this.options.workers) {
      this.#running++;
      return;
    }
    if (this.#queue.length >= this.options.queue) {
      throw new GatewayError("service_capacity_saturated", {
        retryAfter: 1,
        detail: `Очередь извлечения текста заполнена: документов в работе — ${this.options.workers}, ` +
          `в очереди — ${this.options.queue}.`,
      });
    }
    return new Promise<void>((r) => this.#queue.push(r));
  }

  #spawn(): Runner {
    const { heapMiB, memoryBytes, sampleMs } = this.options;
    return this.mode === "process"
      ? new ProcessRunner({ heapMiB, memoryBytes, sampleMs }, this.log)
      : new WorkerRunner(this.log);
  }
}
