/**
 * A stand-in for Secrets Manager's GetSecretValue on a loopback port,
 * speaking the service's JSON protocol (awsJson1_1), for the real SDK client
 * pointed at it with AWS_ENDPOINT_URL_SECRETS_MANAGER. It records what it
 * was asked, and can drop connections as an unreachable service would.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

export interface SecretsManagerRequest {
  target: string | undefined;
  contentType: string | undefined;
  body: { SecretId?: string };
}

export class FakeSecretsManager {
  /** Secret string by ARN; any other SecretId is not found. */
  readonly secrets = new Map<string, string>();
  readonly requests: SecretsManagerRequest[] = [];
  /** Drop every connection unanswered. */
  unreachable = false;
  url = '';
  private readonly server = createServer((request, response) => void this.answer(request, response));

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private async answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (this.unreachable) {
      request.socket.destroy();
      return;
    }
    let text = '';
    for await (const chunk of request) text += chunk;
    const body = JSON.parse(text) as { SecretId?: string };
    this.requests.push({ target: request.headers['x-amz-target'] as string | undefined, contentType: request.headers['content-type'], body });
    const reply = (status: number, document: object) =>
      response.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' }).end(JSON.stringify(document));
    if (request.method !== 'POST' || request.headers['x-amz-target'] !== 'secretsmanager.GetSecretValue') {
      reply(400, { __type: 'UnknownOperationException', message: 'not a GetSecretValue call' });
      return;
    }
    const arn = body.SecretId ?? '';
    const secret = this.secrets.get(arn);
    if (secret === undefined) {
      reply(400, { __type: 'ResourceNotFoundException', Message: "Secrets Manager can't find the specified secret." });
      return;
    }
    reply(200, { ARN: arn, Name: arn.split(':').pop(), SecretString: secret, VersionId: `v${this.requests.length}`, CreatedDate: Date.now() / 1000 });
  }
}
