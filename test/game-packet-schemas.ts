/**
 * The game SDK's version-2 packet, declared again here from its description (setup: config,
 * flags, players with their equipment; events of the known types with their fields; status:
 * round, players, fields, turn with the action list, timer; time), so that every packet a test
 * sees is checked against what a client built on that SDK reads.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';

const Num = Type.Number();
const Bit = Type.Optional(Type.Union([Type.Literal(0), Type.Literal(1)]));
const Id = Type.String();

const Range = Type.Object({ min: Num, max: Num, step: Num }, { additionalProperties: false });
const ChanceCard = Type.Union([
  Type.Object(
    { type: Type.Union([Type.Literal('income'), Type.Literal('expense')]), text_id: Num, range: Range },
    { additionalProperties: false },
  ),
  Type.Object(
    { type: Type.Literal('repair'), text_id: Num, cost: Type.Object({ small: Num, big: Num }, { additionalProperties: false }) },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      type: Type.Union(
        ['goto.jail', 'goto.start', 'teleport', 'move.one', 'move.skip', 'move.undo', 'reverse', 'disaster'].map((t) => Type.Literal(t)),
      ),
      text_id: Num,
    },
    { additionalProperties: false },
  ),
]);

const Field = Type.Union([
  Type.Object({ is_corner: Type.Literal(1), type: Type.Union([Type.Literal('start'), Type.Literal('jail')]) }),
  Type.Object({
    is_corner: Bit,
    type: Type.Union(
      [
        'cash.pay',
        'cash.receive',
        'chance',
        'jackpot',
        'jail.goto',
        'park',
        'russian-roulette',
        'tax.income',
        'tax.luxury',
        'wormhole',
      ].map((t) => Type.Literal(t)),
    ),
  }),
  Type.Object({ is_corner: Type.Optional(Type.Undefined()), type: Type.Literal('company'), monopoly_id: Num, is_last: Bit }),
]);

const Monopoly = Type.Union([
  Type.Object({
    buy_price: Num,
    rent_by_level: Type.Array(Num),
    level_cost: Num,
    last_field: Type.Optional(Type.Object({ buy_price: Num, rent_by_level: Type.Array(Num) })),
  }),
  Type.Object({ buy_price: Num, rent_by_count: Type.Array(Num) }),
  Type.Object({ buy_price: Num, dice_multipliers: Type.Array(Num) }),
]);

const Config = Type.Object({
  version: Num,
  board_size: Type.Tuple([Num, Num]),
  timers: Type.Object({ roll_dices: Num }),
  fields: Type.Array(Field),
  monopolies: Type.Record(Type.String(), Monopoly),
  mechanics: Type.Object({
    auction: Type.Optional(Type.Object({ bid_increment: Num })),
    chance: Type.Optional(Type.Object({ cards: Type.Array(ChanceCard) }, { additionalProperties: false })),
    field_level: Type.Optional(
      Type.Object({
        build: Type.Optional(Type.Object({ uneven: Bit, only_on_arrival: Bit })),
        sell: Type.Object({ multiplier: Type.Optional(Num) }),
      }),
    ),
    jail: Type.Object({ release_fee: Num, double_roll_attempt_limit: Type.Optional(Num) }),
    mortgage: Type.Optional(
      Type.Union([
        Type.Object({ duration: Type.Optional(Num), multiplier: Num, buyback_multiplier: Num, auction_multiplier: Type.Optional(Num) }),
        Type.Object({ waive_multiplier: Num }),
      ]),
    ),
    start: Type.Object({ income_amount: Num, bonus_amount: Type.Optional(Num) }),
    time_rules: Type.Array(
      Type.Union([
        Type.Object({ type: Type.Literal('start.none'), time: Num }),
        Type.Object({ type: Type.Literal('start.tax'), time: Num, sum: Num }),
        Type.Object({ type: Type.Literal('rent.tax'), time: Num, rate: Num }),
      ]),
    ),
  }),
});

const SetupPlayer = Type.Object({
  user_id: Num,
  team: Type.Optional(Type.Union([Type.Literal(0), Type.Literal(1)])),
  is_vip: Bit,
  is_loan_available: Bit,
  equipment: Type.Object({
    cards: Type.Array(Type.Object({ field_id: Num, item_proto_id: Num, item_id: Type.Optional(Num), rent_multiplier: Num })),
    generator: Type.Optional(Type.Object({ item_proto_id: Num, variant_id: Type.Optional(Num), seed: Type.Optional(Type.String()) })),
    joke: Type.Optional(Type.Object({ item_proto_id: Num })),
  }),
});

const Setup = Type.Object({
  config: Config,
  flags: Type.Object({ game_mode: Num, game_submode: Num, game_2x2: Bit }),
  players: Type.Array(SetupPlayer),
});

const event = (type: string, fields: Record<string, TSchema> = {}) => Type.Object({ id: Id, type: Type.Literal(type), ...fields });
const U = { user_id: Num };
const UF = { user_id: Num, field_id: Num };
const Side = Type.Object({ user_id: Num, field_ids: Type.Array(Num), cash: Num });

const Event = Type.Union([
  event('roll-dices', {
    ...U,
    dices: Type.Union([Type.Tuple([Num]), Type.Tuple([Num, Num]), Type.Tuple([Num, Num, Num])]),
    move_reversed: Bit,
    double_spent: Bit,
  }),
  event('roll-dices.doubling', U),
  event('roll-dices.jail.success', U),
  event('roll-dices.jail.fail', U),
  event('purchase.offer', UF),
  event('purchase', { ...UF, price: Num }),
  event('purchase.reject', UF),
  event('auction.put', { ...UF, bid: Num }),
  event('auction.bid', { ...U, bid: Num }),
  event('auction.reject', U),
  event('auction.win', { ...UF, user_id_seller: Type.Optional(Num), price: Num }),
  event('auction.cancel', { field_id: Num, user_id_seller: Type.Optional(Num), price: Type.Optional(Num) }),
  event('bank.income', { ...U, amount: Num }),
  event('bank.fee', { ...U, amount: Num }),
  event('bank.fee.pay', { ...U, amount: Num }),
  event('bank.return', { ...U, amount: Num }),
  event('rent.pay', { ...UF, amount: Num }),
  event('rent.pay.complete', { ...UF, user_id_receiver: Num, amount: Num, amount_received: Type.Optional(Num) }),
  event('rent.pay.cancel', { ...U, user_id_receiver: Num }),
  event('rent.zero', UF),
  event('rent.zero.self', UF),
  event('rent.zero.teammate', UF),
  event('rent.zero.mortgaged', UF),
  event('jail.put', U),
  event('jail.put.double', U),
  event('jail.fine', U),
  event('jail.visit', U),
  event('jail.release.pay', U),
  event('jail.release', { ...U, position_after: Type.Optional(Num) }),
  event('level.build', UF),
  event('level.sell', UF),
  event('mortgage.put', UF),
  event('mortgage.buyback', UF),
  event('mortgage.expire', UF),
  event('contract.send', { ...U, user_id_to: Num }),
  event('contract.accept', { ...U, contract: Type.Tuple([Side, Side]) }),
  event('contract.reject', { ...U, timeout: Bit }),
  event('start.income', U),
  event('start.bonus', U),
  event('bankrupt', { ...U, user_id_bankrupt: Num }),
  event('chance', {
    ...U,
    chance_index: Num,
    data: Type.Optional(
      Type.Union([
        Type.Object({ amount: Num }, { additionalProperties: false }),
        Type.Object({ field_id: Num, move_reversed: Bit }, { additionalProperties: false }),
      ]),
    ),
  }),
  event('game-over'),
  event('leave', { ...U, kicked: Bit }),
  event('park', U),
  event('skip', U),
]);

const actionNames = [
  'auction.put',
  'auction.bid',
  'auction.reject',
  'bank.fee.pay',
  'bus.move',
  'contract.send',
  'contract.accept',
  'contract.reject',
  'contract.review.approve',
  'contract.review.object',
  'contract.fallback',
  'jackpot.reject',
  'jackpot.play',
  'jail.release.pay',
  'level.build',
  'level.sell',
  'loan.take',
  'loan.repay',
  'mortgage.put',
  'mortgage.buyback',
  'mortgage.auction',
  'waive',
  'purchase',
  'purchase.reject',
  'rent.pay',
  'roll-dices',
  'russian-roulette.play',
  'russian-roulette.reject',
  'start.tax.pay',
  'taxi.move',
  'triple.move',
  'wormhole.use',
  'wormhole.open',
  'wormhole.jump',
  'wormhole.reject',
  'restart',
];

const StatusPlayer = Type.Object({
  user_id: Num,
  status: Num,
  position: Num,
  cash: Num,
  score: Num,
  jail: Type.Optional(Type.Object({ roll_double_attempts: Num })),
  loan: Type.Union([
    Type.Object({ taken: Type.Literal(0), unlock_round: Num }, { additionalProperties: false }),
    Type.Object({ taken: Type.Literal(1), debt: Num, return_round: Num }, { additionalProperties: false }),
  ]),
});

const Status = Type.Object({
  round: Num,
  players: Type.Array(StatusPlayer),
  fields: Type.Array(
    Type.Object({
      field_id: Num,
      owner_user_id: Num,
      level: Num,
      mortgage: Type.Optional(Type.Object({ round_until: Type.Optional(Num) })),
      last_rent_round: Type.Optional(Num),
      protection: Type.Optional(Num),
    }),
  ),
  turn: Type.Object({
    user_id: Type.Union([Num, Type.Null()]),
    action: Type.Object({ user_id: Type.Union([Num, Type.Null()]), list: Type.Array(Type.Union(actionNames.map((a) => Type.Literal(a)))) }),
    move_reversed: Bit,
    auction: Type.Optional(Type.Object({ field_id: Num, bid: Num, user_ids_rejected: Type.Array(Num) })),
    contract: Type.Optional(Type.Tuple([Side, Side])),
    contracts_sent: Type.Optional(Num),
    jackpot: Type.Optional(Type.Object({ superprize: Num })),
    payment: Type.Optional(Type.Object({ to_user_id: Type.Optional(Num), amount: Num })),
    field_ids_move: Type.Optional(
      Type.Array(Type.Object({ field_id: Num, data: Type.Union([Type.Object({ stop: Num }), Type.Object({ field_id: Num })]) })),
    ),
    field_ids_level_built: Type.Optional(Type.Array(Num)),
    field_ids_mortgaged: Type.Optional(Type.Array(Num)),
  }),
  timer: Type.Optional(
    Type.Union([Type.Object({ ts_expires: Num, is_extra: Type.Boolean() }), Type.Object({ expires_in: Num, is_extra: Type.Boolean() })]),
  ),
  viewers_count: Type.Optional(Num),
});

const Packet = Type.Object({
  setup: Type.Optional(Setup),
  events: Type.Array(Event),
  status: Type.Optional(Status),
  time: Type.Object({ ts_start: Num, ts_now: Num, inactive: Num, ts_inactive: Type.Optional(Num) }),
});

const packetCheck = TypeCompiler.Compile(Packet);

/** What a client reading packets with the game SDK would refuse in `packet`: empty when it reads it. */
export function packetProblems(packet: unknown): string[] {
  if (packetCheck.Check(packet)) return [];
  return [...packetCheck.Errors(packet)].slice(0, 5).map((e) => `${e.path}: ${e.message}`);
}
