/**
 * The command line of placement-admin: each command declares its options
 * once, and that declaration is both what Node's `util.parseArgs` parses
 * (strictly: an unknown option, a missing value or a stray argument is a
 * usage error) and what its `--help` prints.
 */
import { parseArgs } from 'node:util';

/** Exit statuses: 0 done (and, after a copy or verify, 0 differences). */
export const EXIT_DIFFERENCES = 1;
export const EXIT_USAGE = 2;
/** A copy stopped by PLACEMENT_COPY_STOP_AFTER_WRITES (a test hook: as if killed). */
export const EXIT_STOPPED = 3;

export interface OptionSpec {
  type: 'string' | 'boolean';
  /** What the value stands for in the help text: `URL`, `N`, `FILE`. */
  value?: string;
  help: string;
  required?: boolean;
  /** The option may be given several times (its value is then a list). */
  multiple?: true;
}

export type OptionSpecs = Record<string, OptionSpec>;

/** What a command's run gets: each option's value, `undefined` when not given (booleans: `false`). */
export type OptionValues<O extends OptionSpecs> = {
  [K in keyof O]: O[K]['type'] extends 'boolean' ? boolean : O[K] extends { multiple: true } ? string[] : string | undefined;
};

export interface Command<O extends OptionSpecs = OptionSpecs> {
  name: string;
  /** One line for the list of commands. */
  summary: string;
  /** The arguments after the command's name, as the usage line shows them. */
  synopsis: string;
  /** What the command does, for its --help. */
  description: string;
  options: O;
  /** The one argument after the options the command requires, as the usage line names it (`QUERY`); none when absent. */
  argument?: string;
  /** Checks that options exclude or need each other; throws a UsageError. */
  check?: (values: OptionValues<O>) => void;
  /** Does the work with the options and the argument; resolves with the exit status. */
  run: (values: OptionValues<O>, argument: string | undefined) => Promise<number>;
}

/** Declares a command with its option types kept for its `run`. */
export const command = <O extends OptionSpecs>(definition: Command<O>): Command => definition as unknown as Command;

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

const HELP: OptionSpec = { type: 'boolean', help: 'print this help' };

export function helpText(program: string, { name, synopsis, description, options }: Command): string {
  const rows = Object.entries({ ...options, help: HELP }).map(([name, spec]) => [`--${name}${spec.value ? ` ${spec.value}` : ''}`, spec.help]);
  const width = Math.max(...rows.map(([flag]) => flag!.length));
  return [`usage: ${program} ${name} ${synopsis}`, '', description, '', 'options:', ...rows.map(([flag, help]) => `  ${flag!.padEnd(width)}  ${help}`)].join(
    '\n',
  );
}

/** The command's options from `args`, or `{ help: true }`; a UsageError for anything it does not take. */
export function parseOptions(
  command: Command,
  args: string[],
): { help: true } | { help: false; values: OptionValues<OptionSpecs>; argument: string | undefined } {
  const options = Object.fromEntries(
    Object.entries({ ...command.options, help: HELP }).map(([name, { type, multiple }]) => [name, { type, multiple: multiple === true }]),
  );
  let values: Record<string, string | string[] | boolean | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({ args, options, strict: true, allowPositionals: command.argument !== undefined }) as {
      values: typeof values;
      positionals: string[];
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (values.help) return { help: true };
  if (command.argument !== undefined && positionals.length !== 1) throw new UsageError(`give exactly one ${command.argument}`);
  for (const [name, spec] of Object.entries(command.options)) {
    if (spec.required && values[name] === undefined) throw new UsageError(`--${name} ${spec.value ?? ''} is required`.replace(/ +is/, ' is'));
    if (spec.type === 'boolean') values[name] = values[name] === true;
    if (spec.multiple) values[name] ??= [];
  }
  const parsed = values as OptionValues<OptionSpecs>;
  command.check?.(parsed);
  return { help: false, values: parsed, argument: positionals[0] };
}

/** A whole number from 1 to 256 (requests under way at once), 8 when not given. */
export function concurrencyOf(value: string | undefined): number {
  const concurrency = value === undefined ? 8 : Number(value);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 256) throw new UsageError('--concurrency takes a whole number from 1 to 256');
  return concurrency;
}
