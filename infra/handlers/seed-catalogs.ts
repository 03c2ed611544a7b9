/**
 * CloudFormation custom resource handler: writes the standard resource
 * classes and traits into a new table and, on each deploy that ships a new
 * os-traits / os-resource-classes release, the ones it adds (the local server
 * seeds at start-up instead); at the first deploy, the table's storage
 * format (docs/operators/upgrade.md). Idempotent; deleting the resource keeps the
 * data, like the table itself.
 */
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { seedStandardCatalogs } from '../../shared/storage/catalog.js';
import { recordFormatOfNewTable } from '../../shared/storage/upgrade.js';

export const handler = async (event: CloudFormationCustomResourceEvent): Promise<{ PhysicalResourceId: string }> => {
  // Created with the table at a first deploy: the table starts at this release's storage format. An update (an upgrade) keeps the table's.
  if (event.RequestType === 'Create') await recordFormatOfNewTable();
  if (event.RequestType !== 'Delete') await seedStandardCatalogs();
  return { PhysicalResourceId: 'placement-standard-catalogs' };
};
