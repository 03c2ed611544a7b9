/**
 * One Placement API a tool works with: the shared client, reading at the
 * highest microversion both the API and the tools know, with every request
 * counted and reads retried when the API is briefly unavailable.
 */
import { Microversion } from '../shared/api/microversion.js';
import { PlacementClient, type ApiResponse } from './placement-client.js';

/** The newest microversion the tools know; APIs are read at it or at their own maximum if lower. */
const NEWEST_KNOWN = '1.39';

export interface Endpoint {
  client: PlacementClient;
  /** The API's own highest microversion (GET /). */
  maxVersion: string;
  /** The microversion the job reads at. */
  readVersion: Microversion;
  /** Requests sent so far, retries included. */
  readonly requests: number;
}

/**
 * Asks GET / for the API's versions and sets the client up to read at the
 * highest one both sides know; refuses an API older than `oldest`.
 */
export async function connect(url: string, token: string | undefined, oldest = '1.0'): Promise<Endpoint> {
  let requests = 0;
  const client = new PlacementClient(url, { token: token ?? 'admin', retries: 3, onResponse: () => requests++ });
  const root = await client.get('/');
  const maxVersion: unknown = root.body?.versions?.[0]?.max_version;
  if (root.status !== 200 || typeof maxVersion !== 'string') throw new Error(`${url}: GET / answered ${root.status}, not a Placement API`);
  const max = Microversion.parse(maxVersion);
  if (!max.isAtLeast(oldest)) throw new Error(`${url}: microversion ${maxVersion} is older than ${oldest}, which this tool needs`);
  const readVersion = max.isAtLeast(NEWEST_KNOWN) ? Microversion.parse(NEWEST_KNOWN) : max;
  return {
    client: client.with({ version: readVersion.toString() }),
    maxVersion,
    readVersion,
    get requests() {
      return requests;
    },
  };
}

/** The response, when its status is one of `expected`; otherwise an error naming the request and Placement's own message. */
export function expectStatus(response: ApiResponse, expected: number[], what: string): ApiResponse {
  if (expected.includes(response.status)) return response;
  const detail = response.body?.errors?.[0]?.detail ?? response.text.slice(0, 300);
  throw new Error(`${what}: ${response.status} ${String(detail).replace(/\s+/g, ' ').trim()}`);
}
