/** The module-level structured logger shared by every handler. */
import { Logger } from '@aws-lambda-powertools/logger';
import { config } from '../config.js';

export const logger = new Logger({
  serviceName: 'placement',
  // On every record: which release wrote it, while two run side by side during an upgrade.
  persistentKeys: { release: config.release },
  logLevel: (process.env.PLACEMENT_LOG_LEVEL ?? process.env.POWERTOOLS_LOG_LEVEL ?? 'WARN') as 'WARN',
});
