/** A stand-in Keystone for tests that need none of a real one's behaviour beyond token validation. */
import { createServer, type Server, type ServerResponse } from 'node:http';

/** A stand-in Keystone: one service user, user tokens it knows, counters. */
export class FakeKeystone {
  server: Server = createServer((request, response) => this.answer(request.method!, request.headers, response));
  url = '';
  logins = 0;
  validations = 0;
  serviceTokens = new Set<string>();
  serviceExpiresAt = new Date(Date.now() + 3_600_000).toISOString();
  userTokens = new Map<string, object>();
  failWith: number | undefined;
  /** Keystone's answer to every call takes this long. */
  delayMs = 0;

  private answer(method: string, headers: Record<string, string | string[] | undefined>, response: ServerResponse): void {
    if (this.delayMs > 0) {
      setTimeout(() => this.reply(method, headers, response), this.delayMs);
      return;
    }
    this.reply(method, headers, response);
  }

  private reply(method: string, headers: Record<string, string | string[] | undefined>, response: ServerResponse): void {
    if (this.failWith) {
      response.writeHead(this.failWith).end();
      return;
    }
    if (method === 'POST') {
      this.logins++;
      const token = `service-${this.logins}`;
      this.serviceTokens.add(token);
      response.writeHead(201, { 'x-subject-token': token, 'content-type': 'application/json' });
      response.end(JSON.stringify({ token: { expires_at: this.serviceExpiresAt } }));
      return;
    }
    this.validations++;
    const token = this.userTokens.get(String(headers['x-subject-token']));
    if (!this.serviceTokens.has(String(headers['x-auth-token']))) response.writeHead(401).end();
    else if (token === undefined) response.writeHead(404).end();
    else response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ token }));
  }
}
