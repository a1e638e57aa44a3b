/**
 * The board config: the game SDK's `setup.config` shape (version 2), and the checks that refuse
 * a config asking for something this engine does not play.
 */

export type FieldConfig =
  | { is_corner: 1; type: 'start' | 'jail' }
  | { is_corner?: 0 | 1; type: SpecialFieldType; amount?: number }
  | { type: 'company'; monopoly_id: number; is_last?: 0 | 1 };

export type SpecialFieldType =
  'cash.pay' | 'cash.receive' | 'chance' | 'jackpot' | 'jail.goto' | 'park' | 'russian-roulette' | 'tax.income' | 'tax.luxury' | 'wormhole';

export type MonopolyConfig =
  | { buy_price: number; rent_by_level: number[]; level_cost: number; last_field?: { buy_price: number; rent_by_level: number[] } }
  | { buy_price: number; rent_by_count: number[] }
  | { buy_price: number; dice_multipliers: number[] };

export type ChanceCard =
  | { type: 'income' | 'expense'; text_id: number; range: { min: number; max: number; step: number } }
  | { type: 'repair'; text_id: number; cost: { small: number; big: number } }
  | { type: 'goto.jail' | 'goto.start'; text_id: number };

export type TimeRule =
  | { type: 'start.none'; time: number }
  | { type: 'start.tax'; time: number; sum: number }
  | { type: 'rent.tax'; time: number; rate: number };

export interface BoardConfig {
  version: number;
  board_size: [number, number];
  timers: { roll_dices: number };
  fields: FieldConfig[];
  monopolies: Record<string, MonopolyConfig>;
  mechanics: {
    auction?: { bid_increment: number };
    chance?: { cards: ChanceCard[] };
    field_level?: { build?: { uneven?: 0 | 1 }; sell: { multiplier?: number } };
    jail: { release_fee: number; double_roll_attempt_limit?: number };
    mortgage?: { duration?: number; multiplier: number; buyback_multiplier: number };
    start: { income_amount: number; bonus_amount?: number };
    time_rules: TimeRule[];
  } & Record<string, unknown>;
}

/** A config this engine cannot play, with the reason. */
export class ConfigError extends Error {}

/** Amounts of the special fields that pay or charge, when the field does not give its own `amount`. */
export const defaultFieldAmounts: Record<string, number> = {
  'tax.income': 2000,
  'tax.luxury': 1000,
  'cash.pay': 1000,
  'cash.receive': 1000,
};

const unbuiltMechanics = ['jackpot', 'loan', 'wormhole', 'taxi', 'bus', 'russian_roulette', 'restart', 'buyout', 'charges'];
const unbuiltFieldTypes = new Set(['jackpot', 'russian-roulette', 'wormhole']);
const builtFieldTypes = new Set([
  'start',
  'jail',
  'company',
  'cash.pay',
  'cash.receive',
  'chance',
  'jail.goto',
  'park',
  'tax.income',
  'tax.luxury',
]);
const builtCardTypes = new Set(['income', 'expense', 'repair', 'goto.jail', 'goto.start']);
const limits = { fields: 200, monopolies: 64, cards: 64, levels: 16, amount: 1e9 };

function isAmount(value: unknown, { positive = false } = {}): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= (positive ? 1e-9 : 0) && value <= limits.amount;
}

function amountList(value: unknown, name: string): number[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > limits.levels || !value.every((v) => isAmount(v)))
    throw new ConfigError(`${name} must be a list of 1 to ${limits.levels} amounts`);
  return value as number[];
}

function checkMonopoly(id: string, m: unknown): void {
  const name = `monopolies.${id}`;
  if (typeof m !== 'object' || m === null) throw new ConfigError(`${name} must be an object`);
  const monopoly = m as Record<string, unknown>;
  if (!isAmount(monopoly.buy_price, { positive: true })) throw new ConfigError(`${name}.buy_price must be a positive amount`);
  const kinds = ['rent_by_level', 'rent_by_count', 'dice_multipliers'].filter((k) => k in monopoly);
  if (kinds.length !== 1) throw new ConfigError(`${name} must have exactly one of rent_by_level, rent_by_count, dice_multipliers`);
  const kind = kinds[0]!;
  amountList(monopoly[kind], `${name}.${kind}`);
  if (kind === 'rent_by_level') {
    if (!isAmount(monopoly.level_cost, { positive: true })) throw new ConfigError(`${name}.level_cost must be a positive amount`);
    if (monopoly.last_field !== undefined) {
      const last = monopoly.last_field as Record<string, unknown>;
      if (typeof last !== 'object' || last === null || !isAmount(last.buy_price, { positive: true }))
        throw new ConfigError(`${name}.last_field.buy_price must be a positive amount`);
      const rents = amountList(last.rent_by_level, `${name}.last_field.rent_by_level`);
      if (rents.length !== (monopoly.rent_by_level as number[]).length)
        throw new ConfigError(`${name}.last_field.rent_by_level must have as many levels as rent_by_level`);
    }
  }
}

function checkCard(card: unknown, index: number): void {
  const name = `mechanics.chance.cards.${index}`;
  if (typeof card !== 'object' || card === null) throw new ConfigError(`${name} must be an object`);
  const c = card as Record<string, unknown>;
  if (!builtCardTypes.has(c.type as string))
    throw new ConfigError(`${name}: chance cards of type ${JSON.stringify(c.type)} are not played by this server`);
  if (c.type === 'income' || c.type === 'expense') {
    const range = c.range as Record<string, unknown> | undefined;
    if (!range || !isAmount(range.min) || !isAmount(range.max) || !isAmount(range.step, { positive: true }) || range.max < range.min)
      throw new ConfigError(`${name}.range must have amounts min <= max and a positive step`);
    if ((range.max - range.min) / range.step > 10_000) throw new ConfigError(`${name}.range has too many steps`);
  }
  if (c.type === 'repair') {
    const cost = c.cost as Record<string, unknown> | undefined;
    if (!cost || !isAmount(cost.small) || !isAmount(cost.big)) throw new ConfigError(`${name}.cost must have amounts small and big`);
  }
}

/** Throws ConfigError naming the first thing of `config` this engine cannot play. */
export function checkConfig(value: unknown): asserts value is BoardConfig {
  if (typeof value !== 'object' || value === null) throw new ConfigError('the config must be an object');
  const config = value as Record<string, unknown>;
  const mechanics = config.mechanics as Record<string, unknown> | undefined;
  if (typeof mechanics !== 'object' || mechanics === null) throw new ConfigError('mechanics must be an object');
  for (const name of unbuiltMechanics)
    if (mechanics[name] !== undefined) throw new ConfigError(`the ${name} mechanic is not played by this server`);
  const fields = config.fields;
  if (!Array.isArray(fields) || fields.length < 8 || fields.length > limits.fields)
    throw new ConfigError(`fields must be a list of 8 to ${limits.fields} fields`);
  const monopolies = config.monopolies as Record<string, unknown> | undefined;
  if (typeof monopolies !== 'object' || monopolies === null || Array.isArray(monopolies))
    throw new ConfigError('monopolies must be an object');
  const ids = Object.keys(monopolies);
  if (ids.length === 0 || ids.length > limits.monopolies) throw new ConfigError(`monopolies must have 1 to ${limits.monopolies} entries`);
  for (const id of ids) checkMonopoly(id, monopolies[id]);
  const lastSeen = new Set<string>();
  let jails = 0;
  fields.forEach((field: unknown, index) => {
    const f = field as Record<string, unknown>;
    if (typeof f !== 'object' || f === null) throw new ConfigError(`fields.${index} must be an object`);
    if (unbuiltFieldTypes.has(f.type as string))
      throw new ConfigError(`fields.${index}: fields of type ${JSON.stringify(f.type)} are not played by this server`);
    if (!builtFieldTypes.has(f.type as string)) throw new ConfigError(`fields.${index}: unknown field type ${JSON.stringify(f.type)}`);
    if ((index === 0) !== (f.type === 'start')) throw new ConfigError('the start must be field 0, and only field 0');
    if (f.type === 'jail') jails += 1;
    if (f.type === 'company') {
      const id = String(f.monopoly_id);
      if (!Number.isInteger(f.monopoly_id) || !(id in monopolies)) throw new ConfigError(`fields.${index}.monopoly_id names no monopoly`);
      if (f.is_last) {
        if (lastSeen.has(id)) throw new ConfigError(`monopoly ${id} has two last fields`);
        lastSeen.add(id);
      }
    }
    if (f.amount !== undefined && !isAmount(f.amount)) throw new ConfigError(`fields.${index}.amount must be an amount`);
    if (f.type === 'chance' && !mechanics.chance)
      throw new ConfigError(`fields.${index} is a chance field but mechanics.chance is missing`);
  });
  if (jails !== 1) throw new ConfigError('the board must have exactly one jail field');
  const used = new Set(
    fields.filter((f: Record<string, unknown>) => f.type === 'company').map((f: Record<string, unknown>) => String(f.monopoly_id)),
  );
  for (const id of ids) if (!used.has(id)) throw new ConfigError(`monopoly ${id} has no field`);
  const jail = mechanics.jail as Record<string, unknown> | undefined;
  if (!jail || !isAmount(jail.release_fee)) throw new ConfigError('mechanics.jail.release_fee must be an amount');
  const limit = jail.double_roll_attempt_limit;
  if (limit !== undefined && !(Number.isInteger(limit) && (limit as number) >= 1 && (limit as number) <= 10))
    throw new ConfigError('mechanics.jail.double_roll_attempt_limit must be 1 to 10');
  const start = mechanics.start as Record<string, unknown> | undefined;
  if (!start || !isAmount(start.income_amount) || (start.bonus_amount !== undefined && !isAmount(start.bonus_amount)))
    throw new ConfigError('mechanics.start must have an income_amount (and optionally a bonus_amount)');
  const auction = mechanics.auction as Record<string, unknown> | undefined;
  if (auction !== undefined && !isAmount(auction.bid_increment, { positive: true }))
    throw new ConfigError('mechanics.auction.bid_increment must be a positive amount');
  const mortgage = mechanics.mortgage as Record<string, unknown> | undefined;
  if (mortgage !== undefined) {
    if ('waive_multiplier' in mortgage) throw new ConfigError('waiving fields (mortgage.waive_multiplier) is not played by this server');
    if (!isAmount(mortgage.multiplier, { positive: true }) || (mortgage.multiplier as number) > 1)
      throw new ConfigError('mechanics.mortgage.multiplier must be above 0 and at most 1');
    if (
      !isAmount(mortgage.buyback_multiplier) ||
      (mortgage.buyback_multiplier as number) < 1 ||
      (mortgage.buyback_multiplier as number) > 10
    )
      throw new ConfigError('mechanics.mortgage.buyback_multiplier must be 1 to 10');
    if (mortgage.auction_multiplier !== undefined) throw new ConfigError('auctions of mortgaged fields are not played by this server');
    if (mortgage.duration !== undefined && !(Number.isInteger(mortgage.duration) && (mortgage.duration as number) >= 1))
      throw new ConfigError('mechanics.mortgage.duration must be a whole number of rounds');
  }
  const level = mechanics.field_level as Record<string, unknown> | undefined;
  if (level !== undefined) {
    const build = (level.build ?? {}) as Record<string, unknown>;
    if (build.without_monopoly !== undefined) throw new ConfigError('building without a monopoly is not played by this server');
    if (build.only_on_arrival) throw new ConfigError('building only on arrival is not played by this server');
    const sell = (level.sell ?? {}) as Record<string, unknown>;
    if (sell.multiplier !== undefined && (!isAmount(sell.multiplier) || (sell.multiplier as number) > 1))
      throw new ConfigError('mechanics.field_level.sell.multiplier must be 0 to 1');
  }
  if (mechanics.chance !== undefined) {
    const cards = (mechanics.chance as Record<string, unknown>).cards;
    if (!Array.isArray(cards) || cards.length === 0 || cards.length > limits.cards)
      throw new ConfigError(`mechanics.chance.cards must be a list of 1 to ${limits.cards} cards`);
    cards.forEach(checkCard);
  }
  const rules = mechanics.time_rules;
  if (!Array.isArray(rules) || rules.length > 16) throw new ConfigError('mechanics.time_rules must be a list of at most 16 rules');
  for (const rule of rules as Record<string, unknown>[]) {
    if (!isAmount(rule.time)) throw new ConfigError('a time rule needs a time in milliseconds');
    if (rule.type === 'start.tax') throw new ConfigError('the start.tax time rule is not played by this server');
    if (rule.type === 'rent.tax' && !(isAmount(rule.rate) && (rule.rate as number) <= 1))
      throw new ConfigError('a rent.tax time rule needs a rate from 0 to 1');
    if (rule.type !== 'start.none' && rule.type !== 'rent.tax') throw new ConfigError(`unknown time rule ${JSON.stringify(rule.type)}`);
  }
  const timers = config.timers as Record<string, unknown> | undefined;
  if (!timers || !(typeof timers.roll_dices === 'number' && timers.roll_dices >= 1 && timers.roll_dices <= 3600))
    throw new ConfigError('timers.roll_dices must be 1 to 3600 seconds');
}

/** The monopoly of a company field; undefined for other fields. */
export function monopolyOf(config: BoardConfig, fieldId: number): MonopolyConfig | undefined {
  const field = config.fields[fieldId];
  return field && field.type === 'company' ? config.monopolies[String(field.monopoly_id)] : undefined;
}

export function isLastField(config: BoardConfig, fieldId: number): boolean {
  const field = config.fields[fieldId];
  return !!field && field.type === 'company' && !!field.is_last;
}

export function buyPrice(config: BoardConfig, fieldId: number): number {
  const m = monopolyOf(config, fieldId)!;
  return 'rent_by_level' in m && m.last_field && isLastField(config, fieldId) ? m.last_field.buy_price : m.buy_price;
}

/** The fields of the monopoly `fieldId` belongs to. */
export function groupFields(config: BoardConfig, fieldId: number): number[] {
  let groups = groupsByConfig.get(config);
  if (!groups) {
    groups = config.fields.map((field) => {
      if (field.type !== 'company') return [];
      const out: number[] = [];
      config.fields.forEach((f, i) => {
        if (f.type === 'company' && f.monopoly_id === field.monopoly_id) out.push(i);
      });
      return out;
    });
    groupsByConfig.set(config, groups);
  }
  return groups[fieldId] ?? [];
}

const groupsByConfig = new WeakMap<BoardConfig, number[][]>();

export function levelCost(config: BoardConfig, fieldId: number): number {
  const m = monopolyOf(config, fieldId);
  return m && 'level_cost' in m ? m.level_cost : 0;
}

export function maxLevel(config: BoardConfig, fieldId: number): number {
  const m = monopolyOf(config, fieldId);
  return m && 'rent_by_level' in m ? m.rent_by_level.length - 1 : 0;
}

/** What selling one level gives back: the level's cost times the sell multiplier, rounded down. */
export function levelSellValue(config: BoardConfig, fieldId: number): number {
  return Math.floor(levelCost(config, fieldId) * (config.mechanics.field_level?.sell.multiplier ?? 1));
}

/** What mortgaging gives: the buy price times the mortgage multiplier, rounded down. */
export function mortgageValue(config: BoardConfig, fieldId: number): number {
  return Math.floor(buyPrice(config, fieldId) * (config.mechanics.mortgage?.multiplier ?? 0.5));
}

/** What buying a mortgaged field back costs: its mortgage value times the buyback multiplier, rounded up. */
export function buybackCost(config: BoardConfig, fieldId: number): number {
  return Math.ceil(mortgageValue(config, fieldId) * (config.mechanics.mortgage?.buyback_multiplier ?? 1.1) - 1e-9);
}

export function fieldAmount(config: BoardConfig, fieldId: number): number {
  const field = config.fields[fieldId] as { type: string; amount?: number };
  return field.amount ?? defaultFieldAmounts[field.type] ?? 0;
}

export function jailFieldId(config: BoardConfig): number {
  return config.fields.findIndex((f) => f.type === 'jail');
}
