// The import rules of docs/design/architecture.md, checked by `npm run check:imports` (dependency-cruiser).
// Layers point down: functions -> shared/{http,auth,search,schemas} -> shared/storage -> shared/domain -> shared/api.
// shared/aws (AWS requests signed by hand) sits under storage and auth, beside the domain: it imports nothing of ours.
// admin/ (placement-admin) is an API client beside them: it uses shared/domain and shared/api only.
// shared/api (errors, microversions, query strings, Python-style quoting, times) is the neutral vocabulary
// every layer may use; it imports nothing but itself and date-fns.
const PLUMBING = '^shared/(http|storage|search|auth|schemas|aws)/|^shared/config[.]ts$';
const ENTRY_POINTS = '^(functions|local|infra|admin|scripts|test)/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycle',
      comment: 'No module may reach itself through its imports.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'domain-imports-plumbing',
      comment: 'The domain is pure: no HTTP plumbing, storage, search, auth, AWS requests, configuration or entry points.',
      severity: 'error',
      from: { path: '^shared/domain/' },
      to: { path: [PLUMBING, ENTRY_POINTS] },
    },
    {
      name: 'domain-imports-io',
      comment: 'The domain is pure: no Node built-ins and no packages (the SDK, middy, the logger).',
      severity: 'error',
      from: { path: '^shared/domain/' },
      to: { dependencyTypes: ['core', 'npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown'] },
    },
    {
      name: 'api-is-neutral',
      comment: 'shared/api is the vocabulary below every layer: it imports only itself, and date-fns to read times (shared/api/time.ts).',
      severity: 'error',
      from: { path: '^shared/api/' },
      to: { pathNot: ['^shared/api/', '^node_modules/date-fns/'] },
    },
    {
      name: 'storage-imports-upward',
      comment: 'Storage knows keys and expressions, not HTTP, the search, auth or schemas.',
      severity: 'error',
      from: { path: '^shared/storage/' },
      to: { path: ['^shared/(http|search|auth|schemas)/', ENTRY_POINTS] },
    },
    {
      name: 'schemas-are-data',
      comment: 'Request schemas are data beside the HTTP plumbing, not above it: they use the domain and the API vocabulary (JsonSchema) only.',
      severity: 'error',
      from: { path: '^shared/schemas/' },
      to: { path: '^shared/(http|storage|search|auth|aws)/|^shared/config[.]ts$' },
    },
    {
      name: 'aws-is-transport',
      comment: 'shared/aws sends signed requests to AWS services for storage and auth: Node and the Smithy signer, nothing else of ours.',
      severity: 'error',
      from: { path: '^shared/aws/' },
      to: { path: ['^shared/', ENTRY_POINTS], pathNot: '^shared/aws/' },
    },
    {
      name: 'shared-imports-entry-points',
      comment: 'shared/ is the library under the handlers, the local runtime, the stack and the tools.',
      severity: 'error',
      from: { path: '^shared/' },
      to: { path: ENTRY_POINTS },
    },
    {
      name: 'functions-import-runtimes',
      comment: 'Handlers run on Lambda: never the local runtime, the stack, the operator command, the tools or the tests.',
      severity: 'error',
      from: { path: '^functions/' },
      to: { path: '^(local|infra|admin|scripts|test)/' },
    },
    {
      name: 'local-imports-tools',
      comment: 'The local runtime is product code: it does not import the stack, the operator command, the tools or the tests.',
      severity: 'error',
      from: { path: '^local/' },
      to: { path: '^(infra|admin|scripts|test)/' },
    },
    {
      name: 'admin-is-an-api-client',
      comment:
        'placement-admin talks to a Placement through its API only: the domain and the API vocabulary, never the handlers, ' +
        'storage, the HTTP plumbing, the configuration, the runtimes or the tools.',
      severity: 'error',
      from: { path: '^admin/' },
      to: { path: ['^(functions|local|infra|scripts|test)/', PLUMBING] },
    },
    {
      name: 'admin-packages',
      comment:
        'placement-admin is built into one file that runs with plain node: Node built-ins and cli-progress (bundled), no other package; ' +
        "the AWS SDK's clients (bundled) only where upgrade check reads a stack's releases and history-set-aside reads its queue.",
      severity: 'error',
      from: { path: '^admin/', pathNot: '^admin/(upgrade/stack-releases|commands/history-set-aside)[.]ts$' },
      to: { dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown'], pathNot: '^node_modules/cli-progress/' },
    },
    {
      name: 'admin-sqs-package',
      comment: 'history-set-aside reads the set-aside queue with the SQS client, nothing else.',
      severity: 'error',
      from: { path: '^admin/commands/history-set-aside[.]ts$' },
      to: {
        dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown'],
        pathNot: '^node_modules/@aws-sdk/client-sqs/',
      },
    },
    {
      name: 'admin-aws-packages',
      comment: "upgrade check's reader of a stack's releases uses the CloudFormation and Lambda clients, nothing else.",
      severity: 'error',
      from: { path: '^admin/upgrade/stack-releases[.]ts$' },
      to: {
        dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown'],
        pathNot: '^node_modules/@aws-sdk/client-(cloudformation|lambda)/',
      },
    },
    {
      name: 'tools-import-tests',
      comment: 'The stack, the operator command and the tools do not depend on the tests.',
      severity: 'error',
      from: { path: '^(infra|admin|scripts)/' },
      to: { path: '^test/' },
    },
    {
      name: 'dynamodb-outside-storage',
      comment: 'Only storage (and the local runtime and tools that create or fill tables) talk to DynamoDB.',
      severity: 'error',
      from: { pathNot: '^(shared/storage|local|scripts)/' },
      to: { path: '^node_modules/@aws-sdk/(client-dynamodb|lib-dynamodb)/' },
    },
    {
      name: 'dynamodb-client-in-lambda',
      comment:
        "What Lambda runs signs its DynamoDB requests by hand (shared/storage/dynamodb.ts): the SDK's DynamoDB client, a third of a bundle, " +
        'is imported for its types only, except by shared/storage/client.ts, which only what runs off Lambda imports.',
      severity: 'error',
      from: { path: '^(functions|shared|infra/handlers)/', pathNot: '^shared/storage/client[.]ts$' },
      to: { path: '^node_modules/@aws-sdk/(client-dynamodb|lib-dynamodb)/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'lambda-reaches-sdk-client',
      comment: "shared/storage/client.ts (the SDK's DynamoDB client) serves the local runtime and the tools: no Lambda function reaches it.",
      severity: 'error',
      from: { path: '^(functions|infra/handlers)/' },
      to: { path: '^shared/storage/client[.]ts$', reachable: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
