/**
 * The sample agent's catalogue: what each case is called, what it sends, and
 * the secrets it plants so a reader (and the demo test) can see where remote
 * bytes leak. A case is chosen by POSTing to `/a2a/<case>` (through the
 * gateway: `/remotes/sample/<case>`) or by sending its name as the message
 * text. Shared by demo/sample-server.ts and demo/run.ts; imports nothing
 * from test/.
 */

/** Strings planted in misbehaving replies: they must never reach a caller through the gateway. */
export const DEMO_LEAK_MARKERS = {
  stack: 'sk-demo-DB-PASSWORD-3141',
  html: 'DEMO-HTML-INTERNAL-HOST-2718',
  extra: 'DEMO-EXTRA-MEMBER-SECRET-1618',
  cookie: 'demo-session-SECRET-1414',
  server: 'Apache/2.2.3 (DemoOS) OpenSSL/0.9.8',
} as const;

export type DemoMethod = 'SendMessage' | 'GetTask';

export interface DemoCase {
  /** Also the sub-path that selects it; `ok` and `get-task` use the agent's plain `/a2a`. */
  readonly name: string;
  readonly method: DemoMethod;
  /** One line for the table legend. */
  readonly summary: string;
  /** Sent to the plain JSON-RPC URL (the default, well-behaved path) rather than `/a2a/<name>`. */
  readonly plainPath?: boolean;
  /** The reply never finishes: a direct caller needs a deadline of its own. */
  readonly neverEnds?: boolean;
}

export const DEMO_CASES: readonly DemoCase[] = [
  { name: 'ok', method: 'SendMessage', plainPath: true, summary: 'well-behaved: a Message echoing the text' },
  { name: 'get-task', method: 'GetTask', plainPath: true, summary: 'well-behaved: a completed Task' },
  { name: 'html-502', method: 'SendMessage', summary: 'HTTP 502 with an nginx-style HTML page and a <script>' },
  { name: 'stack-trace', method: 'SendMessage', summary: 'HTTP 500, 8 KiB stack trace with CR/LF, ANSI codes and a password' },
  { name: 'error-extras', method: 'SendMessage', summary: 'JSON-RPC error with `stack` and `reason` members and no message' },
  { name: 'error-string', method: 'SendMessage', summary: '`"error": "boom"` wrapped in control and bidi characters' },
  { name: 'body-array', method: 'SendMessage', summary: 'the body is a JSON array' },
  { name: 'body-string', method: 'SendMessage', summary: 'the body is a JSON string' },
  { name: 'body-null', method: 'SendMessage', summary: 'the body is JSON null' },
  { name: 'cookie-headers', method: 'SendMessage', summary: 'a valid reply with Set-Cookie, Server and X-Powered-By headers' },
  { name: 'oversized', method: 'SendMessage', summary: 'a valid reply of 10 MiB' },
  { name: 'endless', method: 'SendMessage', neverEnds: true, summary: 'starts a reply and never finishes it (a byte every 200 ms)' },
  { name: 'gzip-bomb', method: 'SendMessage', summary: 'a ~64 KiB gzip body that inflates to 64 MiB' },
];

export const DEMO_CASE_NAMES: ReadonlySet<string> = new Set(DEMO_CASES.map((c) => c.name));

export const KiB = 1024;
export const MiB = 1024 * KiB;
export const OVERSIZED_BYTES = 10 * MiB;
export const STACK_TRACE_BYTES = 8 * KiB;
export const GZIP_BOMB_DECODED_BYTES = 64 * MiB;
export const ENDLESS_TICK_MS = 200;
