/** A small parser of the Prometheus text exposition format (what `GET /metrics` serves), for tests. */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  samples: Sample[];
  /** `# TYPE` of each metric family. */
  types: Record<string, string>;
  /** The value of the one sample matching name and labels (all given labels equal); undefined when none. */
  value(name: string, labels?: Record<string, string>): number | undefined;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?\s*/gy;

export function parsePrometheus(text: string): Exposition {
  const samples: Sample[] = [];
  const types: Record<string, string> = {};
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    if (line.startsWith('#')) {
      const type = /^# TYPE (\S+) (\S+)$/.exec(line);
      if (type) types[type[1]] = type[2]!;
      continue;
    }
    const m = LINE.exec(line);
    if (!m) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    if (m[2]) {
      LABEL.lastIndex = 0;
      let l: RegExpExecArray | null;
      let consumed = 0;
      while ((l = LABEL.exec(m[2])) !== null) {
        labels[l[1]] = l[2].replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
        consumed = LABEL.lastIndex;
      }
      if (consumed !== m[2].length) throw new Error(`bad labels: ${m[2]}`);
    }
    const value = m[3] === '+Inf' ? Infinity : m[3] === '-Inf' ? -Infinity : /^nan$/i.test(m[3]) ? NaN : Number(m[3]);
    if (Number.isNaN(value) && !/^nan$/i.test(m[3])) throw new Error(`bad value: ${line}`);
    samples.push({ name: m[1], labels, value });
  }
  return {
    samples,
    types,
    value(name, labels = {}) {
      const found = samples.filter(
        (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
      );
      if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
      return found[0]?.value;
    },
  };
}
