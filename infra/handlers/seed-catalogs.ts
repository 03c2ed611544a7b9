/**
 * CloudFormation custom resource handler: writes the standard resource
 * classes and traits into a new table and, on each deploy that ships a new
 * os-traits / os-resource-classes release, the ones it adds (the local server
 * seeds at start-up instead). Idempotent; deleting the resource keeps the
 * data, like the table itself.
 */
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { seedStandardCatalogs } from '../../shared/storage/catalog.js';

export const handler = async (event: CloudFormationCustomResourceEvent): Promise<{ PhysicalResourceId: string }> => {
  if (event.RequestType !== 'Delete') await seedStandardCatalogs();
  return { PhysicalResourceId: 'placement-standard-catalogs' };
};
