/** Runs tests/support/sqlite-append-writer.js as a child process and collects its acknowledged appends. */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import type { RecordedEvent } from '../../shared-schema/ports/event-store.js';

const WRITER = fileURLToPath(new URL('./sqlite-append-writer.js', import.meta.url));

export interface WriterRun {
  /** `[stream, revision]` of every append the child acknowledged. */
  acks: [string, number][];
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

export interface WriterOptions {
  dbPath: string;
  prefix: string;
  streams: number;
  /** Ask the child to stop by itself after this many acks (0: it runs until killed). */
  maxAcks?: number;
  /** SIGKILL the child once this many acks have been read. */
  killAfterAcks?: number;
  timeoutMs?: number;
  /** Open the store with `writerThread` in the child. */
  writerThread?: boolean;
}

export function runWriter(options: WriterOptions): Promise<WriterRun> {
  const args = [WRITER, options.dbPath, options.prefix, String(options.streams), String(options.maxAcks ?? 0)];
  const env = { ...process.env, WRITER_THREAD: options.writerThread ? '1' : '' };
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  const acks: [string, number][] = [];
  let partial = '';
  let stderr = '';
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 15_000);
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      const [stream, revision] = line.split(' ');
      acks.push([stream, Number(revision)]);
    }
    if (options.killAfterAcks !== undefined && acks.length >= options.killAfterAcks) child.kill('SIGKILL');
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ acks, code, signal, stderr });
    });
  });
}

/** Checks a log written by writer children: positions increase, every stream is whole batches of 3 with revisions 0..n-1. */
export function checkWriterLog(events: RecordedEvent[]): Map<string, number> {
  const lengths = new Map<string, number>();
  events.forEach((event, i) => {
    if (i > 0) expect(event.position).to.be.greaterThan(events[i - 1].position);
    const length = lengths.get(event.stream) ?? 0;
    expect(event.revision, `${event.stream} revision`).to.equal(length);
    const data = event.data as { batch: number; part: number };
    expect([data.batch, data.part], `${event.stream}@${event.revision}`).to.deep.equal([
      Math.floor(length / 3),
      length % 3,
    ]);
    lengths.set(event.stream, length + 1);
  });
  for (const [stream, length] of lengths) expect(length % 3, `${stream} holds ${length} events`).to.equal(0);
  return lengths;
}
