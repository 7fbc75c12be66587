/** Field helpers shared by the settings of several areas. */
import { z } from "zod";

export const optionalUrl = z.string().url().optional();
export const optionalString = z.string().min(1).optional();
export const ms = (def: number) => z.coerce.number().int().positive().default(def);
export const rps = z.coerce.number().min(0).max(1_000_000).default(0);
export const burst = z.coerce.number().int().min(0).max(1_000_000).optional();
