/** Lambda function URL events, as the function-URL router (functions/router.ts) receives them. */
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';

/** What Lambda hands a function with a URL of auth type NONE (AWS: "Request payload format" of function URLs). */
export function functionUrlEvent(
  method: string,
  pathAndQuery: string,
  options: { headers?: Record<string, string>; body?: string; base64?: boolean; requestContext?: Record<string, unknown> } = {},
): APIGatewayProxyEventV2 {
  const [path, query = ''] = pathAndQuery.split('?');
  const now = new Date();
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path!,
    rawQueryString: query,
    headers: {
      host: 'abcdefghijklmnopqrstuvwxyz234567.lambda-url.us-east-1.on.aws',
      'x-forwarded-proto': 'https',
      'x-forwarded-for': '203.0.113.17',
      'user-agent': 'nova-compute keystoneauth1/5.1.2',
      ...options.headers,
    },
    body: options.body === undefined ? undefined : options.base64 ? Buffer.from(options.body).toString('base64') : options.body,
    isBase64Encoded: Boolean(options.base64),
    requestContext: {
      accountId: 'anonymous',
      apiId: 'abcdefghijklmnopqrstuvwxyz234567',
      domainName: 'abcdefghijklmnopqrstuvwxyz234567.lambda-url.us-east-1.on.aws',
      domainPrefix: 'abcdefghijklmnopqrstuvwxyz234567',
      http: { method, path: path!, protocol: 'HTTP/1.1', sourceIp: '203.0.113.17', userAgent: 'nova-compute keystoneauth1/5.1.2' },
      requestId: randomUUID(),
      routeKey: '$default',
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
      ...options.requestContext,
    },
  } as APIGatewayProxyEventV2;
}

export const functionUrlContext = { awsRequestId: 'function-url-test', getRemainingTimeInMillis: () => 29_000 } as unknown as Context;
