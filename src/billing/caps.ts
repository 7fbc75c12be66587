/**
 * The key's own caps (spec §5.5, §7.3, §7.5). The check is part of the Ledger's hold (one atomic step with
 * the credit check), so it lives in src/accounts/caps.ts; billing and the families name it from here.
 */
export { type CapCodes, type CapName, checkCaps } from "../accounts/caps.ts";
