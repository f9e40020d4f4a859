// pino options shared by both apps. Credentials, passwords, secrets and signatures are
// redacted wherever they might appear in a logged object; routes never log them anyway.
import type { LoggerOptions } from 'pino'

export const redactPaths = [
  'req.headers.authorization',
  'req.headers["x-wsse"]',
  'req.headers.cookie',
  'req.headers["x-kigo-identity-signature"]',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers["x-wsse"]',
  'headers.cookie',
  '*.password',
  '*.api_password',
  '*.secret',
  '*.consumer_secret',
  '*.token_secret',
  '*.oauth_signature',
  '*.secretKey',
  '*.adminToken',
]

/** `mixin`: fields added to every line (tracing's trace_id and span_id, docs/operations.md#traces). */
export function loggerOptions(level: string, name: string, mixin?: () => Record<string, string>): LoggerOptions {
  return {
    level,
    name,
    redact: { paths: redactPaths, censor: '[redacted]' },
    ...(mixin ? { mixin } : {}),
  }
}
