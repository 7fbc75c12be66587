/**
 * Extraction in a Deno Worker: the fallback when the gateway may not start processes (no
 * `--allow-run`). One worker per job, terminated afterwards (an idle worker would keep the process
 * alive). Weaker than a process, and said so in docs/files.md: Deno cannot cap a worker's heap,
 * so memory is watched as the growth of the whole gateway's RSS; and Deno 2.9 only ends a terminated
 * worker when it next returns to its event loop (denoland/deno#35657), which the PDF extractor does
 * between pages and the pre-pass between decoding steps.
 */
import { GatewayError } from "../errors/gateway_error.ts";
import type { FileSection } from "../store/store.ts";
import type { Logger } from "../util/log.ts";
import { type JobHeader, type Reply, replyError } from "./protocol.ts";
import {
  type JobInput,
  memoryLimitExceeded,
  type RunLimits,
  type Runner,
  timeLimitExceeded,
} from "./runner.ts";

const WORKER = new URL("./worker_main.ts", import.meta.url).href;

export class WorkerRunner implements Runner {
  constructor(private readonly log: Logger) {}

  readonly alive = false;
  readonly rssBytes = 0;
  jobs = 0;

  extract(job: JobInput, limits: RunLimits): Promise<FileSection[]> {
    this.jobs++;
    const worker = new Worker(WORKER, { type: "module" });
    // The file is handed over, not copied, when the caller gives it up whole; otherwise one copy.
    const whole = job.transfer && job.bytes.byteOffset === 0 &&
      job.bytes.byteLength === job.bytes.buffer.byteLength && job.bytes.buffer instanceof ArrayBuffer;
    const bytes = whole ? job.bytes : job.bytes.slice();
    const base = Deno.memoryUsage().rss;
    return new Promise<FileSection[]>((resolve, reject) => {
      const sections: FileSection[] = [];
      const finish = (err?: Error) => {
        clearTimeout(timer);
        clearInterval(watch);
        worker.terminate();
        if (err) reject(err);
        else resolve(sections);
      };
      const timer = setTimeout(() => finish(timeLimitExceeded(limits.timeoutMs)), limits.timeoutMs);
      const watch = setInterval(() => {
        if (limits.memoryBytes > 0 && Deno.memoryUsage().rss - base > limits.memoryBytes) {
          finish(memoryLimitExceeded(limits.memoryBytes));
        }
      }, limits.sampleMs);
      worker.onmessage = (e: MessageEvent<Reply>) => {
        const r = e.data;
        if (r.t === "section") sections.push({ text: r.text, anchor: r.anchor });
        else if (r.t === "done") finish();
        else finish(replyError(r));
      };
      worker.onerror = (e) => {
        // runJob answers every document error itself: this is the worker failing to start or run.
        e.preventDefault();
        this.log.error("file extraction worker failed", { error: e.message });
        finish(
          new GatewayError("service_unavailable", { detail: "Не удалось запустить извлечение текста." }),
        );
      };
      const header: JobHeader = { id: 1, fileId: job.fileId, kind: job.kind };
      worker.postMessage({ job: header, bytes }, [bytes.buffer as ArrayBuffer]);
    });
  }

  close(): Promise<void> {
    return Promise.resolve(); // a worker per job, ended with its job
  }
}
