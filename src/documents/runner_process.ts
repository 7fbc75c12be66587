/**
 * An extraction process: `deno run` of child_main.ts with NO permissions and a V8 heap limit, fed jobs
 * over stdin, answering over stdout (frames.ts). The limits are enforced from outside, where a document
 * cannot dodge them: SIGKILL at the time limit, and SIGKILL as soon as the process reports (from its
 * memory-watch worker, on stderr — memory_watch.ts) that its resident memory passed the limit — heap,
 * buffers and wasm alike. A killed or crashed process takes only its own job with it; the pool starts
 * a fresh one.
 */
import { GatewayError } from "../errors/gateway_error.ts";
import type { FileSection } from "../store/store.ts";
import type { Logger } from "../util/log.ts";
import { overLimit } from "./errors.ts";
import { FILE_LIMITS } from "./limits.ts";
import { encodeFrame, FrameReader, FrameTooLarge } from "./frames.ts";
import { MEMORY_MARK } from "./memory_watch.ts";
import { replyError } from "./protocol.ts";
import {
  type JobInput,
  memoryLimitExceeded,
  type RunLimits,
  type Runner,
  timeLimitExceeded,
} from "./runner.ts";

const CHILD = new URL("./child_main.ts", import.meta.url);
/** UTF-8 of the largest extracted text a document may give (3 bytes per UTF-16 unit at most). */
const MAX_REPLY_BYTES = 3 * FILE_LIMITS.maxExtractedChars + 1024 * 1024;
const CONFIG = new URL("../../deno.json", import.meta.url);
const dec = new TextDecoder();

/** Whether this gateway may start extraction processes (`--allow-run`, code on the file system). */
export function canSpawn(): boolean {
  if (CHILD.protocol !== "file:") return false;
  try {
    return Deno.permissions.querySync({ name: "run", command: Deno.execPath() }).state === "granted";
  } catch {
    return false;
  }
}

export interface ProcessOptions {
  heapMiB: number;
  memoryBytes: number;
  sampleMs: number;
}

export class ProcessRunner implements Runner {
  readonly #child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #frames: FrameReader;
  readonly #stdout: ReadableStreamDefaultReader<Uint8Array>;
  readonly #stderrRead: Promise<void>;
  #closed: Promise<void> | undefined;
  #alive = true;
  #nextId = 1;
  /** Called when the process reports passing the memory limit (kills the running job). */
  #onMemory: (() => void) | undefined;
  jobs = 0;
  rssBytes = 0;

  constructor(readonly opts: ProcessOptions, private readonly log: Logger) {
    try {
      this.#child = new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "--quiet",
          "--no-prompt",
          `--config=${decodeURIComponent(CONFIG.pathname)}`,
          `--v8-flags=--max-old-space-size=${opts.heapMiB},--expose-gc`,
          CHILD.href,
          String(opts.memoryBytes),
          String(opts.sampleMs),
        ],
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
    } catch (err) {
      this.log.error("file extraction: cannot start a process", { error: String(err) });
      throw new GatewayError("service_unavailable", {
        detail: "Не удалось запустить процесс извлечения текста.",
      });
    }
    this.#child.unref(); // an idle extraction process never keeps the gateway alive
    this.#writer = this.#child.stdin.getWriter();
    this.#stdout = this.#child.stdout.getReader();
    this.#frames = new FrameReader(this.#stdout);
    this.#child.status.then(() => this.#alive = false);
    this.#stderrRead = this.#readStderr();
  }

  get alive(): boolean {
    return this.#alive;
  }
  get pid(): number {
    return this.#child.pid;
  }

  async extract(job: JobInput, limits: RunLimits): Promise<FileSection[]> {
    const id = this.#nextId++;
    this.jobs++;
    let fail: (err: Error) => void = () => {};
    const failed = new Promise<never>((_, reject) => fail = reject);
    failed.catch(() => {});
    const kill = (err: Error) => {
      this.#kill();
      fail(err);
    };
    const timer = setTimeout(() => kill(timeLimitExceeded(limits.timeoutMs)), limits.timeoutMs);
    this.#onMemory = () => kill(memoryLimitExceeded(this.opts.memoryBytes));
    try {
      return await Promise.race([this.#run(id, job), failed]);
    } finally {
      clearTimeout(timer);
      this.#onMemory = undefined;
    }
  }

  async #run(id: number, job: JobInput): Promise<FileSection[]> {
    try {
      await this.#writer.write(encodeFrame({ id, fileId: job.fileId, kind: job.kind }, job.bytes));
    } catch {
      throw await this.#crashed();
    }
    const sections: FileSection[] = [];
    // The process parses hostile documents: what it sends back is bounded like a document's text.
    let received = 0;
    for (;;) {
      const f = await this.#frames.read().catch((err) => {
        if (err instanceof FrameTooLarge) this.#kill();
        return null;
      });
      if (!f) throw await this.#crashed();
      const h = f.header;
      if (h.id !== id) continue;
      received += f.body.byteLength;
      if (received > MAX_REPLY_BYTES || (h.t === "section" && sections.length >= FILE_LIMITS.maxSections)) {
        this.#kill();
        throw overLimit("Извлечённый текст документа слишком велик.");
      }
      if (h.t === "section") sections.push({ text: dec.decode(f.body), anchor: String(h.anchor) });
      else if (h.t === "done") {
        this.rssBytes = typeof h.rss === "number" ? h.rss : 0;
        return sections;
      } else if (h.t === "error") throw replyError(h as { code: string; detail?: string });
    }
  }

  /** The process's stderr: memory-limit reports, and anything else it logs (passed on). */
  async #readStderr(): Promise<void> {
    let pending = "";
    try {
      for await (const text of this.#child.stderr.pipeThrough(new TextDecoderStream())) {
        pending += text;
        let nl: number;
        while ((nl = pending.indexOf("\n")) !== -1) {
          const line = pending.slice(0, nl);
          pending = pending.slice(nl + 1);
          if (line.startsWith(MEMORY_MARK)) {
            if (this.#onMemory) this.#onMemory();
            else this.#kill(); // over the limit between jobs: replace it
          } else if (line.trim() !== "") {
            this.log.error("file extraction process said", { pid: this.#child.pid, line });
          }
        }
      }
    } catch { /* the process is gone */ }
  }

  /** The process ended under a job: killed by a signal (V8 out of memory, the OOM killer) or failed. */
  async #crashed(): Promise<GatewayError> {
    this.#alive = false;
    const status = await Promise.race([
      this.#child.status,
      new Promise<undefined>((r) => setTimeout(() => r(undefined), 2000)),
    ]);
    if (status && status.signal === null) {
      this.log.error("file extraction: the extraction process failed", { exit_code: status.code });
      return new GatewayError("service_unavailable", {
        detail: "Процесс извлечения текста завершился с ошибкой.",
      });
    }
    return overLimit("Обработка документа прервалась аварийно: документу не хватило памяти.");
  }

  #kill(): void {
    if (!this.#alive) return;
    this.#alive = false;
    try {
      this.#child.kill("SIGKILL");
    } catch { /* already gone */ }
  }

  /** Closes stdin: the process finishes and exits on its own; resolves once it has, its pipes closed. */
  close(): Promise<void> {
    this.#alive = false;
    return this.#closed ??= (async () => {
      this.#child.ref(); // waited for now: the exit must keep the event loop running
      await this.#writer.close().catch(() => {});
      await this.#child.status;
      await this.#stdout.cancel().catch(() => {});
      await this.#stderrRead;
    })();
  }
}
