/**
 * The operator CLI: `deno task admin <command>` (see `deno task admin help`). Talks to the running
 * gateway's /admin API when GATEWAY_URL and ADMIN_TOKEN are set, otherwise opens the store directly.
 * Exit codes: 0 ok, 1 the operation failed, 2 bad usage or configuration.
 */
import { parseConfig } from "../src/config/env.ts";
import { type Command, parseArgs, USAGE, UsageError } from "./admin/args.ts";
import { type Backend, OperationError } from "./admin/backend.ts";
import { directBackend } from "./admin/direct.ts";
import { remoteBackend } from "./admin/remote.ts";
import { withBaseRates } from "./admin/tariff.ts";
import { backupToFile, restoreFromFile } from "./admin/backup.ts";
import { StoreFormatError } from "../src/store/format.ts";
import { StoreInUseError } from "../src/store/in_use.ts";
import { describeStore, isSharedStore } from "../src/store/open.ts";

async function openBackend(): Promise<Backend> {
  const url = Deno.env.get("GATEWAY_URL") ?? "";
  const token = Deno.env.get("ADMIN_TOKEN") ?? "";
  if (url !== "") {
    if (token === "") {
      throw new UsageError("GATEWAY_URL is set but ADMIN_TOKEN is not; set both for remote mode");
    }
    return remoteBackend(url, token);
  }
  let config;
  try {
    config = parseConfig(Deno.env.toObject());
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  console.error(
    isSharedStore(config)
      ? `admin: direct mode on ${describeStore(config)}, shared with the gateways that serve it.`
      : `admin: direct mode on ${
        describeStore(config)
      }. It is refused while a gateway runs on the same store ` +
        "(single writer); set GATEWAY_URL and ADMIN_TOKEN to go through the running gateway.",
  );
  return await directBackend(config);
}

/** A backup goes through the running gateway (its snapshot is consistent only there); a restore writes a store
 *  no gateway serves yet. */
async function runBackup(cmd: Extract<Command, { kind: "backup" | "restore" }>): Promise<void> {
  const url = Deno.env.get("GATEWAY_URL") ?? "";
  const token = Deno.env.get("ADMIN_TOKEN") ?? "";
  if (cmd.kind === "backup") {
    if (url === "" || token === "") {
      throw new UsageError("backup: set GATEWAY_URL and ADMIN_TOKEN (it is taken from the running gateway)");
    }
    return await backupToFile(url, token, cmd.out);
  }
  if (url !== "") {
    throw new UsageError("restore: unset GATEWAY_URL (it writes the configured store directly)");
  }
  let config;
  try {
    config = parseConfig(Deno.env.toObject());
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  await restoreFromFile(config, cmd.file);
}

async function run(
  cmd: Exclude<Command, { kind: "help" | "backup" | "restore" }>,
  backend: Backend,
): Promise<void> {
  const print = (v: unknown) => console.log(JSON.stringify(v, null, 2));
  switch (cmd.kind) {
    case "create": {
      const { key, ...view } = await backend.create(cmd.body);
      print(view);
      console.log(key);
      return;
    }
    case "show":
      return print(await backend.show(cmd.id));
    case "action":
      return print(await backend.action(cmd.id, cmd.action, cmd.body));
    case "tariff-show":
      return print(await backend.tariff());
    case "tariff-set": {
      const rows = withBaseRates((await backend.tariff()).data, cmd.model, cmd.base);
      return print(await backend.setTariff({ rows }));
    }
    default: {
      // The key shop's commands. A confirmation that issued a key the bot could not deliver: its secret is
      // printed alone on the last line, as `key create` prints a new key.
      const { key, ...rest } = await backend.shop(cmd);
      print(rest);
      if (typeof key === "string") console.log(key);
      return;
    }
  }
}

async function main(argv: string[]): Promise<number> {
  let backend: Backend | undefined;
  try {
    const cmd = parseArgs(argv);
    if (cmd.kind === "help") {
      console.log(USAGE);
      return 0;
    }
    if (cmd.kind === "backup" || cmd.kind === "restore") {
      await runBackup(cmd);
      return 0;
    }
    backend = await openBackend();
    await run(cmd, backend);
    const b = backend;
    backend = undefined;
    await b.close();
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`admin: ${err.message}\n(run \`deno task admin help\` for usage)`);
      return 2;
    }
    if (err instanceof OperationError || err instanceof StoreInUseError || err instanceof StoreFormatError) {
      console.error(err.message);
      return 1;
    }
    console.error(`admin: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
    return 1;
  } finally {
    await backend?.close().catch(() => {});
  }
}

Deno.exit(await main(Deno.args));
