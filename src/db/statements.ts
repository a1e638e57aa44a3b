import type { CompiledQuery, QueryResult, RawBuilder } from 'kysely';
import type { Executor } from './connection.js';

/** Where a value sits among a run's values: its name, then its indexes in lists. */
type Path = readonly (string | number)[];

/** What a statement's builder writes in place of a value given on each run. */
class Placeholder {
  constructor(readonly path: Path) {}
}

/**
 * The builder's view of a run's values: each value a placeholder to write into the SQL, each
 * list (and list of rows) as many placeholders as it has elements, to join as the SQL needs.
 */
export type Placeholders<V> = { readonly [K in keyof V]: PlaceholderOf<V[K]> };
type PlaceholderOf<T> = T extends readonly (infer E)[] ? readonly PlaceholderOf<E>[] : unknown;

/**
 * Where a compiled statement's parameter comes from: a run's value (by its path among the
 * values), a list of them sent as one array parameter, or a value the SQL's text fixed.
 */
type Slot = { readonly path: Path } | { readonly paths: readonly Path[] } | { readonly fixed: unknown };

interface Compiled {
  readonly query: CompiledQuery;
  readonly slots: readonly Slot[];
}

/** Shapes kept compiled per statement and dialect: lists of every length a method allows, and then some. */
const MAX_SHAPES = 128;

/** The lengths of a run's lists, which decide the SQL's text: `ids:3,rows:2(4,4)`. */
function shapeOf(values: Record<string, unknown>): string {
  let shape = '';
  for (const key in values) {
    const value = values[key];
    if (Array.isArray(value)) shape += `${key}:${listShape(value)},`;
  }
  return shape;
}

function listShape(list: readonly unknown[]): string {
  let shape = String(list.length);
  if (list.some(Array.isArray)) shape += `(${list.map((row) => (Array.isArray(row) ? listShape(row) : '-')).join(' ')})`;
  return shape;
}

function placeholdersFor(value: unknown, path: Path): unknown {
  return Array.isArray(value) ? value.map((element, index) => placeholdersFor(element, [...path, index])) : new Placeholder(path);
}

function valueAt(values: Record<string, unknown>, path: Path): unknown {
  let value: unknown = values;
  for (const step of path) value = (value as Record<string | number, unknown>)[step];
  return value;
}

/** A compiled parameter's source: a placeholder, a list of them (one array parameter), or a value of the SQL's own. */
function slotOf(parameter: unknown): Slot {
  if (parameter instanceof Placeholder) return { path: parameter.path };
  if (Array.isArray(parameter) && parameter.length > 0 && parameter.every((element) => element instanceof Placeholder))
    return { paths: parameter.map((element: Placeholder) => element.path) };
  return { fixed: parameter };
}

function parameterOf(slot: Slot, values: Record<string, unknown>): unknown {
  if ('path' in slot) return valueAt(values, slot.path);
  if ('paths' in slot) return slot.paths.map((path) => valueAt(values, path));
  return slot.fixed;
}

/**
 * A statement written once with Kysely's `sql` template and compiled once per dialect and
 * shape (the lengths of its lists), then run with each call's values in their places. Building
 * and compiling a query takes longer than SQLite takes to run the short statements of a write
 * (two to three times as long, measured in a transaction), so the statements every trade runs
 * are written this way.
 */
export class Statement<V extends Record<string, unknown>, R = unknown> {
  /**
   * By dialect, then by shape: what the builder makes of them alone, the same for every
   * database of the dialect. The dialect is known by its adapter's class, which every
   * transaction of a database shares with it.
   */
  private readonly compiled = new Map<unknown, Map<string, Compiled>>();

  constructor(private readonly build: (values: Placeholders<V>) => RawBuilder<R>) {}

  run(executor: Executor, values: V): Promise<QueryResult<R>> {
    const { query, slots } = this.compiledFor(executor, values);
    const parameters = slots.map((slot) => parameterOf(slot, values));
    return executor.executeQuery<R>({ ...query, parameters } as CompiledQuery<R>);
  }

  private compiledFor(executor: Executor, values: V): Compiled {
    const dialect = executor.getExecutor().adapter.constructor;
    let shapes = this.compiled.get(dialect);
    if (shapes === undefined) this.compiled.set(dialect, (shapes = new Map()));
    const shape = shapeOf(values);
    const known = shapes.get(shape);
    if (known !== undefined) return known;
    const placeholders = {} as Record<string, unknown>;
    for (const key in values) placeholders[key] = placeholdersFor(values[key], [key]);
    const query = this.build(placeholders as Placeholders<V>).compile(executor);
    const compiled = { query, slots: query.parameters.map(slotOf) };
    if (shapes.size >= MAX_SHAPES) shapes.delete(shapes.keys().next().value!);
    shapes.set(shape, compiled);
    return compiled;
  }
}
