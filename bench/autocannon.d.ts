// The parts of autocannon's API the load generator uses (the package ships no types).
declare module 'autocannon' {
  interface Histogram {
    average: number;
    p50: number;
    p99: number;
  }
  interface Result {
    start: Date;
    finish: Date;
    errors: number;
    timeouts: number;
    non2xx: number;
    latency: Histogram;
  }
  interface Instance {
    stop(): void;
    on(event: 'response', listener: (client: unknown, status: number, bytes: number, responseTime: number) => void): void;
  }
  function autocannon(options: Record<string, unknown>, done: (error: Error | null, result: Result) => void): Instance;
  export default autocannon;
}
