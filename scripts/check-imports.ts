/**
 * npm run check:imports: the import rules of .dependency-cruiser.cjs (docs/design/architecture.md) over the
 * product and its tools. Prints the import cycles and the domain's imports of plumbing or I/O (both
 * must be 0) and every violation; exits 1 on any.
 */
import { cruise, type ICruiseResult, type IViolation } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTsConfig from 'dependency-cruiser/config-utl/extract-ts-config';

const FOLDERS = ['functions', 'shared', 'local', 'infra', 'scripts'];

export async function importViolations(folders = FOLDERS, configFile = './.dependency-cruiser.cjs'): Promise<{ modules: number; violations: IViolation[] }> {
  const options = await extractDepcruiseOptions(configFile);
  const tsConfig = extractTsConfig('tsconfig.json');
  const { output } = await cruise(folders, { ...options, outputType: 'json' }, undefined, { tsConfig });
  const result = (typeof output === 'string' ? JSON.parse(output) : output) as ICruiseResult;
  return { modules: result.summary.totalCruised, violations: result.summary.violations };
}

export function summarize(violations: IViolation[]): { cycles: number; domainImports: number } {
  return {
    cycles: violations.filter((violation) => violation.rule.name === 'no-cycle').length,
    domainImports: violations.filter((violation) => violation.rule.name.startsWith('domain-imports-')).length,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { modules, violations } = await importViolations();
  const { cycles, domainImports } = summarize(violations);
  console.log(`modules checked: ${modules}`);
  console.log(`import cycles: ${cycles}`);
  console.log(`imports from shared/domain into http, storage, search, auth, config or Node I/O: ${domainImports}`);
  for (const violation of violations)
    console.log(
      `  ${violation.rule.name}: ${violation.from} -> ${violation.to}${violation.cycle ? ` (cycle: ${violation.cycle.map((step) => step.name).join(' -> ')})` : ''}`,
    );
  console.log(`violations: ${violations.length}`);
  process.exitCode = violations.length === 0 ? 0 : 1;
}
