/**
 * What every Outcome a normalizer makes must satisfy, whatever the remote
 * sent (binding-neutral: any normalizer's output can be checked), and what
 * the HTTP+JSON caller codec must then make of it. Returns broken rules as
 * text; never throws. Shared by the property tests and any longer fuzz run.
 */
import sjson from 'secure-json-parse';
import { encodeRestError } from '../../src/bindings/http-json/caller-reply.js';
import { a2aReasonOfCode, isGrpcCodeName } from '../../src/bindings/status-map.js';
import type { Outcome } from '../../src/core/outcome.js';
import { gatewayErrors, type Reason } from '../../src/envelope/codes.js';
import type { NormalizePolicy } from '../../src/envelope/normalize.js';

const INVISIBLE = /[\p{Cc}\p{Cf}]/u;
const MAX_REMOTE_DETAILS = 4;

export interface OutcomeContext {
  readonly policy: NormalizePolicy;
  /** The remote's HTTP status, when the outcome is of a whole reply. */
  readonly status?: number;
  /** Strings that must appear nowhere in the outcome or in what the caller receives. */
  readonly forbidden?: readonly string[];
}

export function outcomeViolations(out: Outcome, ctx: OutcomeContext): string[] {
  const problems: string[] = [];
  const bad = (rule: string): void => void problems.push(rule);
  const everything = out.kind === 'error' ? `${JSON.stringify(out)}\n${encodeRestError(out).body}` : out.json;
  for (const marker of ctx.forbidden ?? []) if (everything.includes(marker)) bad(`contains body marker ${marker}`);

  if (out.kind === 'result') {
    if (ctx.status !== undefined && (ctx.status < 200 || ctx.status > 299)) bad(`result on HTTP ${ctx.status}`);
    let parsed: unknown;
    try {
      parsed = sjson.parse(out.json, null, { protoAction: 'error', constructorAction: 'error' });
    } catch (err) {
      return [...problems, `result json is not safe JSON: ${(err as Error).message}`];
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) bad('result is not a JSON object');
    if (JSON.stringify(parsed) !== JSON.stringify(out.value)) bad('result value is not its json parsed');
    return problems;
  }

  const e = out;
  if (!Number.isSafeInteger(e.code)) bad('code is not an integer');
  if (typeof e.message !== 'string' || e.message === '') bad('message is empty');
  if (INVISIBLE.test(e.message)) bad('message has a control or format character');
  if (e.metadata.remote !== ctx.policy.remote) bad('metadata.remote is not the remote');
  for (const [k, v] of Object.entries(e.metadata)) if (typeof v !== 'string') bad(`metadata.${k} is not a string`);
  if (e.reason === 'REMOTE_ERROR') {
    if (Buffer.byteLength(e.message) > ctx.policy.maxErrorMessageBytes) bad('remote message over the bound');
    if (e.details.length > 0 && !ctx.policy.keepRemoteErrorData) bad('details kept although keepRemoteErrorData is off');
  } else {
    const spec = gatewayErrors[e.reason as Reason];
    if (!spec) bad(`unknown reason ${e.reason}`);
    else {
      if (e.code !== spec.code) bad(`code ${e.code} is not the catalogue's for ${e.reason}`);
      if (!e.message.startsWith(spec.message)) bad(`message is not the catalogue's for ${e.reason}`);
    }
    if (e.details.length > 0) bad('a gateway error carries remote details');
    if (e.remoteStatus !== undefined) bad('a gateway error carries a remote status');
  }
  if (a2aReasonOfCode(e.code) !== undefined && e.a2a === undefined) bad('an A2A code without its A2A ErrorInfo');
  if (e.a2a) {
    for (const [k, v] of Object.entries(e.a2a.metadata)) {
      if (typeof v !== 'string' || INVISIBLE.test(v) || INVISIBLE.test(k)) bad('A2A metadata not clean');
      if (typeof v === 'string' && Buffer.byteLength(v) > ctx.policy.maxErrorMessageBytes) bad('A2A metadata value over the bound');
    }
  }
  if (e.details.length > MAX_REMOTE_DETAILS) bad('too many details');
  for (const d of e.details) if (typeof d['@type'] !== 'string' || hasDirtyText(d, ctx.policy.maxErrorMessageBytes)) bad('a detail is not clean');

  // What an HTTP+JSON caller receives.
  const reply = encodeRestError(e);
  if (reply.status < 400 || (reply.status > 599 && reply.status !== 499)) bad(`HTTP status ${reply.status}`);
  let body: unknown;
  try {
    body = sjson.parse(reply.body!, null, { protoAction: 'error', constructorAction: 'error' });
  } catch {
    return [...problems, 'Status body is not safe JSON'];
  }
  const status = (body as { error?: Record<string, unknown> }).error;
  if (!status || Object.keys(body as object).join() !== 'error') return [...problems, 'Status body is not {"error":{...}}'];
  if (Object.keys(status).join() !== 'code,status,message,details') bad(`Status members ${Object.keys(status).join()}`);
  if (status.code !== reply.status) bad('error.code is not the HTTP status');
  if (typeof status.status !== 'string' || !isGrpcCodeName(status.status) || status.status === 'OK') bad('error.status is no gRPC error name');
  const details = status.details as Record<string, unknown>[];
  const gatewayInfo = details.find((d) => d.domain === 'a2a-egress');
  if (!gatewayInfo || gatewayInfo.reason !== e.reason) bad('no gateway ErrorInfo with the reason');
  const a2aReason = e.a2a?.reason ?? a2aReasonOfCode(e.code);
  if (a2aReason !== undefined && (details[0]?.domain !== 'a2a-protocol.org' || details[0]?.reason !== a2aReason)) bad('A2A ErrorInfo is not first');
  return problems;
}

function hasDirtyText(value: unknown, maxBytes: number): boolean {
  if (typeof value === 'string') return INVISIBLE.test(value) || Buffer.byteLength(value) > maxBytes;
  if (Array.isArray(value)) return value.some((v) => hasDirtyText(v, maxBytes));
  if (typeof value === 'object' && value !== null) return Object.entries(value).some(([k, v]) => hasDirtyText(k, 64) || hasDirtyText(v, maxBytes));
  return false;
}
