/**
 * The region file: the Region model as JSON lines, for backups and for
 * copying a region to another stage or region (`npm run export`, `npm run
 * import`). The format is documented in docs/operators/region-copy.md ("Region files"):
 *
 *   {"format":"openstack-placement-region","version":1,"created_at":...,"source":...,"microversion":...}
 *   {"resource_class":"CUSTOM_..."}                       one per custom resource class
 *   {"trait":"CUSTOM_..."}                                one per custom trait
 *   {"resource_provider":{uuid,name,parent_provider_uuid,inventories,traits,aggregates}}   parents first
 *   {"consumer":{uuid,project_id,user_id,consumer_type,allocations}}
 *   {"end":{"resource_classes":n,"traits":n,"resource_providers":n,"consumers":n}}
 *
 * The closing `end` line makes a cut-off file (a full disk, a broken pipe)
 * detectable: a file without it, or whose counts disagree, is refused.
 *
 * `npm run export -- ... > file` also puts npm's banner (an empty line and
 * two lines starting with "> ") at the top of the file, since npm prints it on
 * stdout; the reader skips such lines before the header (`npm run -s export`
 * writes none).
 */
import { INVENTORY_FIELDS } from '../../shared/domain/inventory.js';
import type { Inventories, Resources } from '../../shared/domain/model.js';
import { allocationsByProvider, parentsFirst, type ConsumerRecord, type ProviderRecord, type Region } from './region.js';

export const REGION_FORMAT = 'openstack-placement-region';
export const REGION_FORMAT_VERSION = 1;

export interface RegionFileHeader {
  format: typeof REGION_FORMAT;
  version: number;
  /** When the file was written (ISO 8601). */
  created_at: string;
  /** Where the data was read from: a URL, or a description. */
  source: string;
  /** The microversion the source was read at. */
  microversion: string;
}

interface Counts {
  resource_classes: number;
  traits: number;
  resource_providers: number;
  consumers: number;
}

const countsOf = (region: Region): Counts => ({
  resource_classes: region.resourceClasses.length,
  traits: region.traits.length,
  resource_providers: region.providers.length,
  consumers: region.consumers.length,
});

/** The file's lines, each without its newline. */
export function* regionFileLines(region: Region, header: Omit<RegionFileHeader, 'format' | 'version'>): Generator<string> {
  yield JSON.stringify({ format: REGION_FORMAT, version: REGION_FORMAT_VERSION, ...header });
  for (const name of region.resourceClasses) yield JSON.stringify({ resource_class: name });
  for (const name of region.traits) yield JSON.stringify({ trait: name });
  for (const provider of parentsFirst(region.providers)) yield JSON.stringify({ resource_provider: provider });
  for (const consumer of region.consumers) yield JSON.stringify({ consumer });
  yield JSON.stringify({ end: countsOf(region) });
}

class RegionFileError extends Error {
  constructor(line: number, message: string) {
    super(`region file, line ${line}: ${message}`);
    this.name = 'RegionFileError';
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isStringList = (value: unknown): value is string[] => Array.isArray(value) && value.every((item) => typeof item === 'string');

function isResources(value: unknown): value is Resources {
  return isObject(value) && Object.values(value).every((amount) => Number.isInteger(amount));
}

function isInventories(value: unknown): value is Inventories {
  return (
    isObject(value) && Object.values(value).every((inventory) => isObject(inventory) && INVENTORY_FIELDS.every((field) => typeof inventory[field] === 'number'))
  );
}

function providerRecord(value: unknown): ProviderRecord | undefined {
  if (!isObject(value)) return undefined;
  const { uuid, name, parent_provider_uuid, inventories, traits, aggregates } = value;
  if (typeof uuid !== 'string' || typeof name !== 'string') return undefined;
  if (parent_provider_uuid !== null && typeof parent_provider_uuid !== 'string') return undefined;
  if (!isInventories(inventories) || !isStringList(traits) || !isStringList(aggregates)) return undefined;
  return { uuid, name, parent_provider_uuid, inventories, traits: [...traits].sort(), aggregates: [...aggregates].sort() };
}

function consumerRecord(value: unknown): ConsumerRecord | undefined {
  if (!isObject(value)) return undefined;
  const { uuid, project_id, user_id, consumer_type, allocations } = value;
  if (typeof uuid !== 'string' || typeof project_id !== 'string' || typeof user_id !== 'string') return undefined;
  if (consumer_type !== null && typeof consumer_type !== 'string') return undefined;
  if (!isObject(allocations) || !Object.values(allocations).every(isResources)) return undefined;
  return { uuid, project_id, user_id, consumer_type, allocations: allocations as Record<string, Resources> };
}

/** Reads a region file; refuses anything malformed, cut off, or of another format version. */
export async function readRegionFile(lines: AsyncIterable<string>): Promise<{ header: RegionFileHeader; region: Region }> {
  let header: RegionFileHeader | undefined;
  let end: Counts | undefined;
  const region: Region = { resourceClasses: [], traits: [], providers: [], consumers: [], providerAllocations: new Map() };
  let number = 0;
  for await (const line of lines) {
    number++;
    if (line.trim() === '' || (header === undefined && line.startsWith('> '))) continue;
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch {
      throw new RegionFileError(number, 'not JSON');
    }
    if (!isObject(record)) throw new RegionFileError(number, 'not a JSON object');
    if (header === undefined) {
      if (record.format !== REGION_FORMAT) throw new RegionFileError(number, `not a region file (the first line must name the format "${REGION_FORMAT}")`);
      if (record.version !== REGION_FORMAT_VERSION)
        throw new RegionFileError(number, `format version ${String(record.version)}; this tool reads version ${REGION_FORMAT_VERSION}`);
      header = record as unknown as RegionFileHeader;
      continue;
    }
    if (end !== undefined) throw new RegionFileError(number, 'data after the "end" line');
    const [kind, ...others] = Object.keys(record);
    if (kind === undefined || others.length > 0) throw new RegionFileError(number, 'a record is an object with exactly one key');
    const value = record[kind];
    if (kind === 'resource_class' || kind === 'trait') {
      if (typeof value !== 'string') throw new RegionFileError(number, `${kind}: expected a name`);
      (kind === 'trait' ? region.traits : region.resourceClasses).push(value);
    } else if (kind === 'resource_provider') {
      const provider = providerRecord(value);
      if (provider === undefined) throw new RegionFileError(number, 'malformed resource_provider');
      region.providers.push(provider);
    } else if (kind === 'consumer') {
      const consumer = consumerRecord(value);
      if (consumer === undefined) throw new RegionFileError(number, 'malformed consumer');
      region.consumers.push(consumer);
    } else if (kind === 'end') {
      end = value as Counts;
    } else {
      throw new RegionFileError(number, `unknown record "${kind}"`);
    }
  }
  if (header === undefined) throw new RegionFileError(number, 'empty file');
  if (end === undefined) throw new RegionFileError(number, 'no "end" line: the file is cut off');
  for (const [kind, count] of Object.entries(countsOf(region))) {
    if (end[kind as keyof Counts] !== count)
      throw new RegionFileError(number, `the "end" line counts ${end[kind as keyof Counts]} ${kind}, the file holds ${count}`);
  }
  region.providers = parentsFirst(region.providers);
  region.providerAllocations = allocationsByProvider(region.consumers);
  return { header, region };
}
