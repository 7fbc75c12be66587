/** base64url without padding (RFC 4648 spec §5), the one encoder of keys, ids and cursors. */

export function toB64Url(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** Strict decoding: only the canonical unpadded encoding is accepted (no two texts for one value). */
export function fromB64Url(text: string): Uint8Array | null {
  if (text === "" || !/^[A-Za-z0-9_-]+$/.test(text) || text.length % 4 === 1) return null;
  let bin: string;
  try {
    bin = atob(text.replaceAll("-", "+").replaceAll("_", "/") + "=".repeat((4 - text.length % 4) % 4));
  } catch {
    return null;
  }
  const bytes = Uint8Array.from(bin, (c) => c.charCodeAt(0));
  return toB64Url(bytes) === text ? bytes : null;
}
