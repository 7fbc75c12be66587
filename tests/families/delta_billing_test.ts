/**
 * Gamma/eta prices through a running gateway (spec §8.1 p.7): a fast variant costs more, the effort level does
 * not change the price; usage rows carry the rates charged.
 */
import assert from "node:assert/strict";
import { parseUsd } from "../../src/money/usd.ts";
import { post, withGateway } from "../support/harness.ts";

Deno.test("gamma/eta: fast costs more for the same usage; eta's four effort levels cost the same", () =>
  withGateway(async (t) => {
    const k = await t.newKey("10.00");
    const charged = async (model: string) => {
      const body = { model, input: "одинаковый запрос [[sim:words=20]]", max_output_tokens: 100 };
      const res = await post(t.url + "/v1/responses", k.key, body);
      assert.equal(res.status, 200, model);
      const usage = (await res.json()).usage;
      const rows = (await (await fetch(`${t.url}/v1/usage/requests?limit=1`, {
        headers: { authorization: `Bearer ${k.key}` },
      })).json()).data;
      assert.equal(rows[0].model, model);
      assert.deepEqual([rows[0].input_tokens, rows[0].output_tokens], [
        usage.input_tokens,
        usage.output_tokens,
      ]);
      return parseUsd(rows[0].charged_usd);
    };
    const gamma = await charged("gamma-2.5");
    const gammaFast = await charged("gamma-2.5-fast");
    assert.ok(gammaFast > gamma, `gamma fast ${gammaFast} > ${gamma}`);
    const eta: bigint[] = [];
    for (const effort of ["low", "medium", "high", "xhigh"]) {
      eta.push(await charged(`delta-eta-4.6-${effort}`));
    }
    assert.ok(eta.every((c) => c === eta[0]), `one price for every effort: ${eta}`);
    const etaFast: bigint[] = [];
    for (const effort of ["low", "xhigh"]) etaFast.push(await charged(`delta-eta-4.6-${effort}-fast`));
    assert.ok(etaFast.every((c) => c === etaFast[0] && c > eta[0]!), `fast dearer: ${etaFast} vs ${eta[0]}`);
  }));
