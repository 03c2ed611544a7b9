/**
 * The one uuid rule: oslo.utils' is_uuid_like, which upstream applies
 * wherever it checks a uuid (the JSON-schema "uuid" format of bodies and
 * queries, a consumer uuid in a path, member_of, in_tree). A value is a uuid
 * when 32 hex digits, in either case, remain once every "urn:" and "uuid:" is
 * removed (lower case only, as Python's uuid.UUID removes them: "URN:UUID:…"
 * is refused), the braces at both ends are cut off ("{…}", "{{…}"; not inside)
 * and every dash is removed.
 */

/** The hex digits the rule leaves of a value, lower-cased. */
function hexDigits(value: string): string {
  return value
    .replaceAll('urn:', '')
    .replaceAll('uuid:', '')
    .replace(/^[{}]+|[{}]+$/g, '')
    .replaceAll('-', '')
    .toLowerCase();
}

export function isUuidLike(value: unknown): value is string {
  return typeof value === 'string' && /^[0-9a-f]{32}$/.test(hexDigits(value));
}

/** The canonical dashed, lower-case form of a uuid-like value (Python's str(uuid.UUID(value))). */
export function normalizeUuid(value: string): string {
  const hex = hexDigits(value);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * A provider or consumer uuid as it is stored and looked up. Upstream runs
 * on MySQL, whose collation compares them ignoring case, so a consumer
 * written as ABC… is read, replaced and deleted as abc… too; here they are
 * stored and looked up in lower case.
 */
export const foldUuidCase = (uuid: string): string => uuid.toLowerCase();
