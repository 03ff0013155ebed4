/**
 * `npm run demo` as a newcomer runs it: exits 0 and prints a table with
 * every case, each gateway cell naming a documented reason (or a result)
 * and none of the secrets the sample agent plants. Then the same demo in
 * process, with short timeouts, for exact outcomes per case.
 */
import { spawn } from 'node:child_process';
import t from 'tap';
import { request } from 'undici';
import { DEMO_CASES, DEMO_LEAK_MARKERS, GZIP_BOMB_DECODED_BYTES, OVERSIZED_BYTES, STACK_TRACE_BYTES } from '../../demo/cases.js';
import { DEMO_COLUMNS, runDemo, type DemoRow } from '../../demo/run.js';
import { startSampleAgent } from '../../demo/sample-server.js';
import { columnOffsets, terminalSafe, wrap } from '../../demo/table.js';
import { gatewayErrors, REMOTE_ERROR_REASON } from '../../src/envelope/codes.js';
import { validateCard } from '../../src/a2a/card.js';

// The demo runs twice (as a CLI and in process), each spawning the gateway: more than the default.
t.setTimeout(120_000);

const REASONS = new Set<string>([...Object.keys(gatewayErrors), REMOTE_ERROR_REASON]);
const MARKERS = Object.values(DEMO_LEAK_MARKERS);

function runCli(args: string[], timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Cuts the printed table back into rows of columns, using the demo's own layout. */
function tableRows(stdout: string): { name: string; gateway: string }[] {
  const lines = stdout.split('\n');
  const offsets = columnOffsets(DEMO_COLUMNS);
  // A table line has spaces in every column gap it reaches; the prose after the table does not.
  const isTableLine = (line: string) => offsets.slice(1).every((at) => line.length < at || line.slice(at - 2, at) === '  ');
  const header = lines.findIndex((l) => l.startsWith(DEMO_COLUMNS[0]!.title) && isTableLine(l));
  const rows: { name: string; gateway: string[] }[] = [];
  for (const line of lines.slice(header + 2)) {
    if (line === '') continue;
    if (!isTableLine(line)) break;
    const name = line.slice(0, DEMO_COLUMNS[0]!.width).trim();
    if (name !== '') rows.push({ name, gateway: [] });
    rows.at(-1)?.gateway.push(line.slice(offsets[3]).trim());
  }
  return rows.map((r) => ({ name: r.name, gateway: r.gateway.join(' ') }));
}

t.test('npm run demo: exits 0 and prints every case with a reason and no leaked secret', async (t) => {
  const { code, stdout, stderr } = await runCli(['demo/run.ts'], 45_000);
  t.equal(code, 0, `exit code (stderr: ${stderr})`);
  const rows = tableRows(stdout);
  t.same(
    rows.map((r) => r.name),
    DEMO_CASES.map((c) => c.name),
    'one row per case, in order',
  );
  for (const row of rows) {
    const outcome = /^(?:ok: result \((?:Message|Task)\)|-?\d+ ([A-Z_]+))/.exec(row.gateway);
    t.ok(outcome, `${row.name}: gateway cell starts with a result or "code REASON": ${row.gateway}`);
    if (outcome?.[1] !== undefined) t.ok(REASONS.has(outcome[1]), `${row.name}: ${outcome[1]} is a documented reason`);
    for (const marker of MARKERS) t.notOk(row.gateway.includes(marker), `${row.name}: gateway cell does not show ${marker}`);
  }
  const long = stdout.split('\n').filter((l) => l.length > 100);
  t.same(long, [], 'fits a 100-column terminal');
  t.notMatch(stdout, /[^\n\x20-\x7e]/, 'prints only printable ASCII: no remote control or bidi character reaches the terminal');
  // The direct column shows what the gateway hides: the markers are live, so the checks above can fail.
  t.match(stdout, DEMO_LEAK_MARKERS.stack, 'the direct column shows the planted password');
});

const expected: Record<string, { reason?: string; code?: number; result?: string }> = {
  ok: { result: 'Message' },
  'get-task': { result: 'Task' },
  'html-502': { reason: 'UPSTREAM_HTTP_ERROR', code: -32006 },
  'stack-trace': { reason: 'UPSTREAM_HTTP_ERROR', code: -32006 },
  'error-extras': { reason: REMOTE_ERROR_REASON, code: -32001 },
  'error-string': { reason: REMOTE_ERROR_REASON, code: -32603 },
  'body-array': { reason: 'INVALID_RESPONSE', code: -32006 },
  'body-string': { reason: 'INVALID_RESPONSE', code: -32006 },
  'body-null': { reason: 'INVALID_RESPONSE', code: -32006 },
  'cookie-headers': { result: 'Message' },
  oversized: { reason: 'RESPONSE_TOO_LARGE', code: -32006 },
  endless: { reason: 'UPSTREAM_TIMEOUT', code: -32603 },
  'gzip-bomb': { reason: 'RESPONSE_TOO_LARGE', code: -32006 },
};

t.test('each case: the remote misbehaves as named, the gateway answers as documented', async (t) => {
  // Long enough that a loaded machine does not turn a fast case into a timeout.
  const totalMs = 1500;
  const directTimeoutMs = 300;
  const result = await runDemo({ gatewayTotalMs: totalMs, directTimeoutMs });
  t.ok(result.ok, 'every gateway reply kept the envelope contract');
  t.same(Object.keys(expected).sort(), DEMO_CASES.map((c) => c.name).sort(), 'every case has an expectation');
  const byName = new Map<string, DemoRow>(result.rows.map((r) => [r.demoCase.name, r]));
  for (const [name, want] of Object.entries(expected)) {
    const row = byName.get(name)!;
    if (want.result) t.same([row.view.kind, row.view.resultKind], ['result', want.result], `${name}: a ${want.result}`);
    else t.same([row.view.kind, row.view.reason, row.view.code], ['error', want.reason, want.code], `${name}: ${want.reason}`);
    const seen = row.gateway.head.toString('utf8') + JSON.stringify(row.gateway.headers);
    for (const marker of MARKERS) t.notOk(seen.includes(marker), `${name}: gateway body and headers carry no ${marker}`);
  }
  const row = (name: string) => byName.get(name)!;
  // The planted secrets reach a direct caller: proof the leak checks above look at live markers.
  t.match(row('stack-trace').direct.head.toString('utf8'), DEMO_LEAK_MARKERS.stack);
  t.match(row('html-502').direct.head.toString('utf8'), DEMO_LEAK_MARKERS.html);
  t.match(row('error-extras').direct.head.toString('utf8'), DEMO_LEAK_MARKERS.extra);
  t.match(String(row('cookie-headers').direct.headers['set-cookie']), DEMO_LEAK_MARKERS.cookie);
  t.equal(row('cookie-headers').gateway.headers['set-cookie'], undefined, 'no Set-Cookie through the gateway');
  t.equal(row('cookie-headers').gateway.headers.server, undefined, 'no Server through the gateway');
  t.equal(row('error-extras').view.message, 'Task not found', 'a typed error without message gets the standard one');
  t.match(row('error-string').view.message ?? '', /^boom/, 'the remote text survives');
  t.notMatch(row('error-string').view.message ?? '', /[\u0000-\u001f\u007f\u202e\u2066\u200b]/, 'without its control and bidi characters');
  // Sizes are what each case's name promises.
  t.equal(row('stack-trace').direct.decodedBytes, STACK_TRACE_BYTES);
  t.equal(row('oversized').direct.decodedBytes, OVERSIZED_BYTES);
  t.equal(row('gzip-bomb').direct.decodedBytes, GZIP_BOMB_DECODED_BYTES, 'the bomb inflates fully for a direct caller');
  t.ok(row('gzip-bomb').direct.wireBytes < 128 * 1024, 'from a small body');
  // The endless reply: the direct caller is still waiting at its deadline; the gateway ends it at totalMs.
  t.equal(row('endless').direct.complete, false, 'endless never completes directly');
  t.ok(row('endless').gateway.elapsedMs >= totalMs, `gateway waits totalMs (${row('endless').gateway.elapsedMs} ms)`);
  t.ok(row('endless').gateway.elapsedMs < totalMs + 1500, 'and not much longer');
  for (const r of result.rows) t.ok(r.gateway.wireBytes < 1024, `${r.demoCase.name}: the gateway reply is small (${r.gateway.wireBytes} B)`);
});

t.test('the sample agent: card, case by message text, unknown case', async (t) => {
  const agent = await startSampleAgent({ port: 0 });
  t.teardown(() => agent.close());
  const card = await request(`${agent.origin}/.well-known/agent-card.json`);
  const cardJson = (await card.body.json()) as { supportedInterfaces: { url: string }[] };
  t.equal(card.statusCode, 200);
  t.same(validateCard(cardJson).ok, true, 'a valid A2A card');
  t.equal(cardJson.supportedInterfaces[0]?.url, agent.rpcUrl, 'advertises its own JSON-RPC URL');

  const send = (path: string, text: string) =>
    request(`${agent.rpcUrl}${path}`, {
      method: 'POST',
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'message/send', params: { message: { parts: [{ kind: 'text', text }] } } }),
    });
  const byText = await send('', 'html-502');
  await byText.body.dump();
  t.equal(byText.statusCode, 502, 'a case name as the text selects the case');
  const echo = await send('', 'hello');
  t.match(await echo.body.json(), { id: 7, result: { kind: 'message', parts: [{ kind: 'text', text: 'echo: hello' }] } }, '0.3 names get 0.3 shapes');
  const unknown = await send('/no-such-case', 'hi');
  await unknown.body.dump();
  t.equal(unknown.statusCode, 404);
});

t.test('npm run sample-agent says so when its port is taken', async (t) => {
  const agent = await startSampleAgent({ port: 0 });
  t.teardown(() => agent.close());
  const { code, stderr } = await runCli(['demo/sample-agent.ts', '--port', String(agent.port)], 20_000);
  t.equal(code, 1);
  t.match(stderr, `port ${agent.port} is already in use`);
});

t.test('terminal escaping and wrapping', async (t) => {
  t.equal(terminalSafe('a\u001b[2J\r\n\u202eb\u0000é'), 'a\\e[2J\\r\\n\\u202eb\\u0000\\u00e9');
  t.same(wrap('abcdef', 3), ['abc', 'def'], 'a word exactly two widths long');
  t.same(wrap('abcdefg', 3), ['abc', 'def', 'g'], 'one character over');
  t.same(wrap('ab cd', 5), ['ab cd'], 'exactly the width');
  t.same(wrap('ab cde', 5), ['ab', 'cde'], 'one over wraps at the space');
});
