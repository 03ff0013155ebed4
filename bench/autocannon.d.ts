// autocannon 8 ships no types; only the part of its API the bench uses.
declare module 'autocannon' {
  interface Options {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    connections?: number;
    duration?: number;
    pipelining?: number;
    timeout?: number;
  }
  interface Histogram {
    average: number;
    mean: number;
    p50: number;
    p99: number;
    total: number;
  }
  interface Result {
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
    requests: Histogram;
    latency: Histogram;
  }
  export type { Result };
  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}
