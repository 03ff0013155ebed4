/**
 * Turns the two exchanges of one case (straight to the remote, and through
 * the gateway) into table cells. Everything printed passes through
 * terminalSafe: the remote's bytes are shown, never obeyed.
 */
import { findGatewayErrorInfo } from '../src/envelope/envelope.js';
import type { Exchange } from './probe.js';
import { clip, formatBytes, terminalSafe } from './table.js';

/** What the gateway answered, read as a caller would read it. */
export interface GatewayView {
  /** `invalid` means the reply broke the gateway's contract (a bug worth reporting). */
  readonly kind: 'result' | 'error' | 'invalid';
  readonly code?: number;
  readonly reason?: string;
  readonly message?: string;
  /** For results: "Message", "Task" or "result". */
  readonly resultKind?: string;
  /** For invalid: what was wrong. */
  readonly problem?: string;
}

const PREVIEW_CHARS = 60;
const ENVELOPE_PREFIX = /^\{"jsonrpc":"2\.0","id":(?:"[^"]*"|-?\d+|null),/;
const MESSAGE_CHARS = 96;
/** Response headers a remote should not be able to set on a caller. */
const TELLING_HEADERS = ['set-cookie', 'server', 'x-powered-by'] as const;

export function readGatewayReply(gw: Exchange, expectedId: string): GatewayView {
  const invalid = (problem: string): GatewayView => ({ kind: 'invalid', problem });
  if (gw.failure) return invalid(`no reply: ${gw.failure}`);
  if (!gw.complete) return invalid('reply did not finish');
  if (gw.status !== 200) return invalid(`HTTP ${gw.status}`);
  if (!String(gw.headers['content-type'] ?? '').startsWith('application/json')) return invalid('not application/json');
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(gw.head.toString('utf8')) as Record<string, unknown>;
  } catch {
    return invalid('body is not JSON');
  }
  if (body.jsonrpc !== '2.0' || body.id !== expectedId) return invalid('not a JSON-RPC reply with the caller id');
  const hasResult = Object.hasOwn(body, 'result');
  if (hasResult === Object.hasOwn(body, 'error')) return invalid('needs exactly one of result/error');
  if (hasResult) return { kind: 'result', resultKind: resultKind(body.result) };
  const error = body.error as { code?: unknown; message?: unknown; data?: unknown };
  // The gateway's ErrorInfo is the one in its own domain (A2A's ErrorInfo comes first for A2A codes).
  const reason = findGatewayErrorInfo(error.data)?.reason;
  if (typeof error.code !== 'number' || typeof error.message !== 'string' || typeof reason !== 'string') {
    return invalid('error lacks code, message or ErrorInfo reason');
  }
  return { kind: 'error', code: error.code, reason, message: error.message };
}

function resultKind(result: unknown): string {
  if (result !== null && typeof result === 'object') {
    if ('message' in result) return 'Message';
    if ('status' in result && 'id' in result) return 'Task';
  }
  return 'result';
}

export function remoteCell(direct: Exchange): string[] {
  if (direct.failure) return [terminalSafe(direct.failure)];
  const type = String(direct.headers['content-type'] ?? '(no type)').split(';')[0]!.trim();
  const lines = [`${direct.status} ${terminalSafe(type)}`];
  const encoding = direct.headers['content-encoding'];
  if (encoding) lines.push(`encoding: ${terminalSafe(String(encoding))}`);
  lines.push(direct.complete ? formatBytes(direct.wireBytes) : `${formatBytes(direct.wireBytes)}+ and counting`);
  return lines;
}

export function directCell(direct: Exchange): string[] {
  if (direct.failure) return ['(nothing)'];
  // Every JSON-RPC body starts with the same envelope prefix: skip it so the preview shows what differs.
  const text = direct.head.subarray(0, PREVIEW_CHARS * 8).toString('utf8').replace(ENVELOPE_PREFIX, '{..,');
  const lines = [clip(terminalSafe([...text].slice(0, PREVIEW_CHARS).join('')), PREVIEW_CHARS + 3)];
  const decodedNote = direct.headers['content-encoding'] ? ' inflated' : '';
  lines.push(
    direct.complete
      ? `${formatBytes(direct.decodedBytes)}${decodedNote}`
      : `${formatBytes(direct.decodedBytes)}${decodedNote}, still open after ${(direct.elapsedMs / 1000).toFixed(1)} s`,
  );
  const telling = TELLING_HEADERS.filter((h) => direct.headers[h] !== undefined);
  if (telling.length > 0) lines.push(`+ headers ${telling.map(titleCase).join(', ')}`);
  return lines;
}

export function gatewayCell(view: GatewayView, gw: Exchange, direct: Exchange): string[] {
  const size = `${formatBytes(gw.wireBytes)}, ${gw.elapsedMs} ms`;
  if (view.kind === 'invalid') return [`!! ${view.problem ?? 'invalid'}`, clip(terminalSafe(gw.head.subarray(0, 400).toString('utf8')), MESSAGE_CHARS), size];
  const lines =
    view.kind === 'result'
      ? [`ok: result (${view.resultKind})`]
      : [`${view.code} ${view.reason}`, clip(terminalSafe(view.message ?? ''), MESSAGE_CHARS)];
  const dropped = TELLING_HEADERS.filter((h) => direct.headers[h] !== undefined && gw.headers[h] === undefined);
  if (dropped.length > 0) lines.push(`(no ${dropped.map(titleCase).join(', ')})`);
  lines.push(size);
  return lines;
}

function titleCase(header: string): string {
  return header.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase());
}
