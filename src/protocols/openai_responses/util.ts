/** Small value guards shared by the Responses codec files (JSON guards: ../../util/json.ts). */

/** Absent or explicit JSON null (both mean "not given" for optional request fields). */
export function absent(v: unknown): v is undefined | null {
  return v === undefined || v === null;
}
