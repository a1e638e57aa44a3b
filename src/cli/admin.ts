import { readFileSync } from 'node:fs';
import { OptionalKind, type TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { AnyMethod } from '../api/method.js';
import { allAdminMethods } from '../domains.js';
import { worldFileTargetProblem, writeWorldFile } from './world-commands.js';

/**
 * `game-platform admin <command>`: the admin API of a running server from the command line.
 * Each admin.<name> method is a command named in kebab case (admin.banUser -> ban-user), its
 * parameters are --options; the answer's data is printed as JSON. `import` and `export`
 * move world files.
 */

const DEFAULT_URL = 'http://127.0.0.1:8080';

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
}

const processIo: CliIo = {
  stdout: (text) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
  stderr: (text) => process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
  env: process.env,
};

interface Command {
  name: string;
  method: AnyMethod;
  /** A positional argument and how it becomes a parameter. */
  positional?: { label: string; required: boolean; help: string };
  /** Turns the positional argument into parameters (reading files, for instance). */
  fromPositional?: (value: string) => Record<string, string>;
  /** Handles a successful answer; returns what to print. */
  output?: (data: unknown, positional: string | undefined) => unknown;
  usageExtra?: string;
}

const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
const snake = (option: string) => option.replace(/-/g, '_');
const optionName = (param: string) => param.replace(/_/g, '-');

function methodNamed(name: string): AnyMethod {
  const method = allAdminMethods().find((m) => m.name === name);
  if (!method) throw new Error(`no method ${name}`);
  return method;
}

function buildCommands(): Command[] {
  const special: Command[] = [
    {
      name: 'import',
      method: methodNamed('admin.importWorld'),
      positional: { label: 'FILE', required: true, help: 'the world file (JSON)' },
      fromPositional: (file) => ({ world: readFileSync(file, 'utf8') }),
      usageExtra:
        "The file travels in one request, so the server's body limit applies (64 KiB unless it was\n" +
        'started with a larger --body-limit). For larger files run `game-platform import FILE` where\n' +
        'the database is reachable, with --redis so that running servers reload.',
    },
    {
      name: 'export',
      method: methodNamed('admin.exportWorld'),
      positional: { label: 'FILE', required: false, help: 'where to write the world (0600); standard output when absent' },
      fromPositional: (file) => {
        const problem = worldFileTargetProblem(file);
        if (problem) throw new UsageError(problem);
        return {};
      },
      output: (data, file) => {
        const world = (data as { world: unknown }).world;
        const text = `${JSON.stringify(world, null, 2)}\n`;
        if (file === undefined) return world;
        writeWorldFile(file, text);
        return { file, bytes: Buffer.byteLength(text) };
      },
    },
  ];
  const covered = new Set(special.map((c) => c.method.name));
  const generic = allAdminMethods()
    .filter((m) => !covered.has(m.name))
    .map((method): Command => ({ name: kebab(method.name.replace(/^admin\./, '')), method }));
  return [...generic, ...special];
}

function paramEntries(method: AnyMethod): [string, TSchema][] {
  return Object.entries(method.params.properties) as [string, TSchema][];
}

function isRequired(schema: TSchema): boolean {
  return !(OptionalKind in schema) && schema.default === undefined;
}

function valueLabel(schema: TSchema): string {
  switch (schema['x-param']) {
    case 'uint':
    case 'int':
      return 'NUMBER';
    case 'bit':
      return '0|1';
    case 'enum':
      return (schema.anyOf as { const: string }[]).map((s) => s.const).join('|');
    case 'set':
      return 'A,B,...';
    case 'idOrDomain':
      return 'ID|DOMAIN';
    default:
      return 'TEXT';
  }
}

function commandUsage(command: Command): string {
  const required = paramEntries(command.method)
    .filter(([name, schema]) => isRequired(schema) && !(command.fromPositional && command.positional && name === 'world'))
    .map(([name, schema]) => `--${optionName(name)} ${valueLabel(schema)}`);
  const positional = command.positional ? [command.positional.required ? command.positional.label : `[${command.positional.label}]`] : [];
  return ['game-platform admin', command.name, ...positional, ...required, '[options]'].join(' ');
}

const HELP_LABEL_WIDTH = 28;

/** One line of help: the label, then its text in a column, at least two spaces apart (a longer label puts the text on the next line). */
function helpLine(label: string, text: string): string {
  if (label.length <= HELP_LABEL_WIDTH - 2) return `  ${label.padEnd(HELP_LABEL_WIDTH)}${text}`;
  return `  ${label}\n  ${' '.repeat(HELP_LABEL_WIDTH)}${text}`;
}

function commandHelp(command: Command): string {
  const lines = [`Usage: ${commandUsage(command)}`, '', command.method.summary];
  if (command.method.description) lines.push('', command.method.description);
  if (command.usageExtra) lines.push('', command.usageExtra);
  if (command.positional) lines.push('', 'Arguments:', helpLine(command.positional.label, command.positional.help));
  const params = paramEntries(command.method).filter(([name]) => !(command.fromPositional && name === 'world'));
  if (params.length > 0) {
    lines.push('', 'Parameters:');
    for (const [name, schema] of params) {
      const notes = [
        schema.description,
        isRequired(schema) ? 'required' : undefined,
        schema.default !== undefined ? `default ${String(schema.default)}` : undefined,
      ].filter(Boolean);
      lines.push(helpLine(`--${optionName(name)} ${valueLabel(schema)}`, notes.join('; ')));
    }
    lines.push(
      helpLine('--<parameter>-file PATH', "read a parameter's value from a file (e.g. --item-proto-file proto.json)"),
      '  A 0|1 option given without a value means 1 (--vip is --vip 1).',
    );
  }
  lines.push(
    '',
    'Connection:',
    helpLine('--url URL', `server address (ADMIN_URL; default ${DEFAULT_URL}); user:password@ in it is sent as HTTP basic authentication`),
    helpLine('--admin-key KEY', "the server's admin key (ADMIN_KEY; the variable keeps it out of the process list)"),
    helpLine('--help', 'show this help'),
  );
  return lines.join('\n');
}

function generalHelp(commands: Command[]): string {
  const width = Math.max(...commands.map((c) => c.name.length)) + 4;
  return [
    'Usage: game-platform admin <command> [options]',
    '',
    'Operates a running server through its admin API (X-Admin-Key) and prints the answer as JSON.',
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}${c.method.summary}`),
    '',
    `Connection: --url URL (ADMIN_URL, default ${DEFAULT_URL}), --admin-key KEY (ADMIN_KEY).`,
    'Run `game-platform admin <command> --help` for the parameters of a command.',
    'Exit status: 0 success, 1 the server refused or could not be reached, 2 wrong usage.',
  ].join('\n');
}

class UsageError extends Error {}

interface ParsedArgs {
  options: Map<string, string>;
  positionals: string[];
  help: boolean;
}

/** `--name value`, `--name=value`; a bare `--name` (followed by another option or nothing) means 1. */
function parseArgs(args: string[]): ParsedArgs {
  const options = new Map<string, string>();
  const positionals: string[] = [];
  let help = false;
  const rest = [...args];
  for (let arg = rest.shift(); arg !== undefined; arg = rest.shift()) {
    if (arg === '--help' || arg === '-h') {
      help = true;
      continue;
    }
    if (arg === '--') {
      positionals.push(...rest);
      break;
    }
    if (!arg.startsWith('--')) {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    const next = rest[0];
    let value = '1';
    if (eq !== -1) value = arg.slice(eq + 1);
    else if (next !== undefined && !next.startsWith('--')) {
      value = next;
      rest.shift();
    }
    if (name === '') throw new UsageError(`malformed option "${arg}"`);
    if (options.has(name)) throw new UsageError(`option --${name} was given twice`);
    options.set(name, value);
  }
  return { options, positionals, help };
}

/** Method parameters from the command line's options and positional argument. */
function requestParams(command: Command, parsed: ParsedArgs): Record<string, string> {
  const declared = new Map(paramEntries(command.method).map(([name, schema]) => [name, schema]));
  const params: Record<string, string> = {};
  for (const [option, value] of parsed.options) {
    if (option === 'url' || option === 'admin-key') continue;
    const fromFile = option.endsWith('-file') && declared.has(snake(option.slice(0, -'-file'.length)));
    const name = fromFile ? snake(option.slice(0, -'-file'.length)) : snake(option);
    if (!declared.has(name)) throw new UsageError(`unknown option --${option}`);
    if (name in params) throw new UsageError(`--${optionName(name)} was given twice`);
    params[name] = fromFile ? readFileSync(value, 'utf8') : value;
  }
  const maxPositionals = command.positional ? 1 : 0;
  if (parsed.positionals.length > maxPositionals) throw new UsageError(`unexpected argument "${parsed.positionals[maxPositionals]}"`);
  const positional = parsed.positionals[0];
  if (command.positional?.required && positional === undefined) throw new UsageError(`missing ${command.positional.label}`);
  if (positional !== undefined && command.fromPositional) Object.assign(params, command.fromPositional(positional));
  for (const [name, schema] of declared) if (isRequired(schema) && !(name in params)) throw new UsageError(`missing --${optionName(name)}`);
  return params;
}

interface Envelope {
  code: number;
  description?: string;
  data?: unknown;
}

/** Where the server is (`base`, without credentials), its origin as messages name it, and the basic authentication its address carried. */
interface ServerAddress {
  base: string;
  shown: string;
  basicAuth?: string;
}

function serverAddress(text: string): ServerAddress {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    // Not echoed: whatever it holds may be a password.
    throw new UsageError('--url: not an http:// or https:// address');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError('--url: not an http:// or https:// address');
  let basicAuth: string | undefined;
  try {
    if (url.username !== '' || url.password !== '')
      basicAuth = Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64');
  } catch {
    throw new UsageError('--url: the user or password before @ is not well percent-encoded');
  }
  url.username = '';
  url.password = '';
  // Messages name the origin alone: a mistyped address can hold a password in its path.
  return { base: url.href.replace(/\/+$/, ''), shown: url.origin, ...(basicAuth !== undefined ? { basicAuth } : {}) };
}

/** An answer that is not the server's: a redirect, or one without a JSON envelope. */
class UnusableAnswer extends Error {}

/** Whether `data` is what the method answers on success: its result, or nothing for a method that answers none. */
function isResultOf(method: AnyMethod, data: unknown): boolean {
  return method.result === undefined ? data === undefined : TypeCompiler.Compile(method.result).Check(data);
}

async function callServer(server: ServerAddress, adminKey: string, method: AnyMethod, params: Record<string, string>): Promise<Envelope> {
  const response = await fetch(`${server.base}/api/${method.name}`, {
    method: 'POST',
    // The admin key goes to this address only, never on to where a redirect points.
    redirect: 'manual',
    headers: {
      'content-type': 'application/json',
      'x-admin-key': adminKey,
      ...(server.basicAuth !== undefined ? { authorization: `Basic ${server.basicAuth}` } : {}),
    },
    body: JSON.stringify(params),
  });
  const text = await response.text();
  if (response.status >= 300 && response.status < 400)
    throw new UnusableAnswer(`it answered a redirect (HTTP ${response.status}), not followed: give --url the address it leads to`);
  let envelope: Envelope;
  try {
    envelope = JSON.parse(text) as Envelope;
  } catch {
    throw new UnusableAnswer(`it answered HTTP ${response.status} without a JSON body`);
  }
  if (typeof envelope?.code !== 'number' || (envelope.code === 0 && !response.ok))
    throw new UnusableAnswer(`it answered HTTP ${response.status} with a body that is not the server's answer`);
  if (envelope.code === 0 && !isResultOf(method, envelope.data))
    throw new UnusableAnswer(`it answered HTTP ${response.status} with data that is not what ${method.name} answers`);
  return envelope;
}

const json = (value: unknown) => JSON.stringify(value, null, 2);

/**
 * Runs `game-platform admin` with the arguments after `admin`; resolves to the exit status.
 * `io` replaces standard output, standard error and the environment (tests).
 */
export async function runAdminCli(argv: string[], io: CliIo = processIo): Promise<number> {
  const commands = buildCommands();
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    const topic = name === 'help' ? commands.find((c) => c.name === rest[0]) : undefined;
    io.stdout(topic ? commandHelp(topic) : generalHelp(commands));
    return 0;
  }
  const command = commands.find((c) => c.name === name);
  if (!command) {
    io.stderr(`game-platform admin: unknown command "${name}"\n\n${generalHelp(commands)}`);
    return 2;
  }

  let parsed: ParsedArgs;
  let params: Record<string, string>;
  let server: ServerAddress;
  try {
    parsed = parseArgs(rest);
    if (parsed.help) {
      io.stdout(commandHelp(command));
      return 0;
    }
    params = requestParams(command, parsed);
    server = serverAddress(parsed.options.get('url') ?? io.env.ADMIN_URL ?? DEFAULT_URL);
  } catch (error) {
    if (error instanceof UsageError || (error as NodeJS.ErrnoException).code === 'ENOENT') {
      io.stderr(
        `game-platform admin ${command.name}: ${(error as Error).message}\n\nUsage: ${commandUsage(command)}\n(--help for details)`,
      );
      return 2;
    }
    throw error;
  }

  const adminKey = parsed.options.get('admin-key') ?? io.env.ADMIN_KEY;
  if (!adminKey) {
    io.stderr(`game-platform admin ${command.name}: no admin key: pass --admin-key or set ADMIN_KEY`);
    return 2;
  }

  let answer: Envelope;
  try {
    answer = await callServer(server, adminKey, command.method, params);
  } catch (error) {
    if (error instanceof UnusableAnswer) {
      io.stderr(`game-platform admin ${command.name}: ${server.shown} is not a game-platform server's API: ${error.message}`);
      return 1;
    }
    const cause = (error as { cause?: { code?: string } }).cause;
    io.stderr(`game-platform admin ${command.name}: cannot reach ${server.shown}: ${cause?.code ?? (error as Error).message}`);
    return 1;
  }
  if (answer.code !== 0) {
    io.stderr(json(answer));
    if (command.name === 'import' && /too large/.test(answer.description ?? ''))
      io.stderr(
        "The file is larger than the server accepts in one request: run `game-platform import FILE` where the database is reachable, or raise the server's body limit.",
      );
    return 1;
  }
  const shown = command.output ? command.output(answer.data, parsed.positionals[0]) : (answer.data ?? {});
  io.stdout(json(shown));
  return 0;
}
