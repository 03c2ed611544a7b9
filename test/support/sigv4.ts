/**
 * AWS Signature Version 4, computed here from AWS's published description of
 * the algorithm with node:crypto alone, so that a test can check what the
 * service signs (with the SDK's @smithy/signature-v4) without trusting that
 * signer: test/shared/storage/dynamodb.signature.test.ts holds it to
 * AWS's published test vectors first. Only what DynamoDB's requests use: a
 * path of unreserved characters, any query, any headers, a body.
 */
import { createHash, createHmac } from 'node:crypto';

export interface ReceivedRequest {
  method: string;
  /** The request target as received: path and query. */
  target: string;
  /** Name and value pairs in the order received (Node's `rawHeaders`), names in any case. */
  headers: [string, string][];
  body: Buffer | string;
}

export interface Authorization {
  accessKeyId: string;
  /** YYYYMMDD */
  date: string;
  region: string;
  service: string;
  signedHeaders: string[];
  signature: string;
}

const sha256Hex = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');
const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();

/** RFC 3986 encoding of everything but the unreserved characters, as SigV4 wants for query names and values. */
const encode = (text: string) => encodeURIComponent(text).replace(/[!'()*]/g, (character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`);

function canonicalQuery(query: string): string {
  if (query === '') return '';
  const pairs = query.split('&').map((pair) => {
    const [name = '', value = ''] = pair.split('=', 2).map((part) => decodeURIComponent(part.replace(/\+/g, ' ')));
    return [encode(name), encode(value)] as const;
  });
  pairs.sort(([nameA, valueA], [nameB, valueB]) => (nameA === nameB ? (valueA < valueB ? -1 : 1) : nameA < nameB ? -1 : 1));
  return pairs.map(([name, value]) => `${name}=${value}`).join('&');
}

/** The signed headers' values as received: trimmed, inner runs of spaces as one, repeated headers joined by commas. */
function canonicalHeaders(request: ReceivedRequest, signedHeaders: string[]): string {
  return signedHeaders
    .map((name) => {
      const values = request.headers.filter(([received]) => received.toLowerCase() === name).map(([, value]) => value.trim().replace(/ +/g, ' '));
      if (values.length === 0) throw new Error(`the signed header ${name} did not arrive`);
      return `${name}:${values.join(',')}\n`;
    })
    .join('');
}

export function canonicalRequest(request: ReceivedRequest, signedHeaders: string[], payloadHash = sha256Hex(request.body)): string {
  const [path = '/', query = ''] = request.target.split('?', 2);
  return [request.method, path, canonicalQuery(query), canonicalHeaders(request, signedHeaders), signedHeaders.join(';'), payloadHash].join('\n');
}

/** The signature of the request as received, with the given secret, at its `x-amz-date`, in the scope the authorization names. */
export function signatureOf(request: ReceivedRequest, authorization: Authorization, secretAccessKey: string): string {
  const amzDate = request.headers.find(([name]) => name.toLowerCase() === 'x-amz-date')?.[1];
  if (amzDate === undefined) throw new Error('no x-amz-date');
  const scope = `${authorization.date}/${authorization.region}/${authorization.service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(canonicalRequest(request, authorization.signedHeaders))].join('\n');
  let key: Buffer = hmac(`AWS4${secretAccessKey}`, authorization.date);
  for (const part of [authorization.region, authorization.service, 'aws4_request']) key = hmac(key, part);
  return createHmac('sha256', key).update(stringToSign).digest('hex');
}

export function parseAuthorization(header: string): Authorization {
  const match = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/.exec(
    header,
  );
  if (match === null) throw new Error(`not a SigV4 authorization: ${header}`);
  const [, accessKeyId, date, region, service, signedHeaders, signature] = match as unknown as string[];
  return { accessKeyId: accessKeyId!, date: date!, region: region!, service: service!, signedHeaders: signedHeaders!.split(';'), signature: signature! };
}
