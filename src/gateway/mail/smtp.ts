// The one way kigo hands a mail to an SMTP server: nodemailer, to KIGO_SMTP_URL
// (docs/operations.md#mail). Only the outbox's sender (sender.ts) calls it, never a request.
import nodemailer from 'nodemailer'
import type { MailMessage } from './outbox.js'

export interface MailTransport {
  /** Resolves once the SMTP server took the mail; rejects with MailUnavailable otherwise. */
  send(message: MailMessage): Promise<void>
}

/** The SMTP server could not be reached, did not answer in time, or did not take the mail. */
export class MailUnavailable extends Error {
  override name = 'MailUnavailable'
}

/**
 * Mail through the SMTP server of `smtpUrl` (smtp:// or smtps://, credentials in the URL),
 * from `from`. Each of connecting, the greeting and every later wait for the server is
 * bounded by `timeoutMs`, so a server that accepts the connection and never answers ends
 * the attempt (the sender also bounds the whole send).
 */
export function smtpTransport(smtpUrl: string, from: string, timeoutMs: number): MailTransport {
  const transport = nodemailer.createTransport({ url: smtpUrl, connectionTimeout: timeoutMs, greetingTimeout: timeoutMs, socketTimeout: timeoutMs } as Parameters<typeof nodemailer.createTransport>[0])
  return {
    async send(message) {
      try {
        await transport.sendMail({ from, ...message })
      } catch (err) {
        throw new MailUnavailable(`mail not sent: ${(err as Error).message}`, { cause: err })
      }
    },
  }
}
