/** The module-level structured logger shared by every handler. */
import { Logger } from '@aws-lambda-powertools/logger';

export const logger = new Logger({
  serviceName: 'placement',
  logLevel: (process.env.PLACEMENT_LOG_LEVEL ?? process.env.POWERTOOLS_LOG_LEVEL ?? 'WARN') as 'WARN',
});
