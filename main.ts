/**
 * Entry point: `deno task start`. Configuration comes from the environment (docs/configuration.md,
 * .env.example).
 */
import { startSimulator } from "./sim/server.ts";
import { isDemoMode, parseConfig } from "./src/config/env.ts";
import { startGateway } from "./src/gateway.ts";
import { parseUsd } from "./src/money/usd.ts";
import { StoreFormatError } from "./src/store/format.ts";
import { StoreInUseError } from "./src/store/in_use.ts";
import { isSharedStore, openStore } from "./src/store/open.ts";
import { superviseWorkers, workerNumber } from "./src/http/supervisor.ts";
import { Logger } from "./src/util/log.ts";

/** A store this process may not serve (owned by another, or of a newer format): its message, exit 1. */
function exitRefused(err: unknown): never {
  if (!(err instanceof StoreInUseError || err instanceof StoreFormatError)) throw err;
  console.error(err.message);
  Deno.exit(1);
}

let config;
try {
  config = parseConfig(Deno.env.toObject());
} catch (err) {
  console.error(String(err instanceof Error ? err.message : err));
  Deno.exit(2);
}

const worker = workerNumber();
if (config.WORKERS > 1 && worker === undefined) {
  if (!isSharedStore(config)) {
    console.error(
      `WORKERS=${config.WORKERS} needs a store the processes share: DATABASE_URL=postgres://… or kv:… ` +
        '(docs/operator-guide.md "Several processes")',
    );
    Deno.exit(2);
  }
  // The store is migrated (or refused) once here: a refused store stops the start, not a worker restarted on it.
  const log = new Logger(config.LOG_LEVEL);
  try {
    await (await openStore(config, log)).close();
  } catch (err) {
    exitRefused(err);
  }
  console.log(`starting ${config.WORKERS} workers on port ${config.PORT}`);
  Deno.exit(await superviseWorkers(config.WORKERS, import.meta.url, log));
}

let gw;
try {
  // Demo mode (no upstream configured): every family is answered by the built-in simulator.
  const simulator = isDemoMode(config) ? await startSimulator({ hostname: "127.0.0.1" }) : undefined;
  gw = await startGateway(config, { ...(simulator ? { simulator } : {}), worker: worker ?? 1 });
} catch (err) {
  exitRefused(err);
}
// Without the deadlines the proxy in front must bound slow heads and idle connections (docs/api.md "Errors").
const bounds = config.HTTP_CONNECTION_DEADLINES === "off" ? " (connection deadlines off)" : "";
console.log(`gateway${worker ? ` worker ${worker}` : ""} listening on ${gw.url}${bounds}`);
if (gw.app.simulated && (worker ?? 1) === 1) {
  const { key } = await gw.app.accounts.create({ balance: parseUsd(config.DEMO_BALANCE_USD), name: "demo" });
  console.log("");
  console.log("DEMO MODE: no upstream is configured, every family is answered by the built-in SIMULATOR");
  console.log(
    `(${gw.simulatorUrl}). Answers are not real model output; responses carry x-gateway-simulated: true.`,
  );
  console.log(`Demo key with ${config.DEMO_BALANCE_USD} USD:`);
  console.log(key);
}

const stop = async () => {
  await gw.close();
  Deno.exit(0);
};
Deno.addSignalListener("SIGINT", stop);
Deno.addSignalListener("SIGTERM", stop);
