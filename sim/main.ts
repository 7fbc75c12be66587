/** `deno task sim`: run the upstream simulator standalone (SIM_PORT, SIM_HOST). */

import { startSimulator } from "./server.ts";

const port = Number(Deno.env.get("SIM_PORT") ?? "8788");
const hostname = Deno.env.get("SIM_HOST") ?? "127.0.0.1";
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`invalid SIM_PORT: ${Deno.env.get("SIM_PORT")}`);
  Deno.exit(2);
}
const sim = await startSimulator({ port, hostname });
console.log(`upstream simulator listening on ${sim.url}`);
console.log(`  POST ${sim.url}/v1/chat/completions | /v1/messages | /v1/responses`);
console.log(`  GET|DELETE ${sim.url}/__sim/requests`);

const stop = async () => {
  await sim.close();
  Deno.exit(0);
};
Deno.addSignalListener("SIGINT", stop);
if (Deno.build.os !== "windows") Deno.addSignalListener("SIGTERM", stop);
