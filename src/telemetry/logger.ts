/**
 * The gateway's pino logger. Redaction is configuration: any credential a
 * header or a config object might carry is censored wherever it appears.
 */
import { pino, type Logger, type LoggerOptions, type DestinationStream } from 'pino';

export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["proxy-authorization"]',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
  '*.authorization',
  '*.cookie',
  '*.token',
  '*.password',
  '*.secret',
  '*.apiKey',
];

export function createLogger(level: LoggerOptions['level'], destination?: DestinationStream): Logger {
  const options: LoggerOptions = {
    level,
    base: { service: 'a2a-egress' },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return destination ? pino(options, destination) : pino(options);
}
