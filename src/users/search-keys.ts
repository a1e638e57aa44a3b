/**
 * What users.search compares: a nick in lower case (every script, not ASCII alone). Every
 * write of `users.nick` writes `users.nick_lower` from it, with `nickColumns`.
 */
export const nickKey = (nick: string): string => nick.toLowerCase();

/** The columns of a new or changed nick. */
export const nickColumns = (nick: string): { nick: string; nick_lower: string } => ({ nick, nick_lower: nickKey(nick) });
