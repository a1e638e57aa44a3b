// The parts of parse-prometheus-text-format the tests use (the package ships no types).
declare module 'parse-prometheus-text-format' {
  interface Sample {
    labels?: Record<string, string>;
    value?: string;
    count?: string;
    sum?: string;
    buckets?: Record<string, string>;
  }
  /** Parses the Prometheus text format (throws on a malformed line) into metric families. */
  export default function parsePrometheusTextFormat(text: string): { name: string; help: string; type: string; metrics: Sample[] }[];
}
