import { afterEach, describe, expect, it, vi } from 'vitest';
import { Microversion } from '../../../../shared/api/microversion.js';
import { logger } from '../../../../shared/http/logger.js';
import { logContext } from '../../../../shared/http/middleware/log-context.js';
import { lambdaRequest } from '../../../support/lambda-request.js';

/** The structured lines the logger writes while `act` runs. */
function linesWrittenBy(act: () => void): Record<string, unknown>[] {
  const written: string[] = [];
  const capture = (chunk: unknown) => {
    written.push(String(chunk));
    return true;
  };
  const out = vi.spyOn(process.stdout, 'write').mockImplementation(capture);
  const err = vi.spyOn(process.stderr, 'write').mockImplementation(capture);
  try {
    act();
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
  return written.flatMap((text) => text.split('\n').filter(Boolean)).map((line) => JSON.parse(line) as Record<string, unknown>);
}

afterEach(() => logger.resetKeys());

describe('logContext', () => {
  it("tags the request's log lines with its id and microversion, and drops the previous request's", async () => {
    const first = lambdaRequest();
    first.context.placement!.version = Microversion.parse('1.20');
    await logContext().before!(first);
    logger.appendKeys({ consumer: 'left over' });
    const second = lambdaRequest();
    Object.defineProperty(second.context.placement!, 'requestId', { value: 'req-second' });
    second.context.placement!.version = Microversion.parse('1.39');
    await logContext().before!(second);
    const [line] = linesWrittenBy(() => logger.warn('over capacity'));
    expect(line).toMatchObject({ message: 'over capacity', request_id: 'req-second', microversion: '1.39' });
    expect(line).not.toHaveProperty('consumer');
  });
});
