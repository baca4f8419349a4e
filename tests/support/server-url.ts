/**
 * The contract suites of the distributed adapters run only against a server named by an environment variable,
 * and tests only ever talk to loopback: a URL naming any other host is refused, not used.
 */

/** Hosts of a connection string such as `esdb://127.0.0.1:2113?tls=false` or `mongodb://u:p@[::1]:1,h:2/db`. */
export function urlHosts(url: string): string[] {
  const m = /^[a-z][a-z0-9+.-]*:\/\/(?:[^@/?#]*@)?([^/?#]*)/i.exec(url);
  if (!m) return [];
  return m[1]
    .split(',')
    .filter((h) => h.length > 0)
    .map((h) => (h.startsWith('[') ? h.slice(1, h.indexOf(']')) : h.replace(/:\d+$/, '')));
}

const LOOPBACK = /^(127(?:\.\d{1,3}){3}|::1|localhost)$/i;

export function isLoopbackUrl(url: string): boolean {
  const hosts = urlHosts(url);
  return hosts.length > 0 && hosts.every((h) => LOOPBACK.test(h));
}

/**
 * Registers the suite when `variable` names a loopback server; otherwise one pending test (and one stderr line)
 * that says plainly the suite did not run, or one failing test when the URL points elsewhere.
 */
export function whenServer(variable: string, engine: string, suiteName: string, register: (url: string) => void): void {
  const url = process.env[variable];
  if (url && isLoopbackUrl(url)) {
    register(url);
    return;
  }
  if (url) {
    describe(suiteName, () => {
      it(`${variable} must name a loopback host (127.0.0.1, ::1 or localhost); tests talk to nothing else`, () => {
        throw new Error(`${variable}=${url} is not a loopback address`);
      });
    });
    return;
  }
  const line = `${engine} contract suite NOT RUN: set ${variable}`;
  process.stderr.write(`${line}\n`);
  describe(suiteName, () => {
    it(line);
  });
}
