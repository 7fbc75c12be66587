/** Dashboard sessions on Deno KV (store.ts SessionStore), each removed by KV at its expiry. */
import type { SessionStore } from "./store.ts";
import type { SessionRecord } from "./types.ts";
import { kvKeys } from "./kv_keys.ts";

export class KvSessions implements SessionStore {
  constructor(private readonly kv: Deno.Kv) {}

  /** KV removes the session by itself after its lifetime (`expireIn`, in time but not to the millisecond), so a
   *  read checks the expiry too. */
  async putSession(session: SessionRecord): Promise<void> {
    await this.kv.set(kvKeys.session(session.hash), session, {
      expireIn: Math.max(1, session.expiresAt - session.createdAt),
    });
  }

  async getSession(hash: string, now: number): Promise<SessionRecord | null> {
    const found = (await this.kv.get<SessionRecord>(kvKeys.session(hash))).value;
    return found !== null && found.expiresAt > now ? found : null;
  }

  async deleteSession(hash: string): Promise<void> {
    await this.kv.delete(kvKeys.session(hash));
  }
}
