/** A tiny client for integration tests against the local service. */
export interface ApiResponse {
  status: number;
  headers: Headers;
  body: any;
}

export function client(baseUrl: string, defaults: { token?: string; version?: string } = {}) {
  return async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse> => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        ...(defaults.token ? { 'x-auth-token': defaults.token } : {}),
        ...(defaults.version ? { 'openstack-api-version': `placement ${defaults.version}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
  };
}
