/** UUID helpers with upstream's leniency: dashes and braces are optional, case does not matter. */

const HEX32 = /^[0-9a-f]{32}$/;

function hexDigits(value: string): string {
  return value
    .toLowerCase()
    .replace(/^urn:uuid:/, '')
    .replace(/[{}-]/g, '');
}

export function isUuidLike(value: string): boolean {
  return HEX32.test(hexDigits(value));
}

/** The canonical dashed, lower-case form. */
export function normalizeUuid(value: string): string {
  const hex = hexDigits(value);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
