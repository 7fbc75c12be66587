/** Records for store, money and account tests: defaults a test overrides with what it is about. */
import type { ExpiringSets, SetMember, StoredFile } from "../store.ts";
import type { KeyRecord, UsageRow } from "../types.ts";
import { idGenerator } from "../../util/ids.ts";

export function keyRecord(id: string, over: Partial<KeyRecord> = {}): KeyRecord {
  return {
    id,
    hash: `hash_${id}`,
    hint: "gd-abc",
    name: null,
    createdAt: 1,
    revoked: false,
    expiresAt: null,
    suspendedUntil: null,
    families: {},
    membership: null,
    balance: 0n,
    credited: 0n,
    spent: 0n,
    caps: { hourlySpend: null, dailySpend: null, hourlyReserve: null, dailyReserve: null },
    ...over,
  };
}

export function usageRow(requestId: string, keyId: string, over: Partial<UsageRow> = {}): UsageRow {
  return {
    requestId,
    keyId,
    family: "alpha",
    model: "k3",
    endpoint: "/v1/chat/completions",
    stream: true,
    status: "ok",
    createdAt: 1_000,
    inputTokens: 1,
    cachedInputTokens: 0,
    outputTokens: 2,
    webSearchRequests: 0,
    reserved: 10n,
    charged: 1n,
    writtenOff: 0n,
    usageSource: "upstream",
    rates: { input: 1n, cacheRead: 1n, output: 2n, search: 0n },
    ...over,
  };
}

/** A stored file of `keyId`, an hour to live from `createdAt`. */
export function file(
  id: string,
  keyId: string,
  createdAt: number,
  over: Partial<StoredFile> = {},
): StoredFile {
  return {
    id,
    keyId,
    filename: `${id}.txt`,
    purpose: "assistants",
    contentType: "text/plain",
    bytes: 3,
    createdAt,
    expiresAt: createdAt + 3_600_000,
    storedBytes: 10,
    ...over,
  };
}

/** The UTF-8 bytes of `s`. */
export const bytes = (s: string) => new TextEncoder().encode(s);

/** The expiring set the contract suites write (store.ts ExpiringSets). */
export const TEST_SET = "test_set";

/** A member of TEST_SET: `id` of `owner`, written at `updatedAt`, living `ttl` ms; its one value is `v_<id>`. */
export interface TestMember extends SetMember {
  owner: string;
  values: string[];
  updatedAt: number;
}

export const member = (owner: string, id: string, updatedAt: number, ttl = 1_000): TestMember => ({
  owner,
  id,
  values: [`v_${id}`],
  updatedAt,
  expiresAt: updatedAt + ttl,
});

/** Writes `m` into TEST_SET (made at its `updatedAt`), removing `remove` in the same change. */
export const putMember = (store: ExpiringSets, m: TestMember, remove: string[] = []) =>
  store.updateMembers(TEST_SET, m.owner, { remove, put: m }, m.updatedAt);

/** Removes `ids` of `owner` from TEST_SET. */
export const removeMembers = (store: ExpiringSets, owner: string, ids: string[]) =>
  store.updateMembers<TestMember>(TEST_SET, owner, { remove: ids }, 0);

/** The ids of `owner`'s members of TEST_SET live at `now`. */
export const memberIds = async (store: ExpiringSets, owner: string, now: number) =>
  (await store.listMembers<TestMember>(TEST_SET, owner, now)).map((m) => m.id);

const batchIds = idGenerator();
/** A fresh CommitBatch id (every commit names its batch: batch_id.ts). */
export function batchId(): string {
  return batchIds("test_");
}
