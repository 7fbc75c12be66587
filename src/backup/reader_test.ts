/**
 * The backup file's reader (reader.ts): a file BackupEncoder wrote is read back record for record, bigints
 * included, however its bytes are chunked; every damaged file is refused with BackupFileError naming the
 * problem — a newer format version, not a backup, empty, cut anywhere, a changed byte anywhere (a seeded fuzz:
 * FUZZ_SEED=<seed> replays it), a trailer that does not match, data after it, references out of order — and
 * verifyBackup never returns a summary for it.
 */
import assert from "node:assert/strict";
import { BackupFileError, readBackup, verifyBackup } from "./reader.ts";
import { BACKUP_FORMAT, BACKUP_VERSION, type BackupRecord } from "./records.ts";
import { backupFile, fileStream } from "./testing/backup_file.ts";
import { concatBytes } from "../util/bytes.ts";
import { mulberry32 } from "../util/seeded_random.ts";

const utf8 = new TextEncoder();
const HASH = "0123456789abcdef".repeat(4);

/** One record of every type, with money beyond 2^64 and below zero where the schema allows it. */
const RECORDS: BackupRecord[] = [
  {
    t: "tariff",
    rows: [{ model: "k3", input: "1.00", cacheRead: "0.10", output: "4.00", memberDiscount: true }],
  },
  { t: "payment_method", id: "manual", title: "Перевод", kind: "manual", available: true, details: "Счёт 1" },
  {
    t: "package",
    id: "pkg_a",
    name: "Старт",
    creditUsd: 10n ** 25n,
    price: 500,
    currency: "XTR",
    active: true,
  },
  {
    t: "key",
    id: "key_a",
    hash: HASH,
    hint: "gd-abc",
    name: "Ключ",
    createdAt: 1,
    revoked: false,
    expiresAt: null,
    suspendedUntil: 5,
    families: { theta: { paused: true, hourlyRequests: 3, dailyRequests: null } },
    membership: "private",
    credited: 2n ** 70n,
    spent: 12n,
    caps: { hourlySpend: 5n, dailySpend: null, hourlyReserve: null, dailyReserve: 10n ** 39n },
  },
  {
    t: "ledger",
    id: "le_1",
    keyId: "key_a",
    kind: "debit",
    amountUsd: 3n,
    reference: "refund:pay_1",
    createdAt: 2,
  },
  { t: "owner", keyId: "key_a", chatId: -100123, alertThreshold: null, lastCreditUsd: 7n, alerted: true },
  {
    t: "usage",
    requestId: "req_1",
    keyId: "key_a",
    family: "beta",
    model: "b2",
    endpoint: "/v1/messages",
    stream: true,
    status: "ok",
    createdAt: 3,
    inputTokens: 10,
    cachedInputTokens: 2,
    outputTokens: 5,
    webSearchRequests: 1,
    searchFee: 4n,
    reserved: 100n,
    charged: 12n,
    writtenOff: 0n,
    servedModel: "b2-2026",
    usageSource: "upstream",
    rates: { input: 1n, cacheRead: 0n, output: 2n, search: 4n },
  },
  {
    t: "usage_hour",
    keyId: "key_a",
    hour: 0,
    family: "beta",
    model: "b2",
    requests: 1,
    charged: 12n,
    inputTokens: 10,
    cachedInputTokens: 2,
    outputTokens: 5,
  },
  {
    t: "file",
    id: "file_1",
    keyId: "key_a",
    filename: "отчёт.pdf",
    purpose: "assistants",
    contentType: "application/pdf",
    bytes: 3,
    createdAt: 4,
    expiresAt: 9,
    storedBytes: 40,
    data: "AAEC",
    sections: [{ text: "страница\n1", anchor: "p1" }],
  },
  {
    t: "payment",
    id: "pay_1",
    chatId: -100123,
    packageId: "pkg_a",
    methodId: "stars",
    keyId: null,
    creditUsd: 10n ** 25n,
    price: 500,
    currency: "XTR",
    status: "refund_due",
    telegramChargeId: "ch_1",
    createdAt: 5,
  },
];

const FILE = backupFile(RECORDS, "postgres", 1_234);
/** Where each line of FILE ends (the index just past its "\n"). */
const LINE_ENDS = [...FILE.entries()].filter(([, b]) => b === 10).map(([i]) => i + 1);

async function readAll(bytes: Uint8Array, chunk?: number) {
  const records: BackupRecord[] = [];
  const it = readBackup(fileStream(bytes, chunk));
  for (let next = await it.next();; next = await it.next()) {
    if (next.done) return { records, header: next.value };
    records.push(next.value);
  }
}

/** `bytes` refused by verifyBackup with BackupFileError and exactly `message`. */
async function refused(bytes: Uint8Array, message: string, chunk?: number): Promise<void> {
  await assert.rejects(verifyBackup(fileStream(bytes, chunk)), (err: unknown) => {
    assert.ok(err instanceof BackupFileError, `not a BackupFileError: ${err}`);
    assert.equal(err.message, message);
    return true;
  });
}

/** The file's text with the first `from` replaced by `to` (which must be found). */
function edited(bytes: Uint8Array, from: string, to: string): Uint8Array {
  const text = new TextDecoder().decode(bytes);
  assert.ok(text.includes(from), from);
  return utf8.encode(text.replace(from, to));
}

const line = (value: unknown) => utf8.encode(JSON.stringify(value) + "\n");

Deno.test("readBackup: a file BackupEncoder wrote comes back record for record, bigints included, in chunks of any size", async () => {
  for (const chunk of [FILE.length, 4096, 7, 1]) {
    const { records, header } = await readAll(FILE, chunk);
    assert.deepEqual(records, RECORDS, `chunks of ${chunk}`);
    assert.deepEqual(header, {
      t: "header",
      format: BACKUP_FORMAT,
      version: BACKUP_VERSION,
      created_at: 1_234,
      source: "postgres",
    });
  }
  const key = (await readAll(FILE)).records.find((r) => r.t === "key")!;
  assert.equal(key.t === "key" && key.credited, 2n ** 70n);
  const summary = await verifyBackup(fileStream(FILE, 5));
  assert.deepEqual(summary.counts, {
    tariff: 1,
    payment_method: 1,
    package: 1,
    key: 1,
    ledger: 1,
    owner: 1,
    usage: 1,
    usage_hour: 1,
    file: 1,
    payment: 1,
  });
  // A store with nothing in it is a header and a trailer.
  const empty = await readAll(backupFile([], "kv", 7));
  assert.deepEqual([empty.records, empty.header.source, empty.header.created_at], [[], "kv", 7]);
  assert.deepEqual((await verifyBackup(fileStream(backupFile([])))).counts, {});
});

Deno.test("verifyBackup: a newer format version is refused by name; so is a file that is not a backup, and an empty one", async () => {
  const newer = {
    t: "header",
    format: BACKUP_FORMAT,
    version: BACKUP_VERSION + 1,
    created_at: 1,
    source: "kv",
  };
  await refused(
    concatBytes([line(newer), FILE.subarray(LINE_ENDS[0])]),
    `backup format version ${
      BACKUP_VERSION + 1
    } was written by a newer gateway; this build reads versions up to ` +
      `${BACKUP_VERSION}. Restore it with the newer gateway.`,
  );
  await refused(
    concatBytes([line({ t: "header", format: "other" }), FILE.subarray(LINE_ENDS[0])]),
    "not a gateway backup (no header on line 1)",
  );
  await refused(FILE.subarray(LINE_ENDS[0]), "not a gateway backup (no header on line 1)"); // starts at a record
  await refused(utf8.encode("id,name\n1,a\n"), "line 1: not a JSON line (a truncated or damaged file)");
  await refused(new Uint8Array(0), "an empty file, not a gateway backup");
  await refused(edited(FILE, '"source":"postgres"', '"source":"mysql"'), "line 1: a damaged header");
});

Deno.test("verifyBackup: a file cut at any line's end has no trailer; cut inside a line, its last line is cut", async () => {
  assert.equal(LINE_ENDS.length, RECORDS.length + 2);
  assert.equal(LINE_ENDS.at(-1), FILE.length);
  for (const end of LINE_ENDS.slice(0, -1)) {
    await refused(
      FILE.subarray(0, end),
      "no trailer: the file is truncated (a backup cut short or copied in part)",
    );
  }
  for (const [i, end] of LINE_ENDS.entries()) {
    const start = i === 0 ? 0 : LINE_ENDS[i - 1]!;
    for (const cut of new Set([start + 1, Math.floor((start + end) / 2), end - 1])) {
      await refused(FILE.subarray(0, cut), "no trailer: the file is truncated (its last line is cut)", 3);
    }
  }
});

Deno.test("verifyBackup: one changed byte in a record that still parses is a checksum mismatch; readBackup yields the records before it, verifyBackup nothing", async () => {
  const changed = edited(FILE, '"spent":"12"', '"spent":"13"');
  assert.equal(changed.length, FILE.length);
  await refused(changed, "checksum mismatch: the file was changed after it was written");
  const seen: BackupRecord[] = [];
  await assert.rejects(
    (async () => {
      for await (const r of readBackup(fileStream(changed))) seen.push(r);
    })(),
    BackupFileError,
  );
  assert.equal(seen.length, RECORDS.length, "every record was yielded before the trailer refused them");
});

Deno.test("verifyBackup: one byte changed anywhere in the file is always refused (seeded: FUZZ_SEED)", async () => {
  const seed = Number(Deno.env.get("FUZZ_SEED") ?? 0x6ac0b);
  const random = mulberry32(seed);
  const accepted: string[] = [];
  const kinds = new Map<string, number>();
  for (let at = 0; at < FILE.length; at++) {
    const damaged = FILE.slice();
    damaged[at] = (FILE[at]! + 1 + Math.floor(random() * 255)) % 256; // any other byte value
    try {
      await verifyBackup(fileStream(damaged, 1 + Math.floor(random() * 64)));
      accepted.push(`byte ${at}: ${FILE[at]} → ${damaged[at]}`);
    } catch (err) {
      if (!(err instanceof BackupFileError)) {
        throw new Error(`byte ${at}: ${err} (replay: FUZZ_SEED=${seed})`);
      }
      const kind = err.message.replace(/^line \d+: /, "").replace(/ \(.*$/s, "").replace(/\d+/g, "N");
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    }
  }
  assert.deepEqual(accepted, [], `a damaged file accepted (replay: FUZZ_SEED=${seed})`);
  // The damage is caught by every layer: the JSON, the schema, the checksum and the trailer.
  for (
    const kind of [
      "not a JSON line",
      "not a valid record",
      "checksum mismatch: the file was changed after it was written",
    ]
  ) {
    assert.ok((kinds.get(kind) ?? 0) > 0, `${kind}: ${JSON.stringify([...kinds])}`);
  }
});

Deno.test("verifyBackup: a trailer whose count differs, data after the trailer, a record before its key and a key twice are refused", async () => {
  const n = RECORDS.length;
  await refused(
    edited(FILE, `"records":${n},`, `"records":${n + 1},`),
    `the trailer counts ${n + 1} records, the file has ${n}`,
  );
  await refused(
    concatBytes([FILE, line({ t: "end", records: 0, sha256: HASH })]),
    `line ${n + 3}: data after the trailer`,
  );
  await refused(concatBytes([FILE, utf8.encode("\n")]), `line ${n + 3}: data after the trailer`);

  const key = RECORDS.find((r) => r.t === "key")!;
  const ledger = RECORDS.find((r) => r.t === "ledger")!;
  await refused(backupFile([ledger, key]), "line 2: a ledger record of key key_a before its key");
  const file = RECORDS.find((r) => r.t === "file")!;
  await refused(
    backupFile([{ ...file, keyId: "key_x" }]),
    "line 2: a file record of key key_x before its key",
  );
  await refused(backupFile([key, ledger, key]), "line 4: key key_a twice");
  const payment = RECORDS.find((r) => r.t === "payment")!;
  await refused(backupFile([payment, payment]), "line 3: payment pay_1 twice");
});
