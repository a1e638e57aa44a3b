#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { readFileSync } from 'node:fs';
import {
  ConfigError,
  SERVER_SETTINGS,
  describeSettings,
  loadConfig,
  parseArgsOptions,
  settingsNamed,
  withOptionalValues,
  type Setting,
} from './settings.js';

// Commands load their modules when run, so help and the light commands start fast.
const serveModule = () => import('./serve.js');
const worldCommands = () => import('./world-commands.js');
const backupCommands = () => import('./backup-commands.js');
const doctorCommand = () => import('./doctor-command.js');

/** A command of the `game-platform` program. */
interface Command {
  name: string;
  usage: string;
  summary: string;
  settings: Setting[];
  /** Extra options besides the settings. */
  options?: Record<string, { type: 'string' | 'boolean' }>;
  /** Help rows for the extra options: flag and description. */
  optionHelp?: { left: string; right: string }[];
  maxPositionals: number;
  run(context: {
    config: ReturnType<typeof loadConfig>;
    positionals: string[];
    values: Record<string, string | boolean | undefined>;
  }): Promise<number>;
}

const COMMANDS: Command[] = [
  {
    name: 'serve',
    usage: 'game-platform serve [options]',
    summary: 'start the HTTP server (runs migrations first; imports --world into an empty database)',
    settings: SERVER_SETTINGS,
    maxPositionals: 0,
    run: async ({ config }) => (await serveModule()).serve(config),
  },
  {
    name: 'migrate',
    usage: 'game-platform migrate [--database URL] [--secret-key KEY] [--previous-secret-key KEY]',
    summary: 'create or update the database schema (and seal TOTP secrets stored in clear, or with the previous key)',
    settings: settingsNamed('database', 'secret-key', 'previous-secret-key'),
    maxPositionals: 0,
    run: async ({ config }) => (await worldCommands()).migrateCommand(config),
  },
  {
    name: 'import',
    usage:
      'game-platform import FILE [--mode merge|replace] [--database URL] [--secret-key KEY] [--redis URL] [--redis-prefix PREFIX] [--media-url URL] [--public-url URL]',
    summary: 'import a world file in one transaction (a bad file changes nothing)',
    settings: settingsNamed('database', 'secret-key', 'redis', 'redis-prefix', 'media-url', 'public-url'),
    options: { mode: { type: 'string' } },
    optionHelp: [
      {
        left: '--mode MODE',
        right:
          "merge (default): add the file's entries, each replacing the stored entry with its id; " +
          'replace: the world becomes exactly the file (sessions end, the audit log stays)',
      },
    ],
    maxPositionals: 1,
    run: async ({ config, positionals, values }) =>
      (await worldCommands()).importCommand(config, positionals[0], values.mode as string | undefined),
  },
  {
    name: 'backup',
    usage: 'game-platform backup FILE [--database URL]',
    summary: 'copy a SQLite database to FILE while servers run and write (on PostgreSQL: says how with pg_dump)',
    settings: settingsNamed('database'),
    maxPositionals: 1,
    run: async ({ config, positionals }) => (await backupCommands()).backupCommand(config, positionals[0]),
  },
  {
    name: 'restore',
    usage: 'game-platform restore FILE [--database URL] [--secret-key KEY]',
    summary: "replace a SQLite database by a backup (stop the servers first; the backup's secret key must be at hand)",
    settings: settingsNamed('database', 'secret-key'),
    maxPositionals: 1,
    run: async ({ config, positionals }) => (await backupCommands()).restoreCommand(config, positionals[0]),
  },
  {
    name: 'doctor',
    usage: 'game-platform doctor [--database URL] [--secret-key KEY]',
    summary:
      'check that the money adds up: balances equal their ledger entries, the fee account the fees, every listed item is held (exit 1 with the problems)',
    settings: settingsNamed('database', 'secret-key'),
    maxPositionals: 0,
    run: async ({ config }) => (await doctorCommand()).doctorCommand(config),
  },
  {
    name: 'export',
    usage: 'game-platform export [FILE] [--database URL] [--secret-key KEY]',
    summary: 'write the world (passwords as hashes, TOTP secrets in clear) to FILE (0600), or to standard output',
    settings: settingsNamed('database', 'secret-key'),
    maxPositionals: 1,
    run: async ({ config, positionals }) => (await worldCommands()).exportCommand(config, positionals[0]),
  },
];

function version(): string {
  // dist/cli/main.js and src/cli/main.ts are both two levels below the package root.
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

function generalHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length), 5) + 4;
  return [
    'game-platform: a self-hostable server for the game platform HTTP API',
    '',
    'Usage: game-platform <command> [options]',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}${c.summary}`),
    `  ${'admin'.padEnd(width)}operate a running server through the admin API (game-platform admin --help)`,
    '',
    'Run `game-platform <command> --help` for the options of a command.',
    'Every option also reads an environment variable; a flag wins over its variable.',
  ].join('\n');
}

function commandHelp(command: Command): string {
  return [
    `Usage: ${command.usage}`,
    '',
    command.summary,
    '',
    'Options (flag, environment variable):',
    describeSettings(command.settings, [...(command.optionHelp ?? []), { left: '--help', right: 'show this help' }]),
    ...(command.name === 'import'
      ? ['', 'With --redis, running servers are told to reload and to drop the sessions the import ended.']
      : []),
  ].join('\n');
}

/** Runs the program with its arguments (without `node` and the script); resolves to the exit code. */
export async function runCli(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    const topic = name === 'help' ? COMMANDS.find((c) => c.name === rest[0]) : undefined;
    console.log(topic ? commandHelp(topic) : generalHelp());
    return 0;
  }
  if (name === '--version' || name === '-v') {
    console.log(version());
    return 0;
  }
  if (name === 'admin') return (await import('./admin-dispatch.js')).runAdmin(rest);

  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    console.error(`game-platform: unknown command "${name}"\n\n${generalHelp()}`);
    return 2;
  }

  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: withOptionalValues(command.settings, rest),
      options: { ...parseArgsOptions(command.settings), ...command.options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    console.error(`game-platform ${command.name}: ${(error as Error).message}\n\n${commandHelp(command)}`);
    return 2;
  }
  const values = parsed.values as Record<string, string | boolean | undefined>;
  if (values.help) {
    console.log(commandHelp(command));
    return 0;
  }
  if (parsed.positionals.length > command.maxPositionals) {
    console.error(
      `game-platform ${command.name}: unexpected argument "${parsed.positionals[command.maxPositionals]}"\n\n${commandHelp(command)}`,
    );
    return 2;
  }

  let config;
  try {
    config = loadConfig(command.settings, values, env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`game-platform ${command.name}: ${error.message}`);
      return 2;
    }
    throw error;
  }
  return command.run({ config, positionals: parsed.positionals, values });
}

runCli(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(`game-platform: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  },
);
