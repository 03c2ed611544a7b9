/**
 * How every Lambda function is bundled. The stack's NodejsFunctions and
 * scripts/measure-bundles.ts both read these settings, so the sizes and
 * start-up times the script reports are those of the deployed code.
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';

export const PROJECT_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const DEPS_LOCK_FILE = join(PROJECT_ROOT, 'package-lock.json');

/** The source file of a Lambda entry point, relative to the project root. */
export const entryPath = (relative: string): string => join(PROJECT_ROOT, relative);

/** Entry points (relative to the project root) of the functions that are not Placement handler families. */
export const AUTHORIZER_ENTRY = 'functions/authorizer.ts';
export const ROUTER_ENTRY = 'functions/router.ts';
export const CATALOG_SEEDER_ENTRY = 'infra/handlers/seed-catalogs.ts';
export const CAPACITY_METRICS_ENTRY = 'functions/capacity-metrics.ts';
export const CHANGE_SWEEPER_ENTRY = 'functions/change-sweeper.ts';
export const ALLOCATION_HISTORY_ENTRY = 'functions/allocation-history.ts';
export const handlerEntry = (family: string): string => `functions/${family}.ts`;

/**
 * An ES module has no `require`; esbuild's shim for the CommonJS code still
 * in the bundle (node built-ins required by dependencies) needs one.
 */
const ESM_REQUIRE_BANNER =
  "import { createRequire as __placementCreateRequire } from 'node:module'; const require = __placementCreateRequire(import.meta.url);";

/** Module replacements, resolved from the project root (esbuild's `alias`). */
export const ALIASES: Record<string, string> = {
  '@aws-sdk/credential-provider-node': './infra/lambda-credentials.ts',
};

export const BUNDLING: BundlingOptions = {
  format: OutputFormat.ESM,
  target: 'node24',
  // ES module builds first: they tree-shake, CommonJS ones do not.
  mainFields: ['module', 'main'],
  banner: ESM_REQUIRE_BANNER,
  minify: true,
  sourceMap: false,
  // The parts of the SDK the hand-signed requests use (the signer, configuration, retry classification); the runtime's own
  // SDK is a different version and is loaded from disk module by module; bundled, they are tree-shaken and pinned.
  bundleAwsSDK: true,
  // Imported only by an SDK client's event-stream operations. No bundle carries an SDK client (DynamoDB's and Secrets
  // Manager's requests are signed by hand, shared/aws/); left out (about 15 KB), a future client needing it fails loudly.
  externalModules: ['@smithy/core/event-streams'],
  esbuildArgs: {
    ...Object.fromEntries(Object.entries(ALIASES).map(([from, to]) => [`--alias:${from}`, to])),
    // The only comments esbuild keeps as legal ones are coverage hints marked @preserve (Powertools'), no licence.
    '--legal-comments': 'none',
  },
  forceDockerBundling: false,
};

/**
 * The bundling of a function that ships files beside its code (the policy
 * JSON): each is written once into the cloud assembly's directory and copied
 * into the bundle's directory after esbuild, so it lands in /var/task and
 * in the asset's hash.
 */
export function bundlingWithFiles(files: Record<string, string>, assemblyDirectory: string): BundlingOptions {
  const staged = Object.entries(files).map(([name, content]) => {
    const path = join(assemblyDirectory, `file.${createHash('sha256').update(content).digest('hex').slice(0, 16)}.${name}`);
    writeFileSync(path, content);
    return { name, path };
  });
  return {
    ...BUNDLING,
    commandHooks: {
      beforeBundling: () => [],
      beforeInstall: () => [],
      afterBundling: (_inputDirectory, outputDirectory) =>
        staged.map(({ name, path }) => `cp ${JSON.stringify(path)} ${JSON.stringify(join(outputDirectory, name))}`),
    },
  };
}
