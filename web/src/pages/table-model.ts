/**
 * What the table reads of the game SDK's version-2 packets ({setup?, events, status, time}), and
 * what it makes of them: the fields' names and groups (a board config carries none, so they come
 * from the field's type and its monopoly), and the current state of a game from its packets.
 */

export interface FieldConfig {
  type: string;
  monopoly_id?: number;
  is_last?: 0 | 1;
  is_corner?: 0 | 1;
  amount?: number;
}
export interface MonopolyConfig {
  buy_price: number;
  rent_by_level?: number[];
  rent_by_count?: number[];
  dice_multipliers?: number[];
  level_cost?: number;
  last_field?: { buy_price: number; rent_by_level: number[] };
}
export interface BoardConfig {
  board_size: [number, number];
  fields: FieldConfig[];
  monopolies: Record<string, MonopolyConfig>;
  mechanics: {
    jail?: { release_fee: number };
    mortgage?: { multiplier: number; buyback_multiplier: number };
    field_level?: { sell?: { multiplier?: number } };
    chance?: { cards: { type: string; text_id: number }[] };
  };
}
export interface SetupPlayer {
  user_id: number;
  equipment?: {
    cards?: { field_id: number; item_proto_id: number; rent_multiplier: number }[];
    generator?: { item_proto_id: number };
    joke?: { item_proto_id: number };
  };
}
export interface Setup {
  config: BoardConfig;
  players: SetupPlayer[];
  random?: { seed_sha256?: string };
}
export interface GameEvent {
  id: string;
  type: string;
  [key: string]: unknown;
}
export interface ContractSide {
  user_id: number;
  field_ids: number[];
  cash: number;
}
export interface Status {
  round: number;
  players: { user_id: number; status: number; position: number; cash: number; score: number; jail?: { roll_double_attempts: number } }[];
  fields: { field_id: number; owner_user_id: number; level: number; mortgage?: { round_until?: number } }[];
  turn: {
    user_id: number | null;
    action: { user_id: number | null; list: string[] };
    auction?: { field_id: number; bid: number; user_ids_rejected: number[]; user_id_leader?: number };
    contract?: [ContractSide, ContractSide];
    payment?: { amount: number; to_user_id?: number };
  };
  timer?: { ts_expires: number };
}
export interface Packet {
  setup?: Setup;
  events: GameEvent[];
  status: Status;
  time: { ts_start: number; ts_now: number };
}

/** A group of fields: a monopoly, named by its kind (and colour for those with levels). */
export interface Group {
  id: number;
  kind: 'level' | 'count' | 'dice';
  /** The colour index of a monopoly with levels (0, 1, ... in board order). */
  colour: number;
}

export interface FieldView {
  id: number;
  type: string;
  group?: Group;
  /** The field's place among its group's fields (1, 2, ...). */
  index: number;
  price?: number;
  rents?: number[];
  levelCost?: number;
  amount?: number;
  corner: boolean;
}

export function fieldsOf(config: BoardConfig): FieldView[] {
  const groups = new Map<number, Group>();
  const seen = new Map<number, number>();
  let colours = 0;
  return config.fields.map((field, id) => {
    const view: FieldView = { id, type: field.type, index: 0, corner: field.is_corner === 1, amount: field.amount };
    if (field.type !== 'company' || field.monopoly_id === undefined) return view;
    const monopoly = config.monopolies[String(field.monopoly_id)];
    if (!monopoly) return view;
    let group = groups.get(field.monopoly_id);
    if (!group) {
      const kind = monopoly.rent_by_level ? 'level' : monopoly.rent_by_count ? 'count' : 'dice';
      group = { id: field.monopoly_id, kind, colour: kind === 'level' ? colours++ : -1 };
      groups.set(field.monopoly_id, group);
    }
    seen.set(group.id, (seen.get(group.id) ?? 0) + 1);
    view.group = group;
    view.index = seen.get(group.id)!;
    const last = field.is_last === 1 ? monopoly.last_field : undefined;
    view.price = last?.buy_price ?? monopoly.buy_price;
    view.rents = last?.rent_by_level ?? monopoly.rent_by_level ?? monopoly.rent_by_count ?? monopoly.dice_multipliers;
    view.levelCost = monopoly.level_cost;
    return view;
  });
}

/**
 * Where each field sits on the board's rim (grid row and column from 1), clockwise from the
 * top-left corner; undefined when the board's size does not hold its fields on the rim.
 */
export function rimPlaces(config: BoardConfig): { row: number; column: number }[] | undefined {
  const [width, height] = config.board_size;
  const count = config.fields.length;
  if (width < 2 || height < 2 || 2 * (width + height) - 4 !== count) return undefined;
  const places: { row: number; column: number }[] = [];
  for (let c = 1; c <= width; c++) places.push({ row: 1, column: c });
  for (let r = 2; r <= height; r++) places.push({ row: r, column: width });
  for (let c = width - 1; c >= 1; c--) places.push({ row: height, column: c });
  for (let r = height - 1; r >= 2; r--) places.push({ row: r, column: 1 });
  return places;
}

/** The game as a page shows it: its setup, the latest status and every event so far. */
export interface GameView {
  setup: Setup;
  status: Status;
  time: Packet['time'];
  events: GameEvent[];
  /** Packets applied: the next one expected is number `count`. */
  count: number;
  /** Date.now() when the latest packet was applied (for the timer). */
  receivedAt: number;
}

/** Applies packet number `seq`; a packet out of order leaves the view as it was. */
export function apply(view: GameView | undefined, seq: number, packet: Packet, now: number): GameView | undefined {
  if (seq !== (view?.count ?? 0)) return view;
  if (!view) {
    if (!packet.setup) return undefined;
    return { setup: packet.setup, status: packet.status, time: packet.time, events: [...packet.events], count: 1, receivedAt: now };
  }
  return {
    setup: view.setup,
    status: packet.status,
    time: packet.time,
    events: [...view.events, ...packet.events],
    count: seq + 1,
    receivedAt: now,
  };
}

/** The view after the first `count` packets (a replay's position). */
export function viewAt(packets: Packet[], count: number): GameView | undefined {
  let view: GameView | undefined;
  for (let seq = 0; seq < count && seq < packets.length; seq++) view = apply(view, seq, packets[seq]!, 0);
  return view;
}

export const winnerOf = (events: GameEvent[]) => {
  const over = events.find((event) => event.type === 'game-over');
  return over ? (over.user_id_winner as number | null) : undefined;
};
