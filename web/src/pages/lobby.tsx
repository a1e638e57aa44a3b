import { useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import { useI18n } from '../i18n';
import { feedState } from '../realtime';
import { followRoom, invitationsOf, lobby, lobbyNotice, loadLobby, roomOf, type Lobby, type Room } from '../rooms';
import { session } from '../session';
import { useStore } from '../store';
import { tablePath } from '../table-links';
import { Form, Loading, Outcome, Page, UserRow, useAction, useLoad } from '../ui';
import type { UserLike } from '../users';

const SEATS = [2, 3, 4, 5];
const FRIENDS_PAGE = 50;
type Setting = 'private' | 'autostart' | 'maxplayers';

/** After a change: the feed tells it; while the feed is away, the lobby is read again. */
async function settled(): Promise<void> {
  if (feedState.value !== 'live') await loadLobby();
}

const nickOf = (state: Lobby, userId: number) => state.users.get(userId)?.nick ?? `#${userId}`;
const userOf = (state: Lobby, userId: number): UserLike => state.users.get(userId) ?? { user_id: userId, nick: `#${userId}` };

/** `/lobby`: the rooms waiting for players, live; the player's own room and invitations; a new room. */
export function LobbyPage() {
  const { t } = useI18n();
  const me = useStore(session);
  const state = useStore(lobby);
  const notice = useStore(lobbyNotice);
  const feed = useStore(feedState);
  const first = useLoad(async () => {
    if (!lobby.value) await loadLobby();
    return true;
  }, []);
  const playing = useLoad(async () => {
    const { data } = await ok(api.POST('/api/users.get', { body: { user_ids: String(me!.user_id) } }));
    const self = data[0];
    return self && 'current_game' in self ? self.current_game : undefined;
  }, []);
  const userId = me?.user_id;
  const mine = roomOf(state, userId);
  const invited = invitationsOf(state, userId);
  const others = state ? [...state.rooms.values()].filter((room) => room.status === 0 && room !== mine && !invited.includes(room)) : [];
  const kinds = { kicked: 'kickedNotice', deleted: 'deletedNotice' } as const;

  return (
    <Page title={t('lobby')}>
      <p class="muted" role="status">
        {feed === 'live' ? t('live') : t('offline')}
      </p>
      {playing.data && (
        <p class="notice">
          {t('playingNow')} <a href={tablePath(playing.data.gs_id, playing.data.gs_game_id)}>{t('backToGame')}</a>
        </p>
      )}
      {notice && !mine && <Outcome notice={t(kinds[notice.kind])} />}
      {!state ? (
        <Loading error={first.error} />
      ) : (
        <div class="lobby-columns">
          <div>
            {mine ? <MyRoom room={mine} state={state} userId={userId!} /> : <CreateRoom />}
            {invited.length > 0 && (
              <section class="card" aria-labelledby="invitations-title">
                <h2 id="invitations-title">{t('invitations')}</h2>
                <ul class="plain rooms">
                  {invited.map((room) => (
                    <RoomRow key={room.room_id} room={room} state={state} canJoin={!mine} invitedBy={inviterOf(room, userId!)} />
                  ))}
                </ul>
              </section>
            )}
          </div>
          <section class="card" aria-labelledby="rooms-title">
            <h2 id="rooms-title">{t('rooms')}</h2>
            {others.length === 0 ? (
              <p>{t('noRooms')}</p>
            ) : (
              <ul class="plain rooms" aria-label={t('rooms')}>
                {others.map((room) => (
                  <RoomRow key={room.room_id} room={room} state={state} canJoin={!mine} />
                ))}
              </ul>
            )}
          </section>
        </div>
      )}
    </Page>
  );
}

const inviterOf = (room: Room, userId: number) => room.invites.find(([invited]) => invited === userId)?.[1];

function RoomFacts({ room }: { room: Room }) {
  const { t } = useI18n();
  const facts = [t('seats', { n: room.players.flat().length, max: room.settings.maxplayers })];
  if (room.settings.private) facts.push(t('privateMark'));
  if (room.settings.autostart) facts.push(t('autostartMark'));
  return <p class="muted seats">{facts.join(' · ')}</p>;
}

/** A room of the list (or an invitation to it): who waits in it, and a seat to take. */
function RoomRow({ room, state, canJoin, invitedBy }: { room: Room; state: Lobby; canJoin: boolean; invitedBy?: number }) {
  const { t } = useI18n();
  const action = useAction();
  const admin = nickOf(state, room.admin);
  const title = invitedBy !== undefined ? t('invitationFrom', { nick: nickOf(state, invitedBy) }) : t('roomOf', { nick: admin });
  const headingId = `room-${room.room_id}${invitedBy !== undefined ? '-invitation' : ''}`;
  const join = () =>
    action.run(async () => {
      await ok(api.POST('/api/rooms.join', { body: { room_id: Number(room.room_id) } }));
      await settled();
    });
  return (
    <li class="room" aria-labelledby={headingId} data-room-id={room.room_id}>
      <h3 id={headingId}>{title}</h3>
      <RoomFacts room={room} />
      <ul class="plain players">
        {room.players.flat().map((id) => (
          <UserRow key={id} user={userOf(state, id)}>
            {id === room.admin && <span class="muted">({t('roomAdmin')})</span>}
          </UserRow>
        ))}
      </ul>
      {canJoin && (
        <button type="button" onClick={join} disabled={action.busy} aria-label={t('joinRoomOf', { nick: admin })}>
          {t('join')}
        </button>
      )}
      <Outcome error={action.error} />
    </li>
  );
}

/** The room the player waits in: its players and invitations, live; the creator's settings, kicks and start. */
function MyRoom({ room, state, userId }: { room: Room; state: Lobby; userId: number }) {
  const { t } = useI18n();
  const action = useAction();
  const isAdmin = room.admin === userId;
  const players = room.players.flat();
  const roomId = Number(room.room_id);
  const call = (work: () => Promise<unknown>) =>
    action.run(async () => {
      await work();
      await settled();
    });
  const kick = (targetId: number) => call(() => ok(api.POST('/api/rooms.kick', { body: { room_id: roomId, user_id: targetId } })));
  // A setting changed shows its new value until the room's next version (or the refusal) comes.
  const [pending, setPending] = useState<{ param: Setting; value: number; v: number } | undefined>(undefined);
  const shown = (param: Setting) => (pending?.param === param && pending.v === room.v ? pending.value : room.settings[param]);
  const setting = (param: Setting, value: number) => {
    setPending({ param, value, v: room.v });
    return action.run(async () => {
      try {
        await ok(api.POST('/api/rooms.settingsChange', { body: { room_id: roomId, param, value } }));
      } catch (failure) {
        setPending(undefined);
        throw failure;
      }
      await settled();
    });
  };
  const start = () =>
    call(async () => {
      await ok(api.POST('/api/rooms.startGame', { body: { room_id: roomId } }));
      // The feed takes every player to the table; should it be away, the answer does it here.
      await followRoom(room.room_id);
    });

  return (
    <section class="card my-room" aria-labelledby="my-room-title">
      <h2 id="my-room-title">{t('yourRoom')}</h2>
      <RoomFacts room={room} />
      <ul class="plain players" aria-live="polite">
        {players.map((id) => (
          <UserRow key={id} user={userOf(state, id)}>
            {id === room.admin && <span class="muted">({t('roomAdmin')})</span>}
            {isAdmin && id !== userId && (
              <button type="button" class="secondary" onClick={() => kick(id)} aria-label={`${t('kick')}: ${nickOf(state, id)}`}>
                {t('kick')}
              </button>
            )}
          </UserRow>
        ))}
      </ul>
      {room.invites.length > 0 && (
        <>
          <h3>{t('invitedList')}</h3>
          <ul class="plain invited" aria-label={t('invitedList')}>
            {room.invites.map(([id]) => (
              <UserRow key={id} user={userOf(state, id)}>
                {isAdmin && (
                  <button type="button" class="secondary" onClick={() => kick(id)} aria-label={`${t('withdraw')}: ${nickOf(state, id)}`}>
                    {t('withdraw')}
                  </button>
                )}
              </UserRow>
            ))}
          </ul>
        </>
      )}
      {isAdmin && (
        <fieldset class="room-settings">
          <legend>{t('roomSettings')}</legend>
          {(['private', 'autostart'] as const).map((param) => (
            <div class="field check" key={param}>
              <input
                id={`room-${param}`}
                type="checkbox"
                checked={shown(param) === 1}
                disabled={action.busy}
                onChange={(e) => setting(param, (e.target as HTMLInputElement).checked ? 1 : 0)}
              />
              <label for={`room-${param}`}>{t(param === 'private' ? 'privateRoom' : 'autostart')}</label>
            </div>
          ))}
          <div class="field">
            <label for="room-maxplayers">{t('maxPlayers')}</label>
            <select
              id="room-maxplayers"
              value={String(shown('maxplayers'))}
              disabled={action.busy}
              onChange={(e) => setting('maxplayers', Number((e.target as HTMLSelectElement).value))}
            >
              {SEATS.map((n) => (
                <option key={n} value={String(n)}>
                  {n}
                </option>
              ))}
            </select>
          </div>
        </fieldset>
      )}
      <InviteFriend room={room} />
      <div class="actions">
        {isAdmin && (
          <button type="button" onClick={start} disabled={action.busy || players.length < 2} aria-describedby="start-hint">
            {t('startGame')}
          </button>
        )}
        {isAdmin && (
          <button
            type="button"
            class="secondary"
            onClick={() => call(() => ok(api.POST('/api/rooms.delete', { body: { room_id: roomId } })))}
            disabled={action.busy}
          >
            {t('deleteRoom')}
          </button>
        )}
        <button type="button" class="secondary" onClick={() => call(() => ok(api.POST('/api/rooms.leave')))} disabled={action.busy}>
          {t('leave')}
        </button>
      </div>
      <p id="start-hint" class="muted">
        {isAdmin ? (players.length < 2 ? t('needTwo') : '') : t('waitingStart')}
      </p>
      <Outcome error={action.error} />
    </section>
  );
}

/** Friends read by pages of 50 (friends.get's most), the first 500. */
async function readFriends() {
  const friends = [];
  for (let offset = 0; offset < 500; offset += FRIENDS_PAGE) {
    const { data } = await ok(api.POST('/api/friends.get', { body: { type: 'short', count: FRIENDS_PAGE, offset } }));
    friends.push(...data.friends);
    if (data.friends.length < FRIENDS_PAGE || friends.length >= data.count) break;
  }
  return friends;
}

/** Invites one of the player's friends who is neither in the room nor invited to it. */
function InviteFriend({ room }: { room: Room }) {
  const { t } = useI18n();
  const action = useAction();
  const friends = useLoad(readFriends, []);
  const [chosen, setChosen] = useState('');
  const taken = new Set([...room.players.flat(), ...room.invites.map(([id]) => id)]);
  const free = (friends.data ?? []).filter((friend) => !taken.has(friend.user_id));
  const value = free.some((friend) => String(friend.user_id) === chosen) ? chosen : String(free[0]?.user_id ?? '');
  const invite = () =>
    action.run(async () => {
      const friend = free.find((f) => String(f.user_id) === value);
      if (!friend) return;
      await ok(api.POST('/api/rooms.invite', { body: { room_id: Number(room.room_id), user_id: friend.user_id } }));
      return t('inviteSent', { nick: friend.nick });
    });
  if (!friends.data) return <Loading error={friends.error} />;
  return (
    <Form onSubmit={invite}>
      {free.length === 0 ? (
        <p class="muted">{t('noFriendsToInvite')}</p>
      ) : (
        <div class="inline">
          <div class="field">
            <label for="invite-friend">{t('inviteFriend')}</label>
            <select id="invite-friend" value={value} onChange={(e) => setChosen((e.target as HTMLSelectElement).value)}>
              {free.map((friend) => (
                <option key={friend.user_id} value={String(friend.user_id)}>
                  {friend.nick}
                </option>
              ))}
            </select>
          </div>
          <button type="submit" disabled={action.busy}>
            {t('invite')}
          </button>
        </div>
      )}
      <Outcome error={action.error} notice={action.notice} />
    </Form>
  );
}

/** A new room: its seats, whether it is private, whether it starts by itself. */
function CreateRoom() {
  const { t } = useI18n();
  const action = useAction();
  const [maxplayers, setMaxplayers] = useState(4);
  const [privateRoom, setPrivate] = useState(false);
  const [autostart, setAutostart] = useState(false);
  const create = () =>
    action.run(async () => {
      await ok(
        api.POST('/api/rooms.create', {
          body: { maxplayers, option_private: privateRoom ? 1 : 0, option_autostart: autostart ? 1 : 0 },
        }),
      );
      await settled();
    });
  return (
    <section class="card" aria-labelledby="create-title">
      <h2 id="create-title">{t('createRoom')}</h2>
      <Form onSubmit={create} label={t('createRoom')}>
        <div class="field">
          <label for="new-maxplayers">{t('maxPlayers')}</label>
          <select
            id="new-maxplayers"
            value={String(maxplayers)}
            onChange={(e) => setMaxplayers(Number((e.target as HTMLSelectElement).value))}
          >
            {SEATS.map((n) => (
              <option key={n} value={String(n)}>
                {n}
              </option>
            ))}
          </select>
        </div>
        <div class="field check">
          <input
            id="new-private"
            type="checkbox"
            checked={privateRoom}
            onChange={(e) => setPrivate((e.target as HTMLInputElement).checked)}
          />
          <label for="new-private">{t('privateRoom')}</label>
        </div>
        <div class="field check">
          <input
            id="new-autostart"
            type="checkbox"
            checked={autostart}
            onChange={(e) => setAutostart((e.target as HTMLInputElement).checked)}
          />
          <label for="new-autostart">{t('autostart')}</label>
        </div>
        <button type="submit" disabled={action.busy}>
          {t('create')}
        </button>
        <Outcome error={action.error} />
      </Form>
    </section>
  );
}
