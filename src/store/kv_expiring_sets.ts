/**
 * Expiring sets on Deno KV (store.ts ExpiringSets): a member in one value under (set, owner, id), written with
 * KV's own expiry, so KV removes it in time; a read checks `expiresAt` too.
 */
import { callerPart, kvKeys } from "./kv_keys.ts";
import type { ExpiringSets, MemberChange, SetMember } from "./store.ts";

export class KvExpiringSets implements ExpiringSets {
  constructor(private readonly kv: Deno.Kv) {}

  async listMembers<M extends SetMember>(set: string, owner: string, now: number): Promise<M[]> {
    const out: M[] = [];
    // expireIn is a lower bound, not a deadline: a member past its expiresAt may still be listed by KV.
    for await (const e of this.kv.list<M>({ prefix: kvKeys.setOwnerPrefix(callerPart(set), owner) })) {
      if (e.value.expiresAt > now) out.push(e.value);
    }
    return out.sort((a, b) => a.expiresAt - b.expiresAt || a.id.localeCompare(b.id));
  }

  async updateMembers<M extends SetMember>(
    set: string,
    owner: string,
    change: MemberChange<M>,
    now: number,
  ): Promise<void> {
    callerPart(set);
    const op = this.kv.atomic();
    const put = change.put;
    for (const id of change.remove) if (id !== put?.id) op.delete(kvKeys.setMember(set, owner, id));
    // The store's own expiry: the member's lifetime from now (its record keeps the exact time).
    if (put) {
      op.set(kvKeys.setMember(set, owner, put.id), put, { expireIn: Math.max(1, put.expiresAt - now) });
    }
    if (!(await op.commit()).ok) throw new Error("kv expiring set write failed");
  }
}
