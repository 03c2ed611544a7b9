import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importViolations, summarize } from '../../scripts/check-imports.js';

const CONFIG = resolve('.dependency-cruiser.cjs');

// A small tree that breaks the rules: the domain imports HTTP plumbing and Node I/O, http and domain import
// each other, and shared/api imports storage. The rules are paths relative to the working directory.
const TREE: Record<string, string> = {
  'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }),
  'shared/domain/claims.ts':
    "import { readFileSync } from 'node:fs';\nimport type { Reply } from '../http/types.js';\nimport { badRequest } from '../api/errors.js';\nexport const x: Reply | undefined = readFileSync && badRequest ? undefined : undefined;\n",
  'shared/http/types.ts': "import { x } from '../domain/claims.js';\nexport type Reply = { body: typeof x };\n",
  'shared/api/errors.ts': "import { table } from '../storage/keys.js';\nexport const badRequest = table;\n",
  'shared/storage/keys.ts': "export const table = 'placement';\n",
  'functions/ok.ts': "import { table } from '../shared/storage/keys.js';\nexport const name = table;\n",
};

describe('the import rules (npm run check:imports)', () => {
  const cwd = process.cwd();
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'import-rules-'));
    for (const [path, text] of Object.entries(TREE)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    process.chdir(root);
  });
  afterAll(() => {
    process.chdir(cwd);
    rmSync(root, { recursive: true, force: true });
  });

  it('counts the cycle (once), the domain imports of plumbing and I/O, and names each broken rule', async () => {
    const { violations } = await importViolations(['functions', 'shared'], CONFIG);
    const broken = violations.map((violation) => `${violation.rule.name}: ${violation.from} -> ${violation.to}`).sort();
    expect(broken).toEqual([
      'api-is-neutral: shared/api/errors.ts -> shared/storage/keys.ts',
      'domain-imports-io: shared/domain/claims.ts -> fs',
      'domain-imports-plumbing: shared/domain/claims.ts -> shared/http/types.ts',
      'no-cycle: shared/domain/claims.ts -> shared/http/types.ts',
    ]);
    expect(summarize(violations)).toEqual({ cycles: 1, domainImports: 2 });
  });
});
