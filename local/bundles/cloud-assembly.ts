/**
 * What a synthesized stack (a cdk.out directory) deploys, read from its
 * CloudFormation template: each Lambda function's bundle, handler, memory,
 * timeout and environment; the table; the front door (the HTTP API's routes,
 * integrations and authorizer, or the function URL); and the custom
 * resources CloudFormation would run at deploy time. The bundle runtime
 * (local/bundles/runtime.ts) serves exactly this, so a route wired to the
 * wrong function or a variable the stack forgets shows here as it would in AWS.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

type Json = unknown;
interface Resource {
  Type: string;
  Properties?: Record<string, Json>;
  Metadata?: Record<string, Json>;
}

export interface FunctionSpec {
  logicalId: string;
  description?: string;
  /** The bundle's directory (the asset CDK staged in cdk.out). */
  codeDirectory: string;
  /** `file.export`, as Lambda reads it. */
  handler: string;
  runtime: string;
  memoryMb: number;
  timeoutSeconds: number;
  environment: Record<string, string>;
  /** Lambda's advanced logging: JSON lines and the application log level, when the function asks for them. */
  logFormat?: string;
  applicationLogLevel?: string;
}

export interface HttpRoute {
  /** `GET /resource_providers/{uuid}`, `ANY /{proxy+}` or `$default`. */
  routeKey: string;
  functionId: string;
  authorized: boolean;
}

export interface Authorizer {
  functionId: string;
  /** `$request.header.X-Auth-Token` and the like; API Gateway answers 401 itself when one is missing. */
  identitySource: string[];
  cacheTtlSeconds: number;
  simpleResponses: boolean;
}

export type FrontDoor = { kind: 'httpApi'; routes: HttpRoute[]; authorizer?: Authorizer } | { kind: 'functionUrl'; functionId: string };

export interface TableSpec {
  logicalId: string;
  properties: Record<string, Json>;
}

export interface CustomResourceSpec {
  logicalId: string;
  resourceType: string;
  /** The function that does the work: the provider framework's user function, or the service token's function itself. */
  functionId: string;
  properties: Record<string, Json>;
}

/** A function an EventBridge rule invokes at a fixed rate. */
export interface ScheduleSpec {
  logicalId: string;
  functionId: string;
  everySeconds: number;
}

/** A function the table's change stream feeds (an event source mapping): the records one of its filters lets through. */
export interface StreamConsumerSpec {
  logicalId: string;
  functionId: string;
  batchSize: number;
  /** Lambda's filter patterns, parsed. */
  filters: Json[];
  /** A failed batch: split in two, tried again this many times (-1: until it succeeds), then sent to this queue (a logical id). */
  bisectBatchOnError: boolean;
  retryAttempts: number;
  onFailureQueueId?: string;
}

export interface StackSpec {
  stackName: string;
  region: string;
  functions: Map<string, FunctionSpec>;
  frontDoor: FrontDoor;
  table: TableSpec;
  customResources: CustomResourceSpec[];
  schedules: ScheduleSpec[];
  streamConsumers: StreamConsumerSpec[];
}

/** Values the runtime gives the template's references (Ref of the table, of a secret...). */
export interface References {
  tableName: string;
  region: string;
  accountId: string;
}

interface Manifest {
  artifacts: Record<string, { type: string; environment?: string; properties?: { templateFile?: string } }>;
}

/** The stacks in a cloud assembly, by name. */
export function stackNames(assembly: string): string[] {
  const manifest = JSON.parse(readFileSync(join(assembly, 'manifest.json'), 'utf8')) as Manifest;
  return Object.entries(manifest.artifacts)
    .filter(([, artifact]) => artifact.type === 'aws:cloudformation:stack')
    .map(([name]) => name);
}

const isObject = (value: Json): value is Record<string, Json> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The logical id a `{"Fn::GetAtt": [id, "Arn"]}` (possibly inside a Fn::Join) or `{"Ref": id}` points at. */
function referencedId(value: Json): string | undefined {
  if (!isObject(value)) return undefined;
  const getAtt = value['Fn::GetAtt'];
  if (Array.isArray(getAtt)) return String(getAtt[0]);
  if (typeof value.Ref === 'string') return value.Ref;
  const join = value['Fn::Join'];
  if (Array.isArray(join) && Array.isArray(join[1])) {
    for (const part of join[1]) {
      const id = referencedId(part);
      if (id !== undefined && id !== 'AWS::Partition' && id !== 'AWS::Region' && id !== 'AWS::AccountId') return id;
    }
  }
  return undefined;
}

export function readStack(assembly: string, stackName: string, references: Omit<References, 'region'>): StackSpec {
  const manifest = JSON.parse(readFileSync(join(assembly, 'manifest.json'), 'utf8')) as Manifest;
  const artifact = manifest.artifacts[stackName];
  if (artifact?.type !== 'aws:cloudformation:stack') throw new Error(`${assembly}: no stack ${stackName} (stacks: ${stackNames(assembly).join(', ')})`);
  const region = /^aws:\/\/[^/]+\/(.+)$/.exec(artifact.environment ?? '')?.[1] ?? 'us-east-1';
  const template = JSON.parse(readFileSync(join(assembly, artifact.properties?.templateFile ?? `${stackName}.template.json`), 'utf8')) as {
    Resources: Record<string, Resource>;
  };
  const resources = template.Resources;
  const ofType = (type: string) => Object.entries(resources).filter(([, resource]) => resource.Type === type);
  const accountId = references.accountId;

  /** A template value as the deployed function would see it; references the runtime cannot give are refused by name. */
  const resolve = (value: Json, where: string): string => {
    if (typeof value === 'string') return value;
    if (typeof value === 'number' || typeof value === 'boolean') return String(value);
    const getAtt = isObject(value) ? value['Fn::GetAtt'] : undefined;
    if (Array.isArray(getAtt) && getAtt[1] === 'Arn' && resources[String(getAtt[0])]?.Type === 'AWS::Lambda::Function') {
      return `arn:aws:lambda:${region}:${accountId}:function:${String(getAtt[0])}`;
    }
    const id = isObject(value) && typeof value.Ref === 'string' ? value.Ref : undefined;
    const target = id === undefined ? undefined : resources[id];
    if (target?.Type === 'AWS::DynamoDB::Table') return references.tableName;
    if (target?.Type === 'AWS::SecretsManager::Secret') return `arn:aws:secretsmanager:${region}:${accountId}:secret:${id}`;
    if (id === 'AWS::Region') return region;
    if (id === 'AWS::AccountId') return accountId;
    throw new Error(`${stackName}: ${where} is ${JSON.stringify(value)}, which the bundle runtime cannot resolve`);
  };

  const functions = new Map<string, FunctionSpec>();
  for (const [logicalId, resource] of ofType('AWS::Lambda::Function')) {
    const properties = resource.Properties ?? {};
    const assetPath = resource.Metadata?.['aws:asset:path'];
    if (typeof assetPath !== 'string') continue; // inline code: nothing of ours
    const variables = (isObject(properties.Environment) ? properties.Environment.Variables : undefined) ?? {};
    const logging = isObject(properties.LoggingConfig) ? properties.LoggingConfig : {};
    functions.set(logicalId, {
      logicalId,
      description: typeof properties.Description === 'string' ? properties.Description : undefined,
      codeDirectory: join(assembly, assetPath),
      handler: String(properties.Handler),
      runtime: String(properties.Runtime),
      memoryMb: Number(properties.MemorySize ?? 128),
      timeoutSeconds: Number(properties.Timeout ?? 3),
      environment: Object.fromEntries(
        Object.entries(variables as Record<string, Json>).map(([name, value]) => [name, resolve(value, `${logicalId}'s ${name}`)]),
      ),
      logFormat: typeof logging.LogFormat === 'string' ? logging.LogFormat : undefined,
      applicationLogLevel: typeof logging.ApplicationLogLevel === 'string' ? logging.ApplicationLogLevel : undefined,
    });
  }
  const functionOf = (value: Json, where: string): string => {
    const id = referencedId(value);
    if (id === undefined || !functions.has(id)) throw new Error(`${stackName}: ${where} names no bundled function (${JSON.stringify(value)})`);
    return id;
  };

  const [tableEntry, ...otherTables] = ofType('AWS::DynamoDB::Table');
  if (tableEntry === undefined || otherTables.length > 0) throw new Error(`${stackName}: expected one DynamoDB table`);
  const table = { logicalId: tableEntry[0], properties: tableEntry[1].Properties ?? {} };

  let frontDoor: FrontDoor;
  const [url] = ofType('AWS::Lambda::Url');
  if (url !== undefined) {
    frontDoor = { kind: 'functionUrl', functionId: functionOf(url[1].Properties?.TargetFunctionArn, `${url[0]}'s TargetFunctionArn`) };
  } else {
    const integrations = new Map(
      ofType('AWS::ApiGatewayV2::Integration').map(([id, resource]) => [id, functionOf(resource.Properties?.IntegrationUri, `${id}'s IntegrationUri`)]),
    );
    const authorizers = ofType('AWS::ApiGatewayV2::Authorizer');
    if (authorizers.length > 1) throw new Error(`${stackName}: more than one authorizer`);
    const authorizer = authorizers.map(([id, resource]): Authorizer => {
      const properties = resource.Properties ?? {};
      if (properties.AuthorizerType !== 'REQUEST' || properties.AuthorizerPayloadFormatVersion !== '2.0') {
        throw new Error(`${stackName}: ${id} is not a REQUEST authorizer of payload 2.0`);
      }
      return {
        functionId: functionOf(properties.AuthorizerUri, `${id}'s AuthorizerUri`),
        identitySource: ((properties.IdentitySource as string[] | undefined) ?? []).map(String),
        cacheTtlSeconds: Number(properties.AuthorizerResultTtlInSeconds ?? 300),
        simpleResponses: properties.EnableSimpleResponses === true,
      };
    })[0];
    const routes = ofType('AWS::ApiGatewayV2::Route').map(([id, resource]): HttpRoute => {
      const properties = resource.Properties ?? {};
      const integrationId = referencedId(properties.Target);
      const functionId = integrationId === undefined ? undefined : integrations.get(integrationId);
      if (functionId === undefined) throw new Error(`${stackName}: route ${id} has no Lambda integration`);
      return { routeKey: String(properties.RouteKey), functionId, authorized: properties.AuthorizationType === 'CUSTOM' };
    });
    if (routes.some((route) => route.authorized) && authorizer === undefined) throw new Error(`${stackName}: a route asks for an authorizer the API lacks`);
    frontDoor = { kind: 'httpApi', routes, authorizer };
  }

  const customResources = Object.entries(resources)
    .filter(([, resource]) => resource.Type === 'AWS::CloudFormation::CustomResource' || resource.Type.startsWith('Custom::'))
    .map(([logicalId, resource]): CustomResourceSpec => {
      const { ServiceToken: token, ...properties } = resource.Properties ?? {};
      const tokenFunction = referencedId(token);
      // CDK's provider framework hands the event to the user's function, named in its environment.
      const userFunction = tokenFunction === undefined ? undefined : resources[tokenFunction]?.Properties?.Environment;
      const userArn = isObject(userFunction) && isObject(userFunction.Variables) ? userFunction.Variables.USER_ON_EVENT_FUNCTION_ARN : undefined;
      return {
        logicalId,
        resourceType: resource.Type,
        functionId: functionOf(userArn ?? token, `${logicalId}'s ServiceToken`),
        properties,
      };
    });

  const schedules = ofType('AWS::Events::Rule').flatMap(([logicalId, resource]): ScheduleSpec[] => {
    const properties = resource.Properties ?? {};
    if (properties.State === 'DISABLED') return [];
    const rate = /^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$/.exec(String(properties.ScheduleExpression));
    if (rate === null)
      throw new Error(`${stackName}: ${logicalId}'s schedule ${JSON.stringify(properties.ScheduleExpression)} is not a rate the bundle runtime runs`);
    const unitSeconds = rate[2]!.startsWith('minute') ? 60 : rate[2]!.startsWith('hour') ? 3600 : 86_400;
    const targets = Array.isArray(properties.Targets) ? properties.Targets : [];
    return targets.map((target) => ({
      logicalId,
      functionId: functionOf(isObject(target) ? target.Arn : null, `${logicalId}'s target`),
      everySeconds: Number(rate[1]) * unitSeconds,
    }));
  });

  /** The queue a mapping sends what it gives up to; any other destination is refused, as the runtime could not hold it. */
  const onFailureQueue = (logicalId: string, config: Json | undefined): string | undefined => {
    const destination = isObject(config) && isObject(config.OnFailure) ? config.OnFailure.Destination : undefined;
    if (destination === undefined) return undefined;
    const id = referencedId(destination);
    if (id === undefined || resources[id]?.Type !== 'AWS::SQS::Queue')
      throw new Error(`${stackName}: ${logicalId}'s on-failure destination is not a queue of the stack`);
    return id;
  };

  const streamConsumers = ofType('AWS::Lambda::EventSourceMapping').map(([logicalId, resource]): StreamConsumerSpec => {
    const properties = resource.Properties ?? {};
    const source = isObject(properties.EventSourceArn) ? properties.EventSourceArn['Fn::GetAtt'] : undefined;
    if (!Array.isArray(source) || source[0] !== table.logicalId || source[1] !== 'StreamArn') {
      throw new Error(`${stackName}: ${logicalId} reads ${JSON.stringify(properties.EventSourceArn)}, not the table's change stream`);
    }
    const criteria = isObject(properties.FilterCriteria) && Array.isArray(properties.FilterCriteria.Filters) ? properties.FilterCriteria.Filters : [];
    return {
      logicalId,
      functionId: functionOf(properties.FunctionName, `${logicalId}'s FunctionName`),
      batchSize: Number(properties.BatchSize ?? 100),
      filters: criteria.map((filter) => JSON.parse(String(isObject(filter) ? filter.Pattern : '{}')) as Json),
      bisectBatchOnError: properties.BisectBatchOnFunctionError === true,
      retryAttempts: Number(properties.MaximumRetryAttempts ?? -1),
      onFailureQueueId: onFailureQueue(logicalId, properties.DestinationConfig),
    };
  });

  return { stackName, region, functions, frontDoor, table, customResources, schedules, streamConsumers };
}
