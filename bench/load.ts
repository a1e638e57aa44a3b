/**
 * The load generator: runs one autocannon measurement per message from the parent process,
 * in its own process so that it never shares an event loop with a server it measures.
 */
import autocannon from 'autocannon';

export interface LoadRequest {
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  headers?: Record<string, string>;
  /**
   * A second request sent on the same connection once this one is answered (a trade's accept
   * after its create): `{{capture}}` in its path and body becomes the answer's `data[capture]`.
   * The pair counts as one request in the results.
   */
  follow?: LoadRequest & { capture: string };
}

/** The follow-up of `first`, its placeholder filled from the first answer's text. */
export function followUp(first: LoadRequest, answer: string): LoadRequest | undefined {
  const follow = first.follow;
  if (!follow) return undefined;
  let value = '';
  try {
    value = String((JSON.parse(answer) as { data?: Record<string, unknown> }).data?.[follow.capture] ?? '');
  } catch {
    // not JSON: the follow-up goes out with an empty value and is answered with an error
  }
  const fill = (text: string | undefined) => text?.replaceAll(`{{${follow.capture}}}`, value);
  return { method: follow.method, path: fill(follow.path)!, body: fill(follow.body), headers: follow.headers };
}

export interface LoadJob {
  url: string;
  /** Sent in turn, each at most once when `once` is set. */
  requests: LoadRequest[];
  once?: boolean;
  connections: number;
  durationSeconds: number;
  /** Check that every answer body starts with `{"code":0` (small answers only). */
  checkCodes: boolean;
  /** Return every latency too, so that several runs can be merged. */
  keepLatencies?: boolean;
}

export interface LoadResult {
  requests: number;
  seconds: number;
  rps: number;
  p50: number;
  p99: number;
  max: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  /** Answers whose API code was not 0 (when checked). */
  failed: number;
  /** One failing answer, for the report. */
  failedSample?: string;
  /** Every request ran out before the time was up (`once`). */
  exhausted: boolean;
  /** ms, sorted (keepLatencies). */
  latencies?: number[];
}

/** One result from several runs of the same measurement (interleaved with the baseline's). */
export function mergeResults(parts: LoadResult[]): LoadResult {
  const latencies = Float64Array.from(parts.flatMap((p) => p.latencies ?? [])).sort();
  const requests = parts.reduce((s, p) => s + p.requests, 0);
  const seconds = parts.reduce((s, p) => s + p.seconds, 0);
  const sum = (key: 'errors' | 'timeouts' | 'non2xx' | 'failed') => parts.reduce((s, p) => s + p[key], 0);
  return {
    requests,
    seconds,
    rps: requests / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: latencies.length ? latencies[latencies.length - 1] : 0,
    errors: sum('errors'),
    timeouts: sum('timeouts'),
    non2xx: sum('non2xx'),
    failed: sum('failed'),
    failedSample: parts.find((p) => p.failedSample)?.failedSample,
    exhausted: parts.some((p) => p.exhausted),
  };
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export function runLoad(job: LoadJob): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    let next = 0;
    let exhausted = false;
    let failed = 0;
    let failedSample: string | undefined;
    let latencies = new Float64Array(1 << 16);
    let recorded = 0;
    // Pairs (a request and its follow-up) count once, when the follow-up is answered; requests
    // used once count only while they last (not the health checks sent once they ran out).
    const paired = job.requests.some((r) => r.follow);
    let counted = 0;
    // When every request was used before the time was up, the rate is taken up to the last answer counted.
    let lastCountedAt = 0;
    const count = () => {
      counted++;
      lastCountedAt = Date.now();
    };
    const check = (body: string) => {
      if (!body.startsWith('{"code":0') && !body.startsWith('{"status"')) {
        failed++;
        failedSample ??= body.slice(0, 300);
      }
    };
    const apply = (request: Record<string, unknown>, r: LoadRequest) => {
      request.method = r.method;
      request.path = r.path;
      request.body = r.body;
      request.headers = { ...(r.body !== undefined ? { 'content-type': 'application/json' } : {}), ...r.headers };
      return request;
    };
    type Context = { first?: LoadRequest; answer?: string };
    const first = {
      setupRequest: (request: Record<string, unknown>, context: Context) => {
        if (job.once && next >= job.requests.length) {
          // Every request was used: stop, and never send one twice.
          if (!exhausted) setImmediate(() => instance.stop());
          exhausted = true;
          context.first = undefined;
          return apply(request, { method: 'GET', path: '/healthz' });
        }
        const r = job.requests[next++ % job.requests.length];
        context.first = r;
        return apply(request, r);
      },
      ...(job.checkCodes || paired || job.once
        ? {
            onResponse: (_status: number, body: string, context: Context) => {
              if (job.checkCodes) check(body);
              context.answer = body;
              if (job.once && !paired && context.first) count();
            },
          }
        : {}),
    };
    const second = {
      setupRequest: (request: Record<string, unknown>, context: Context) => {
        const follow = context.first && followUp(context.first, context.answer ?? '');
        return apply(request, follow ?? { method: 'GET', path: '/healthz' });
      },
      onResponse: (_status: number, body: string, context: Context) => {
        if (!context.first) return;
        if (job.checkCodes) check(body);
        count();
      },
    };
    const instance = autocannon(
      {
        url: job.url,
        connections: job.connections,
        duration: job.durationSeconds,
        // autocannon honours stop() at its next sample: soon after the requests used once run out.
        ...(job.once ? { sampleInt: 100 } : {}),
        timeout: 30,
        requests: paired ? [first, second] : [first],
      },
      (error, result) => {
        if (error) return reject(error);
        const sorted = latencies.slice(0, recorded).sort();
        const end = exhausted && lastCountedAt > 0 ? lastCountedAt : result.finish.getTime();
        const seconds = (end - result.start.getTime()) / 1000;
        const requests = paired || job.once ? counted : recorded;
        resolve({
          requests,
          seconds,
          rps: requests / seconds,
          p50: percentile(sorted, 50),
          p99: percentile(sorted, 99),
          max: sorted.length ? sorted[sorted.length - 1] : 0,
          errors: result.errors,
          timeouts: result.timeouts,
          non2xx: result.non2xx,
          failed,
          failedSample,
          exhausted,
          ...(job.keepLatencies ? { latencies: Array.from(sorted) } : {}),
        });
      },
    );
    instance.on('response', (_client: unknown, _status: number, _bytes: number, responseTime: number) => {
      if (recorded === latencies.length) {
        const grown = new Float64Array(latencies.length * 2);
        grown.set(latencies);
        latencies = grown;
      }
      latencies[recorded++] = responseTime;
    });
  });
}

if (process.send) {
  process.on('message', (job: LoadJob) => {
    runLoad(job).then(
      (result) => process.send!({ result }),
      (error: unknown) => process.send!({ error: String(error) }),
    );
  });
  process.send({ ready: true });
}
