/**
 * The Postgres store's schema as versioned migrations, applied at start-up. A migration is never edited once
 * released: a change is a new version. Money is `numeric(40,0)`: exact integers of pico-USD beyond int8
 * (10^9 USD is 10^21 pico-USD). Ids that order rows use the "C" collation, so order is by bytes, as in KV.
 */
import { checkFormat } from "./format.ts";
import { LOCKS, type Sql, STORE_LOCK_ID } from "./pg_connect.ts";

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** The columns of a usage row, shared by the rows and the drain checkpoints (which are rows not yet settled). */
const USAGE_COLUMNS = `
  key_id text COLLATE "C" NOT NULL,
  created_at bigint NOT NULL,
  request_id text COLLATE "C" NOT NULL,
  family text NOT NULL,
  model text NOT NULL,
  endpoint text NOT NULL,
  stream boolean NOT NULL,
  status text NOT NULL,
  input_tokens bigint NOT NULL,
  cached_input_tokens bigint NOT NULL,
  output_tokens bigint NOT NULL,
  web_search_requests bigint NOT NULL,
  search_fee numeric(40,0),
  reserved numeric(40,0) NOT NULL,
  charged numeric(40,0) NOT NULL,
  written_off numeric(40,0) NOT NULL,
  usage_source text NOT NULL,
  rate_input numeric(40,0) NOT NULL,
  rate_cache_read numeric(40,0) NOT NULL,
  rate_output numeric(40,0) NOT NULL,
  rate_search numeric(40,0) NOT NULL`;

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "keys, usage rows, checkpoints, tariff, files, tool loops",
    sql: `
CREATE TABLE keys (
  id text COLLATE "C" PRIMARY KEY,
  hash text NOT NULL UNIQUE,
  hint text NOT NULL,
  name text,
  created_at bigint NOT NULL,
  revoked boolean NOT NULL,
  expires_at bigint,
  suspended_until bigint,
  theta_paused boolean NOT NULL,
  membership text,
  cap_hourly_spend numeric(40,0),
  cap_daily_spend numeric(40,0),
  cap_hourly_reserve numeric(40,0),
  cap_daily_reserve numeric(40,0),
  -- Counters the group commit adds deltas to; balance = credited - spent.
  credited numeric(40,0) NOT NULL,
  spent numeric(40,0) NOT NULL
);

CREATE TABLE usage_rows (${USAGE_COLUMNS});
-- The usage report's order and cursor: a key's rows newest first, then by request id.
CREATE UNIQUE INDEX usage_rows_report ON usage_rows (key_id, created_at DESC, request_id);

CREATE TABLE usage_checkpoints (${USAGE_COLUMNS},
  PRIMARY KEY (request_id)
);

CREATE TABLE tariff (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  rows jsonb NOT NULL
);

CREATE TABLE files (
  key_id text COLLATE "C" NOT NULL,
  id text COLLATE "C" NOT NULL,
  filename text NOT NULL,
  purpose text NOT NULL,
  content_type text NOT NULL,
  bytes bigint NOT NULL,
  created_at bigint NOT NULL,
  expires_at bigint NOT NULL,
  stored_bytes bigint NOT NULL,
  data bytea NOT NULL,
  sections bytea NOT NULL,
  PRIMARY KEY (key_id, id)
);
CREATE INDEX files_expiry ON files (expires_at);

CREATE TABLE tool_loops (
  key_id text COLLATE "C" NOT NULL,
  id text COLLATE "C" NOT NULL,
  call_ids jsonb NOT NULL,
  updated_at bigint NOT NULL,
  expires_at bigint NOT NULL,
  PRIMARY KEY (key_id, id)
);
CREATE INDEX tool_loops_expiry ON tool_loops (expires_at);
`,
  },
  {
    version: 2,
    name: "credit leases, shared cap windows, key change stamps",
    sql: `
-- Credit set aside for one process (docs/ledger_leases.md); live while expires_at > now. No index on
-- expires_at: every renewal rewrites it (an index there would cost each renewal), and the table is small.
CREATE TABLE leases (
  key_id text COLLATE "C" NOT NULL,
  holder text NOT NULL,
  amount numeric(40,0) NOT NULL,
  expires_at bigint NOT NULL,
  PRIMARY KEY (key_id, holder)
);
-- A holder renews all its leases in one statement.
CREATE INDEX leases_holder ON leases (holder);

-- The key's shared windows (shared_window.ts): sums of the hour and the day starting at *_start
-- (0: never written).
ALTER TABLE keys
  ADD COLUMN hour_start bigint NOT NULL DEFAULT 0,
  ADD COLUMN day_start bigint NOT NULL DEFAULT 0,
  ADD COLUMN hour_spent numeric(40,0) NOT NULL DEFAULT 0,
  ADD COLUMN day_spent numeric(40,0) NOT NULL DEFAULT 0,
  ADD COLUMN hour_reserved numeric(40,0) NOT NULL DEFAULT 0,
  ADD COLUMN day_reserved numeric(40,0) NOT NULL DEFAULT 0,
  -- When the key was created or its metadata last written (the writer's Unix ms), for keyChanges.
  ADD COLUMN changed_at bigint NOT NULL DEFAULT 0;
CREATE INDEX keys_changed ON keys (changed_at);
`,
  },
  {
    version: 3,
    name: "theta account pool, request counts",
    sql: `
-- The theta account pool's shared document (store.ts updateThetaPool; pg_theta.ts). Its one row is created
-- here, so every change has a row to lock; doc is null until the first change.
CREATE TABLE theta_pool (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  doc jsonb
);
INSERT INTO theta_pool (singleton, doc) VALUES (true, NULL);

-- A key's requests per counter in the UTC hour and day starting at *_start (store.ts countRequest;
-- 0: never counted).
CREATE TABLE request_counts (
  key_id text COLLATE "C" NOT NULL,
  counter text NOT NULL,
  hour_start bigint NOT NULL,
  hour_count integer NOT NULL,
  day_start bigint NOT NULL,
  day_count integer NOT NULL,
  PRIMARY KEY (key_id, counter)
);
`,
  },
  {
    version: 4,
    name: "usage rows: the model that answered",
    sql: `
-- Set when another model than the requested one answered (theta's fallback); null otherwise.
ALTER TABLE usage_rows ADD COLUMN served_model text;
ALTER TABLE usage_checkpoints ADD COLUMN served_model text;
`,
  },
  {
    version: 5,
    name: "keys: theta request limits",
    sql: `
-- The key's own theta requests per UTC hour and day (spec §7.6); null: no limit.
ALTER TABLE keys
  ADD COLUMN theta_hourly_requests integer,
  ADD COLUMN theta_daily_requests integer;
`,
  },
  {
    version: 6,
    name: "usage per hour, family and model",
    sql: `
-- A key's usage summed per UTC hour (its start, Unix ms, as created_at), family and model (store.ts
-- usageHours). Every commit adds its rows here in the statement that writes them (pg_store.ts
-- COMMIT_SQL); the primary key serves a key's range of hours.
CREATE TABLE usage_hours (
  key_id text COLLATE "C" NOT NULL,
  hour bigint NOT NULL,
  family text COLLATE "C" NOT NULL,
  model text COLLATE "C" NOT NULL,
  requests bigint NOT NULL,
  charged numeric(40,0) NOT NULL,
  input_tokens bigint NOT NULL,
  cached_input_tokens bigint NOT NULL,
  output_tokens bigint NOT NULL,
  PRIMARY KEY (key_id, hour, family, model)
);
-- The rows written before, summed once (this transaction holds the migration lock: a process of this version
-- commits only after it).
INSERT INTO usage_hours
SELECT key_id, created_at - created_at % 3600000, family, model, count(*), sum(charged),
  sum(input_tokens), sum(cached_input_tokens), sum(output_tokens)
FROM usage_rows GROUP BY 1, 2, 3, 4;
`,
  },
  {
    version: 7,
    name: "dashboard sessions",
    sql: `
-- The key holder's dashboard sessions (store.ts putSession; src/auth/session.ts), by the SHA-256 of the
-- session id. A session is never read once expired; the sweep deletes it (pg_store.ts) by expires_at.
CREATE TABLE dashboard_sessions (
  hash text COLLATE "C" PRIMARY KEY,
  key_id text COLLATE "C" NOT NULL,
  created_at bigint NOT NULL,
  expires_at bigint NOT NULL
);
CREATE INDEX dashboard_sessions_expiry ON dashboard_sessions (expires_at);
`,
  },
  {
    version: 8,
    name: "commit batch ids",
    sql: `
-- The ids of the group commit's batches committed (CommitBatch.id, src/store/batch_id.ts): the commit
-- statement (pg_store.ts COMMIT_SQL) inserts its batch's id and writes nothing when it is here already, so a
-- batch retried after a lost reply is applied once. committed_at (Unix ms, the committing process's clock)
-- serves the sweep of ids older than a day.
CREATE TABLE commit_batches (
  id text COLLATE "C" PRIMARY KEY,
  committed_at bigint NOT NULL
);
CREATE INDEX commit_batches_age ON commit_batches (committed_at);
`,
  },
  {
    version: 9,
    name: "key shop: packages, payment methods, payments, key ledger, key owners, bot updates",
    sql: `
-- The key shop (shop_store.ts, pg_shop.ts, pg_payments.ts). Money is numeric(40,0) pico-USD; a price
-- is an integer in its currency's smallest unit.
CREATE TABLE shop_packages (
  id text COLLATE "C" PRIMARY KEY,
  name text NOT NULL,
  credit_usd numeric(40,0) NOT NULL,
  price bigint NOT NULL,
  currency text NOT NULL,
  active boolean NOT NULL
);

-- The methods are fixed (shop_types.ts SEED_PAYMENT_METHODS); the operator switches them on and off and sets
-- the manual method's details.
CREATE TABLE payment_methods (
  id text COLLATE "C" PRIMARY KEY,
  title text NOT NULL,
  kind text NOT NULL,
  available boolean NOT NULL,
  details text
);
INSERT INTO payment_methods (id, title, kind, available, details) VALUES
  ('stars', 'Telegram Stars', 'stars', true, NULL),
  ('manual', 'Перевод по реквизитам', 'manual', false, NULL);

-- A charge id settles one payment at most (the unique index refuses a second settlement's write).
CREATE TABLE payments (
  id text COLLATE "C" PRIMARY KEY,
  chat_id bigint NOT NULL,
  package_id text NOT NULL,
  method_id text NOT NULL,
  key_id text COLLATE "C",
  credit_usd numeric(40,0) NOT NULL,
  price bigint NOT NULL,
  currency text NOT NULL,
  status text NOT NULL,
  telegram_charge_id text UNIQUE,
  created_at bigint NOT NULL
);
CREATE INDEX payments_time ON payments (created_at, id);
CREATE INDEX payments_status ON payments (status, created_at, id);
CREATE INDEX payments_chat ON payments (chat_id, created_at, id);

-- Every credit and debit of a key, written in the transaction that moves the money. Keys created before this
-- version have no entries for their earlier credit.
CREATE TABLE ledger_entries (
  key_id text COLLATE "C" NOT NULL,
  created_at bigint NOT NULL,
  id text COLLATE "C" NOT NULL,
  kind text NOT NULL,
  amount_usd numeric(40,0) NOT NULL,
  reference text NOT NULL,
  PRIMARY KEY (key_id, created_at, id)
);

-- The chat that owns a key the shop sold, and the key's low-balance alert.
CREATE TABLE key_owners (
  key_id text COLLATE "C" PRIMARY KEY,
  chat_id bigint NOT NULL,
  alert_threshold numeric(40,0),
  last_credit_usd numeric(40,0) NOT NULL,
  alerted boolean NOT NULL
);
CREATE INDEX key_owners_chat ON key_owners (chat_id, key_id);

-- The operator's support lookup by hint.
CREATE INDEX keys_hint ON keys (hint);

-- Telegram updates the bot handled (idempotent on update_id); swept by expires_at.
CREATE TABLE bot_updates (
  update_id bigint PRIMARY KEY,
  expires_at bigint NOT NULL
);
CREATE INDEX bot_updates_expiry ON bot_updates (expires_at);
`,
  },
  {
    version: 10,
    name: "dashboard sessions bound to the key's secret",
    sql: `
-- The SHA-256 of the key a session signed in with (SessionRecord.keyHash): once the key is rotated its hash
-- changes and the session is no longer good (src/auth/session.ts). Sessions from before have none: they end.
ALTER TABLE dashboard_sessions ADD COLUMN key_hash text COLLATE "C" NOT NULL DEFAULT '';
`,
  },
  {
    version: 11,
    name: "shared documents and expiring sets by name",
    sql: `
-- Named JSON documents (store.ts SharedDocuments; pg_documents.ts), a row created by the first change. The one
-- document of migration 3 moves here under the name its caller uses for it.
CREATE TABLE shared_documents (
  name text COLLATE "C" PRIMARY KEY,
  doc jsonb
);
INSERT INTO shared_documents (name, doc) SELECT 'theta_pool', doc FROM theta_pool;
DROP TABLE theta_pool;

-- Members of expiring sets per owner (store.ts ExpiringSets; pg_expiring_sets.ts): the member's record as its
-- caller wrote it; swept by expires_at. The records of migration 1's one set move here under its caller's name.
CREATE TABLE expiring_members (
  set_name text COLLATE "C" NOT NULL,
  owner text COLLATE "C" NOT NULL,
  id text COLLATE "C" NOT NULL,
  member jsonb NOT NULL,
  expires_at bigint NOT NULL,
  PRIMARY KEY (set_name, owner, id)
);
CREATE INDEX expiring_members_expiry ON expiring_members (expires_at);
INSERT INTO expiring_members (set_name, owner, id, member, expires_at)
  SELECT 'tool_loop', key_id, id,
    jsonb_build_object(
      'keyId', key_id, 'id', id, 'callIds', call_ids, 'updatedAt', updated_at, 'expiresAt', expires_at
    ),
    expires_at
  FROM tool_loops;
DROP TABLE tool_loops;
`,
  },
  {
    version: 12,
    name: "keys: per-family settings",
    sql: `
-- A key's settings per model family (types.ts KeyRecord.families; family_settings.ts), as the family's name
-- → {paused, hourlyRequests, dailyRequests}; a family with no entry is not paused and has no limits. The
-- columns of migrations 1 and 5 move here under the name of the one family that had them, for the keys whose
-- values differ from those defaults.
ALTER TABLE keys ADD COLUMN family_settings jsonb NOT NULL DEFAULT '{}';
UPDATE keys SET family_settings = jsonb_build_object('theta', jsonb_build_object(
    'paused', theta_paused,
    'hourlyRequests', theta_hourly_requests,
    'dailyRequests', theta_daily_requests
  ))
  WHERE theta_paused OR theta_hourly_requests IS NOT NULL OR theta_daily_requests IS NOT NULL;
ALTER TABLE keys
  DROP COLUMN theta_paused,
  DROP COLUMN theta_hourly_requests,
  DROP COLUMN theta_daily_requests;
`,
  },
  {
    version: 13,
    name: "idempotency keys",
    sql: `
-- A gateway key's Idempotency-Key (store.ts IdempotencyStore; pg_idempotency.ts): claimed by a process while
-- its request runs ('running' under lease_until), then done with the answer's head (jsonb) and body (up to
-- 8 MiB), both set in the one statement that makes it done; swept by expires_at.
CREATE TABLE idempotency_keys (
  key_id text COLLATE "C" NOT NULL,
  idem_key text COLLATE "C" NOT NULL,
  fingerprint text NOT NULL,
  state text NOT NULL CHECK (state IN ('running', 'done')),
  holder text NOT NULL,
  lease_until bigint NOT NULL,
  expires_at bigint NOT NULL,
  answer jsonb,
  body bytea,
  PRIMARY KEY (key_id, idem_key),
  CHECK ((state = 'done') = (answer IS NOT NULL AND body IS NOT NULL))
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
`,
  },
];

/**
 * Applies the migrations not yet recorded in `schema_migrations`, each with its record, in one transaction
 * under a transaction-level advisory lock: two processes starting at once apply each version once (the second
 * waits, then finds it done). A store that records a version `migrations` does not hold (a newer build's) is
 * refused under the lock before anything is applied (format.ts StoreFormatError; `store` names it there).
 * Returns the versions applied now.
 */
export function migrate(
  sql: Sql,
  migrations: readonly Migration[] = MIGRATIONS,
  store = "the Postgres store",
): Promise<number[]> {
  return sql.begin(async (tx) => {
    await tx.unsafe(`SELECT pg_advisory_xact_lock($1, ${STORE_LOCK_ID})`, [LOCKS.migrate]);
    await tx`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`;
    const done = new Set(
      (await tx<{ version: number }[]>`SELECT version FROM schema_migrations`).map((r) => r.version),
    );
    checkFormat(store, done, migrations.map((m) => m.version));
    const applied: number[] = [];
    for (const m of migrations) {
      if (done.has(m.version)) continue;
      await tx.unsafe(m.sql).simple();
      await tx`INSERT INTO schema_migrations (version, name) VALUES (${m.version}, ${m.name})`;
      applied.push(m.version);
    }
    return applied;
  });
}
