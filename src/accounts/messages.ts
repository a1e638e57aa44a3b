import type { MailMessage } from '../mail/mailer.js';
import type { Services } from '../services.js';

/** Where players reach the server: --public-url, else the address it listens on (over HTTPS when it serves TLS). */
export function publicUrl(services: Services): string {
  const { config } = services;
  return config.accounts.publicUrl ?? `${config.tls?.certFile ? 'https' : 'http'}://${config.host}:${config.port}`;
}

const HOURS_VALID = 24;

export function verifyEmailMessage(services: Services, to: string, token: string): MailMessage {
  const link = `${publicUrl(services)}/confirm-email?token=${encodeURIComponent(token)}`;
  return {
    to,
    subject: 'Confirm your e-mail address',
    text:
      `Confirm that this address belongs to your account by opening\n\n  ${link}\n\n` +
      `or by calling account.verifyEmail with the token\n\n  ${token}\n\n` +
      `The token works once, within ${HOURS_VALID} hours. If you did not ask for this, ignore this message.\n`,
  };
}

export function addressTakenMessage(to: string): MailMessage {
  return {
    to,
    subject: 'Someone tried to sign up with your address',
    text:
      'Someone tried to create an account with this e-mail address, which already has one: no second account was made.\n\n' +
      'If it was you, sign in instead, or ask for a password reset (auth.requestPasswordReset). Otherwise ignore this message.\n',
  };
}

export function passwordResetMessage(services: Services, to: string, token: string): MailMessage {
  const link = `${publicUrl(services)}/reset-password?token=${encodeURIComponent(token)}`;
  return {
    to,
    subject: 'Reset your password',
    text:
      `Someone (hopefully you) asked to reset the password of your account. To choose a new one, open\n\n  ${link}\n\n` +
      `or call auth.resetPassword with the token\n\n  ${token}\n\n` +
      `and the new password (and your authenticator code, if two-factor sign-in is on). The token works once, within ` +
      `${HOURS_VALID} hours; a reset ends every session of the account. If you did not ask for this, ignore this message.\n`,
  };
}

export function emailChangingMessage(to: string, newAddress: string): MailMessage {
  return {
    to,
    subject: 'Your account e-mail address is being changed',
    text:
      `Someone signed in to your account asked to change its e-mail address to ${newAddress}. The change takes effect once ` +
      `that address is confirmed. If it was not you, change your password at once (or reset it).\n`,
  };
}

export function emailChangedMessage(to: string, newAddress: string): MailMessage {
  return {
    to,
    subject: 'Your account e-mail address was changed',
    text: `The e-mail address of your account is now ${newAddress}; this address no longer signs in to it.\n`,
  };
}
