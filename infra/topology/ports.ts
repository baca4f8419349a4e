/**
 * A free TCP port for a server started later by another program (nginx, nats-server, a service process), which
 * cannot report a port the kernel chose for it.
 *
 * The port is taken outside the kernel's ephemeral range (`/proc/sys/net/ipv4/ip_local_port_range`). A port the
 * kernel handed out for `listen(0)` and released is free again at once: until the server binds it, any other
 * `listen(0)` or outgoing connection on the machine may be given the same one. Then the server cannot bind, and a
 * readiness probe that only connects is answered by the other listener. Outside the range the kernel never hands a
 * port out on its own, so only a program that names the port can take it in between.
 */
import fs from 'node:fs';
import net from 'node:net';
import { randomInt } from 'node:crypto';

const LOOPBACK = '127.0.0.1';
/** Below this are the ports of well-known services (databases, brokers, dev servers), and 0–1023 need root. */
const LOWEST = 10_000;
const PROBES = 50;

export async function freePort(host = LOOPBACK, spans = unassignedSpans()): Promise<number> {
  for (let probe = 0; probe < PROBES && spans.length > 0; probe++) {
    const [low, high] = spans[randomInt(spans.length)];
    const port = randomInt(low, high + 1);
    if (await canListen(host, port)) return port;
  }
  return kernelPort(host); // no span outside the range (or all probed ports taken): the kernel's choice
}

/** The spans of ports from LOWEST up that the kernel does not hand out by itself, each at least 1,000 wide. */
export function unassignedSpans(rangeText = readRange()): [number, number][] {
  const [low, high] = (rangeText ?? '').trim().split(/\s+/).map(Number);
  if (!Number.isInteger(low) || !Number.isInteger(high)) return [];
  return (
    [
      [LOWEST, low - 1],
      [high + 1, 65_535],
    ] as [number, number][]
  ).filter(([a, b]) => b - a + 1 >= 1000);
}

function readRange(): string | undefined {
  try {
    return fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8');
  } catch {
    return undefined; // not Linux: the kernel's choice
  }
}

function canListen(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, host, () => s.close(() => resolve(true)));
  });
}

function kernelPort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, host, () => {
      const address = s.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      s.close(() => (port ? resolve(port) : reject(new Error('no free port'))));
    });
  });
}

/**
 * Whether process `pid` holds a socket listening on TCP `port` (any address), read from `/proc/net/tcp{,6}` and the
 * process's descriptors; undefined where `/proc` cannot tell (not Linux, or another user's process). A probe that
 * only connects cannot tell which program answered: a server that could not bind the port (nginx retries for
 * seconds before it exits) looks ready while another program listens there.
 */
export function holdsListener(pid: number, port: number): boolean | undefined {
  const inodes = new Set<string>();
  try {
    for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
      if (!fs.existsSync(table)) continue;
      for (const line of fs.readFileSync(table, 'utf8').split('\n').slice(1)) {
        const f = line.trim().split(/\s+/);
        // local_address is HEXADDR:HEXPORT, st 0A is LISTEN, the inode is the tenth field.
        if (f.length > 9 && f[3] === '0A' && parseInt(f[1].split(':')[1] ?? '', 16) === port) inodes.add(f[9]);
      }
    }
    if (inodes.size === 0) return false;
    for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
      let target: string;
      try {
        target = fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue; // closed meanwhile
      }
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode !== undefined && inodes.has(inode)) return true;
    }
    return false;
  } catch {
    return undefined;
  }
}
