/**
 * `npm run demo`: the first five minutes. Starts the sample agent on a free
 * loopback port, starts the gateway CLI with a copy of config/gateway.yaml
 * pointed at it, sends each case's call straight to the agent and through
 * the gateway, and prints what each caller got side by side. No network
 * beyond loopback, no build step, about 6 s.
 */
import { pathToFileURL } from 'node:url';
import { DEMO_CASES, type DemoCase } from './cases.js';
import { directCell, gatewayCell, readGatewayReply, remoteCell, type GatewayView } from './describe.js';
import { startGatewayProcess, writeDemoConfig } from './gateway-process.js';
import { probe, type Exchange } from './probe.js';
import { startSampleAgent } from './sample-server.js';
import { renderTable, terminalSafe, type Column } from './table.js';

export interface DemoRow {
  readonly demoCase: DemoCase;
  readonly direct: Exchange;
  readonly gateway: Exchange;
  readonly view: GatewayView;
  readonly cells: string[][];
}

export interface DemoResult {
  readonly rows: readonly DemoRow[];
  /** Everything the demo prints. */
  readonly text: string;
  /** True when every gateway reply kept the envelope contract. */
  readonly ok: boolean;
}

export interface DemoOptions {
  /** The gateway's totalMs for the sample remote in the demo's config copy. */
  readonly gatewayTotalMs?: number;
  /** How long the direct caller waits for a reply that never ends. */
  readonly directTimeoutMs?: number;
}

/** A direct call to a case that does finish gets this long: only a broken agent would need it. */
const FINITE_REPLY_TIMEOUT_MS = 15_000;

/** Sized for a 100-column terminal: 14 + 16 + 30 + 32 plus three 2-space gaps = 98. */
export const DEMO_COLUMNS: readonly Column[] = [
  { title: 'case', width: 14 },
  { title: 'remote sent', width: 16 },
  { title: 'a caller gets directly', width: 30 },
  { title: 'a caller gets via a2a-egress', width: 32 },
];

function callBody(demoCase: DemoCase): string {
  const id = `demo-${demoCase.name}`;
  const params =
    demoCase.method === 'GetTask'
      ? { id: 'sample-task-1' }
      : { message: { messageId: `msg-${demoCase.name}`, role: 'ROLE_USER', parts: [{ text: 'hello from the demo' }] } };
  return JSON.stringify({ jsonrpc: '2.0', id, method: demoCase.method, params });
}

export async function runDemo(options: DemoOptions = {}): Promise<DemoResult> {
  const totalMs = options.gatewayTotalMs ?? 2000;
  const directTimeoutMs = options.directTimeoutMs ?? 1500;
  const agent = await startSampleAgent({ port: 0 });
  const config = writeDemoConfig(agent.rpcUrl, totalMs);
  try {
    const gateway = await startGatewayProcess(config.path);
    try {
      const rows: DemoRow[] = [];
      for (const demoCase of DEMO_CASES) {
        const body = callBody(demoCase);
        const suffix = demoCase.plainPath ? '' : `/${demoCase.name}`;
        // Side by side in time too: the never-ending case costs one deadline, not two.
        const [direct, viaGateway] = await Promise.all([
          probe(`${agent.rpcUrl}${suffix}`, body, { timeoutMs: demoCase.neverEnds ? directTimeoutMs : FINITE_REPLY_TIMEOUT_MS }),
          probe(`${gateway.url}/remotes/sample${suffix}`, body, { timeoutMs: totalMs + FINITE_REPLY_TIMEOUT_MS }),
        ]);
        const view = readGatewayReply(viaGateway, `demo-${demoCase.name}`);
        rows.push({
          demoCase,
          direct,
          gateway: viaGateway,
          view,
          cells: [[demoCase.name], remoteCell(direct), directCell(direct), gatewayCell(view, viaGateway, direct)],
        });
      }
      const text = [
        'a2a-egress demo: one JSON-RPC call per case, straight to a misbehaving remote and through',
        'the gateway.',
        `  sample agent  ${agent.rpcUrl}  (a free port: a running sample agent is left alone)`,
        `  gateway       ${gateway.url}/remotes/sample`,
        `                config/gateway.yaml with remotes.sample.url set to the agent above and`,
        `                timeouts.totalMs ${totalMs}, so "endless" is cut quickly`,
        '',
        renderTable(
          DEMO_COLUMNS,
          rows.map((r) => r.cells),
        ),
        "Via the gateway every reply is HTTP 200 application/json with the caller's id and exactly one",
        'of result/error; error.data holds the gateway\'s google.rpc.ErrorInfo (domain a2a-egress), whose',
        '`reason` a program can branch on (for A2A codes, A2A\'s own ErrorInfo comes first).',
        'Direct bytes are shown escaped here (\\r, \\e, \\u202e...); a terminal, a log or an LLM prompt',
        'would get them raw.',
        '',
        'By hand: `npm run sample-agent`, and in another terminal `npm start`, then',
        `  body='{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t1"}}'`,
        '  curl -s localhost:8080/remotes/sample/html-502 -H "content-type: application/json" -d "$body"',
        '',
      ].join('\n');
      return { rows, text, ok: rows.every((r) => r.view.kind !== 'invalid') };
    } finally {
      await gateway.stop();
    }
  } finally {
    config.remove();
    await agent.close();
  }
}

async function main(): Promise<void> {
  try {
    const result = await runDemo();
    process.stdout.write(result.text);
    if (!result.ok) {
      process.stderr.write('demo: some gateway replies broke the envelope contract (marked !! above): please report this\n');
      process.exitCode = 1;
    }
  } catch (err) {
    process.stderr.write(`demo failed: ${terminalSafe(err instanceof Error ? err.message : String(err)).replace(/\\n/g, '\n')}\n`);
    process.exitCode = 1;
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
