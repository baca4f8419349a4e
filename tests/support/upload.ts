/**
 * One HTTP/1.1 upload written by hand on its own TCP connection, for the body-limit tests: a body of `bytes` spaces,
 * declared with Content-Length or sent chunked, and the answer parsed by its Content-Length.
 *
 * `readAfterUpload` reads nothing until the whole body is written, as many clients do (the body first, then the
 * answer): a server that closes the connection under the upload makes its writes fail (`EPIPE`, `ECONNRESET`).
 * Otherwise it reads while writing, and goes on writing after the answer, until the body is sent or the server cuts
 * the connection.
 */
import net from 'node:net';

export interface UploadAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface UploadResult {
  answer?: UploadAnswer;
  /** Body bytes accepted by the socket before it closed (or all of them). */
  written: number;
  /** The socket's error code (`EPIPE`, `ECONNRESET`…), `closed` when the server ended it, `timeout`. */
  error?: string;
}

export interface UploadOptions {
  method: string;
  url: string;
  headers: Record<string, string>;
  bytes: number;
  chunked?: boolean;
  readAfterUpload?: boolean;
  /** A guard against a hang, not a measure: a passing upload ends long before. */
  timeoutMs?: number;
}

const CHUNK = Buffer.alloc(256 * 1024, 0x20);

export function upload(options: UploadOptions): Promise<UploadResult> {
  const url = new URL(options.url);
  const socket = net.connect(Number(url.port), url.hostname.replace(/^\[|\]$/g, ''));
  let received = Buffer.alloc(0);
  let answer: UploadAnswer | undefined;
  let written = 0;
  let sent = false;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (error?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(guard);
      socket.destroy();
      resolve({ ...(answer ? { answer } : {}), written, ...(error ? { error } : {}) });
    };
    const guard = setTimeout(() => finish('timeout'), options.timeoutMs ?? 15_000);
    const onData = (data: Buffer) => {
      received = Buffer.concat([received, data]);
      answer ??= parse(received);
      if (answer && sent) finish();
    };
    socket.on('error', (err: NodeJS.ErrnoException) => finish(err.code ?? err.message));
    socket.on('close', () => finish(answer && sent ? undefined : 'closed'));
    if (!options.readAfterUpload) socket.on('data', onData);
    const send = async () => {
      const framing = options.chunked
        ? { 'Transfer-Encoding': 'chunked' }
        : { 'Content-Length': String(options.bytes) };
      const head = Object.entries({ Host: url.host, ...options.headers, ...framing }).map(([k, v]) => `${k}: ${v}\r\n`);
      socket.write(`${options.method} ${url.pathname}${url.search} HTTP/1.1\r\n${head.join('')}\r\n`);
      while (written < options.bytes && !socket.destroyed) {
        const piece = CHUNK.subarray(0, Math.min(CHUNK.length, options.bytes - written));
        let more: boolean;
        if (options.chunked) {
          socket.write(`${piece.length.toString(16)}\r\n`);
          socket.write(piece);
          more = socket.write('\r\n');
        } else {
          more = socket.write(piece);
        }
        written += piece.length;
        if (!more) await writable(socket);
      }
      if (socket.destroyed) return;
      if (options.chunked) socket.write('0\r\n\r\n');
      sent = true;
      if (options.readAfterUpload) socket.on('data', onData);
      else if (answer) finish();
    };
    socket.once('connect', () => {
      send().catch((err: Error) => finish(err.message));
    });
  });
}

/** Resolves once the socket drains or closes. */
function writable(socket: net.Socket): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      socket.off('drain', done);
      socket.off('close', done);
      resolve();
    };
    socket.on('drain', done);
    socket.on('close', done);
  });
}

/** The answer once its head and its Content-Length of body are in `data`. */
function parse(data: Buffer): UploadAnswer | undefined {
  const end = data.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine, ...lines] = data.subarray(0, end).toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers['content-length'] ?? '0');
  if (data.length < end + 4 + length) return undefined;
  return {
    status: Number(statusLine.split(' ')[1]),
    headers,
    body: data.subarray(end + 4, end + 4 + length).toString('utf8'),
  };
}

/** An upload held open: its headers and the first part of its body sent, the rest only on `finish()`. */
export interface HeldUpload {
  /** The answer, once the server gives one; undefined when the connection closed without one. */
  answer: Promise<UploadAnswer | undefined>;
  /** Sends the rest of the body. */
  finish(): void;
  /** Closes the connection, the body unfinished (a client that gives up). */
  abort(): void;
}

/**
 * Sends the request's head (Content-Length: the whole `body`) and the first `sent` bytes of `body`, then nothing
 * until `finish()`: a client that stalls mid-upload, for as long as the test wants, without timing anything.
 */
export function holdUpload(options: {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
  sent: number;
}): HeldUpload {
  const url = new URL(options.url);
  const body = Buffer.from(options.body);
  const socket = net.connect(Number(url.port), url.hostname.replace(/^\[|\]$/g, ''));
  let received = Buffer.alloc(0);
  const answer = new Promise<UploadAnswer | undefined>((resolve) => {
    socket.on('data', (data: Buffer) => {
      received = Buffer.concat([received, data]);
      const parsed = parse(received);
      if (parsed) resolve(parsed);
    });
    socket.on('close', () => resolve(parse(received)));
    socket.on('error', () => undefined);
  });
  socket.once('connect', () => {
    const headers = { Host: url.host, ...options.headers, 'Content-Length': String(body.length) };
    const head = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`);
    socket.write(`${options.method} ${url.pathname}${url.search} HTTP/1.1\r\n${head.join('')}\r\n`);
    socket.write(body.subarray(0, options.sent));
  });
  return {
    answer,
    finish: () => {
      const rest = () => socket.write(body.subarray(options.sent));
      if (socket.connecting) socket.once('connect', rest);
      else rest();
    },
    abort: () => socket.destroy(),
  };
}
