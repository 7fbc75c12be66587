/**
 * Shared documents on Deno KV (store.ts SharedDocuments): a document in one value under its name, changed by
 * an optimistic read-check-write (kv_atomic.ts), so several processes may share the KV file.
 */
import { commitChecked, optimistic } from "./kv_atomic.ts";
import { callerPart, kvKeys } from "./kv_keys.ts";
import { decodeDocument, encodeDocument } from "./json_document.ts";
import type { JsonDocument, SharedDocuments } from "./store.ts";
import type { Logger } from "../util/log.ts";

/**
 * How often a watch reads the document's versionstamp. `kv.watch` on a local file sees only this process's
 * writes (denoland/deno#21640), so another process's change is seen by this poll, within this bound.
 */
export const KV_WATCH_POLL_MS = 100;

export class KvDocuments implements SharedDocuments {
  /** The stop functions of the watches running, all stopped when the store closes. */
  readonly #watches = new Set<() => void>();

  constructor(private readonly kv: Deno.Kv, private readonly log: Logger) {}

  /** `change` runs again on a lost check; a null doc writes nothing. */
  updateDocument<T>(
    name: string,
    change: (doc: JsonDocument | null) => { doc: JsonDocument | null; result: T },
  ): Promise<T> {
    return optimistic("updateDocument", async () => {
      const key = kvKeys.document(callerPart(name)); // in the promise: a bad name rejects
      const read = await this.kv.get<Uint8Array>(key);
      const { doc, result } = change(read.value === null ? null : decodeDocument(read.value));
      if (doc === null) return { value: result };
      const op = this.kv.atomic().check(read).set(key, encodeDocument(name, doc));
      return (await commitChecked(op)) ? { value: result } : null;
    });
  }

  /**
   * `onChange` once per newer versionstamp of the document, from `kv.watch` (this process's writes, at once) and
   * from a poll (every process's, within KV_WATCH_POLL_MS); also once when the watch starts, so a change
   * between the caller's last read and the watch is not missed.
   */
  watchDocument(name: string, onChange: () => void): () => void {
    const key = kvKeys.document(callerPart(name));
    let last: string | undefined;
    let stopped = false;
    const seen = (versionstamp: string | null) => {
      const v = versionstamp ?? "";
      if (stopped || (last !== undefined && v <= last)) return; // versionstamps grow, as strings too
      last = v;
      onChange();
    };
    const reader = this.kv.watch([key]).getReader();
    (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        seen(value[0]!.versionstamp);
      }
    })().catch((err) => {
      if (!stopped) {
        this.log.error("kv document watch failed, the poll goes on", {
          document: name,
          error: errorText(err),
        });
      }
    });
    const poll = setInterval(() => {
      this.kv.get(key).then((e) => seen(e.versionstamp), (err) => {
        if (!stopped) this.log.error("kv document poll failed", { document: name, error: errorText(err) });
      });
    }, KV_WATCH_POLL_MS);
    const stop = () => {
      if (stopped) return;
      stopped = true;
      clearInterval(poll);
      this.#watches.delete(stop);
      reader.cancel().catch(() => {}); // already ended with the store
    };
    this.#watches.add(stop);
    return stop;
  }

  /** Stops every watch (the store's close, before the KV handle closes). A field, not a capability method. */
  readonly stopWatches = (): void => {
    for (const stop of [...this.#watches]) stop();
  };
}

const errorText = (err: unknown) => err instanceof Error ? err.message : String(err);
