/** The one policy of each family (gamma and eta share theirs). */
import type { Family } from "../catalog/models.ts";
import { alphaPolicy } from "./alpha/policy.ts";
import { betaPolicy } from "./beta/policy.ts";
import { deltaPolicy } from "./delta/policy.ts";
import type { FamilyPolicy } from "./policy.ts";
import { thetaPolicy } from "./theta/policy.ts";

export const FAMILY_POLICIES: Readonly<Record<Family, FamilyPolicy>> = {
  alpha: alphaPolicy,
  beta: betaPolicy,
  gamma: deltaPolicy,
  eta: deltaPolicy,
  theta: thetaPolicy,
};
