#!/usr/bin/env node
/**
 * placement-admin: the operators' command for a Placement API (this service
 * or upstream). `placement-admin <command> --help` describes each command.
 * Built into one file that runs with plain node (npm run build:admin);
 * `npm run migrate -- …` and the like run it from a checkout.
 */
import { EXIT_DIFFERENCES, EXIT_USAGE, helpText, parseOptions, UsageError, type Command } from './command-line.js';
import { capacity } from './commands/capacity.js';
import { exitOnceWritten } from './exit.js';
import { explain } from './commands/explain.js';
import { exportRegion } from './commands/export.js';
import { health } from './commands/health.js';
import { history, usage } from './commands/history.js';
import { historySetAside } from './commands/history-set-aside.js';
import { importRegion } from './commands/import.js';
import { migrate } from './commands/migrate.js';
import { upgradeCheck, upgradeFinalize, upgradeVerify } from './commands/upgrade.js';
import { verify } from './commands/verify.js';

const PROGRAM = 'placement-admin';
const COMMANDS: Command[] = [
  migrate,
  exportRegion,
  importRegion,
  verify,
  capacity,
  upgradeCheck,
  upgradeFinalize,
  upgradeVerify,
  explain,
  history,
  historySetAside,
  usage,
  health,
];

function overview(): string {
  const width = Math.max(...COMMANDS.map(({ name }) => name.length));
  return [
    `usage: ${PROGRAM} <command> [options]`,
    '',
    'Operator commands for an OpenStack Placement API: this service or upstream Placement.',
    '',
    'commands:',
    ...COMMANDS.map(({ name, summary }) => `  ${name.padEnd(width)}  ${summary}`),
    '',
    `"${PROGRAM} <command> --help" describes a command and its options.`,
  ].join('\n');
}

async function main(args: string[]): Promise<number> {
  if (args[0] === '--help' || args[0] === '-h' || args[0] === 'help') {
    console.log(overview());
    return 0;
  }
  // A command's name is one word or two ("upgrade check").
  const chosen = COMMANDS.find((candidate) => candidate.name === args.slice(0, candidate.name.split(' ').length).join(' '));
  const name = chosen?.name ?? args[0];
  const rest = chosen ? args.slice(chosen.name.split(' ').length) : [];
  if (chosen === undefined) {
    console.error(`${name === undefined ? 'no command given' : `unknown command "${name}"`}\n\n${overview()}`);
    return EXIT_USAGE;
  }
  try {
    const parsed = parseOptions(chosen, rest);
    if (parsed.help) {
      console.log(helpText(PROGRAM, chosen));
      return 0;
    }
    return await chosen.run(parsed.values, parsed.argument);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`${error.message}\n\n${helpText(PROGRAM, chosen)}`);
    return EXIT_USAGE;
  }
}

// process.exit rather than letting the process end by itself: the HTTP client's kept-alive connections would hold it open.
main(process.argv.slice(2)).then(exitOnceWritten, (error: Error) => {
  console.error(`error: ${error.message}`);
  return exitOnceWritten(EXIT_DIFFERENCES);
});
