/**
 * Where a plain run inside a JSON string ends (the first quote, backslash or control byte), searched sixteen bytes at
 * a time by a small WebAssembly module (plain-run.wat) rather than byte by byte in JavaScript: the JSON recognizers
 * (json-recognizers.ts) hand it every string run past its first 16 bytes. On the bench's 1 KiB reply and request that
 * took the recognizers from about 51,500 to about 35,000 instructions (Node 20, callgrind, steady state), and a 16 KiB
 * reply from 592,000 to 319,000: the text parts of a Task are most of its bytes.
 *
 * The module sees only its own memory, so the text is copied in: a text of at most one page (64 KiB, nearly every
 * reply and event) whole, once per recognition, on its first long string; a longer one a page-long window at a time,
 * starting where a run is to be searched. A recognizer starts each text with `newText()`, so a window is never read
 * for another text, and nothing of a text is kept past the recognition but the copy in the module's page (bytes the
 * gateway holds anyway while it relays them).
 *
 * Where WebAssembly is not there (node --jitless) or the CPU has no SIMD for it, `plainRuns` is undefined and the
 * recognizers scan byte by byte as before: same verdicts, more instructions.
 */
import { PLAIN_RUN_WASM } from './plain-run-wasm.js';

/** The module's memory: one page, which is also the window's size. */
export const PLAIN_RUN_PAGE = 65536;

type PlainRunEnd = (start: number, end: number) => number;

export class PlainRuns {
  readonly #page: Uint8Array;
  readonly #plainRunEnd: PlainRunEnd;
  // The window: bytes [#from, #to) of the current text, at offset 0 of the page. #to < 0: nothing of this text yet.
  #from = 0;
  #to = -1;

  constructor(page: Uint8Array, plainRunEnd: PlainRunEnd) {
    this.#page = page;
    this.#plainRunEnd = plainRunEnd;
  }

  /** A new text is about to be searched: whatever the page holds belongs to another one. */
  newText(): void {
    this.#to = -1;
  }

  /**
   * The first index in [i, json.length) whose byte is a quote, a backslash or below 0x20, or json.length when there
   * is none. `json` is the text since the last newText().
   */
  end(json: Buffer, i: number): number {
    const n = json.length;
    for (;;) {
      if (i < this.#from || i >= this.#to) this.#load(json, i);
      const to = this.#to;
      const found = this.#plainRunEnd(i - this.#from, to - this.#from) + this.#from;
      if (found < to || to === n) return found;
      // The run goes on past the window: the next window starts where it stopped.
      i = found;
    }
  }

  #load(json: Buffer, i: number): void {
    const n = json.length;
    if (n <= PLAIN_RUN_PAGE) {
      this.#page.set(json);
      this.#from = 0;
      this.#to = n;
    } else {
      const to = Math.min(n, i + PLAIN_RUN_PAGE);
      this.#page.set(json.subarray(i, to));
      this.#from = i;
      this.#to = to;
    }
  }
}

/** What is used here of the WebAssembly API (TypeScript declares it in the DOM library, which this project leaves out). */
export interface WebAssemblyApi {
  readonly Module: new (bytes: Uint8Array) => object;
  readonly Instance: new (module: object, imports: object) => { readonly exports: Record<string, unknown> };
}

/** The module, ready; undefined where WebAssembly (`api`) is missing or cannot compile or instantiate it. */
export function loadPlainRuns(api: WebAssemblyApi | undefined): PlainRuns | undefined {
  if (api === undefined) return undefined;
  try {
    const instance = new api.Instance(new api.Module(Buffer.from(PLAIN_RUN_WASM, 'base64')), {});
    const memory = instance.exports['memory'] as { readonly buffer: ArrayBuffer };
    return new PlainRuns(new Uint8Array(memory.buffer), instance.exports['plainRunEnd'] as PlainRunEnd);
  } catch {
    return undefined;
  }
}

/** The one instance the recognizers use (they run synchronously, one text at a time). */
export const plainRuns: PlainRuns | undefined = loadPlainRuns((globalThis as { WebAssembly?: WebAssemblyApi }).WebAssembly);
