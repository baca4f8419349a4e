// Pure: these are strings; nothing here opens a socket.
import { expect } from 'chai';
import fc from 'fast-check';
import { addressRefusal, isPublicAddress, parseIPv4, parseIPv6 } from '../../infra/adapters/cover/address-guard.js';

const refused: Record<string, string[]> = {
  'this network 0/8': ['0.0.0.0', '0.1.2.3', '0.255.255.255'],
  'private 10/8': ['10.0.0.1', '10.255.255.255'],
  'carrier-grade NAT 100.64/10': ['100.64.0.1', '100.127.255.254', '100.100.100.200'],
  'loopback 127/8': ['127.0.0.1', '127.0.0.2', '127.255.255.255'],
  'link-local and cloud metadata 169.254/16': ['169.254.169.254', '169.254.0.1', '169.254.170.2'],
  'private 172.16/12': ['172.16.0.1', '172.31.255.255'],
  'IETF 192.0.0/24 (incl. Oracle metadata)': ['192.0.0.1', '192.0.0.192'],
  documentation: ['192.0.2.1', '198.51.100.7', '203.0.113.9', '2001:db8::1', '3fff::1'],
  'private 192.168/16': ['192.168.1.1', '192.168.0.0'],
  'benchmarking 198.18/15': ['198.18.0.1', '198.19.255.255', '2001:2::1'],
  multicast: ['224.0.0.1', '239.255.255.250', 'ff02::1', 'ff0e::1'],
  'reserved 240/4 and broadcast': ['240.0.0.1', '250.1.2.3', '255.255.255.255'],
  'IPv6 unspecified and loopback': ['::', '::1', '0:0:0:0:0:0:0:1', '0000:0000:0000:0000:0000:0000:0000:0001'],
  'IPv6 link-local fe80::/10': ['fe80::1', 'febf:ffff::1', 'FE80::ABCD'],
  'IPv6 unique-local fc00::/7 (incl. AWS metadata)': ['fc00::1', 'fd00::1', 'fd00:ec2::254', 'fdff:ffff::1'],
  'IPv6 site-local, discard-only, SRv6, unassigned': ['fec0::1', '100::1', '5f00::1', '4000::1', '::2:3:4:5'],
  'IPv4-mapped, dotted': [
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '::ffff:169.254.169.254',
    '0:0:0:0:0:ffff:192.168.1.1',
  ],
  'IPv4-mapped, hex': ['::ffff:7f00:1', '::ffff:a00:1', '::FFFF:A9FE:A9FE'],
  'IPv4-compatible': ['::127.0.0.1', '::7f00:1', '::10.0.0.1', '::a9fe:a9fe'],
  'NAT64 64:ff9b::/96 of a private IPv4': ['64:ff9b::127.0.0.1', '64:ff9b::a00:1', '64:ff9b::169.254.169.254'],
  '6to4 2002::/16 of a private IPv4': ['2002:7f00:1::1', '2002:a00:1::', '2002:c0a8:101::1'],
  'Teredo and other IETF 2001::/23': ['2001::1', '2001:0:4136:e378::1'],
  'not an address': [
    '',
    'localhost',
    'shop.test',
    '1.2.3',
    '1.2.3.4.5',
    '256.0.0.1',
    '01.2.3.4',
    '0x7f.0.0.1',
    '2130706433',
    '1.2.3.4 ',
    ' 1.2.3.4',
    '[::1]',
    'fe80::1%eth0',
    '::1%lo',
    '1::2::3',
    '12345::',
    'g::1',
    '1:2:3:4:5:6:7:8:9',
    '1:2:3:4:5:6:7',
    ':1::',
    '::ffff:1.2.3',
    '::ffff:127.0.0.1.1',
    '1.2.3.4::',
  ],
};

const allowed = [
  '8.8.8.8',
  '1.1.1.1',
  '9.9.9.9',
  '93.184.215.14',
  '100.63.255.255',
  '100.128.0.0',
  '172.15.255.255',
  '172.32.0.0',
  '169.253.255.255',
  '192.167.255.255',
  '192.169.0.0',
  '198.17.255.255',
  '198.20.0.0',
  '223.255.255.255',
  '11.0.0.1',
  '2606:4700::1111',
  '2606:4700:4700::1111',
  '2001:4860:4860::8888',
  '2a00:1450:4001:80b::200e',
  '2c0f:fb50::1',
  '::ffff:8.8.8.8',
  '::ffff:808:808',
  '::8.8.8.8',
  '64:ff9b::8.8.8.8',
  '64:ff9b::101:101',
  '2002:808:808::1',
];

describe('isPublicAddress (pure, no socket)', () => {
  for (const [range, addresses] of Object.entries(refused)) {
    it(`refuses ${range}: ${addresses.map((a) => JSON.stringify(a)).join(', ')}`, () => {
      for (const ip of addresses) expect(isPublicAddress(ip), ip).to.equal(false);
    });
  }

  it(`lets public addresses pass: ${allowed.join(', ')}`, () => {
    for (const ip of allowed) expect(addressRefusal(ip), ip).to.equal(null);
  });

  it('names the range it refused, naming the embedded IPv4 for mapped forms', () => {
    expect(addressRefusal('169.254.169.254')).to.match(/link-local/);
    expect(addressRefusal('::ffff:7f00:1')).to.equal('IPv4-mapped of loopback');
    expect(addressRefusal('64:ff9b::a00:1')).to.equal('NAT64 of private');
    expect(addressRefusal('nope')).to.equal('not an IP address');
  });

  describe('range edges', () => {
    const edges: [string, boolean][] = [
      ['9.255.255.255', true],
      ['10.0.0.0', false],
      ['10.255.255.255', false],
      ['11.0.0.0', true],
      ['126.255.255.255', true],
      ['128.0.0.0', true],
      ['223.255.255.255', true],
      ['224.0.0.0', false],
      ['1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', false],
      ['2000::', true],
      ['3fff:fff:ffff::1', false],
      ['3fff:1000::1', true],
      ['3ffe:ffff::1', true],
      ['2001:200::1', true],
      ['2001:1ff::1', false],
    ];
    for (const [ip, isPublic] of edges) {
      it(`${ip} → ${isPublic ? 'public' : 'refused'}`, () => expect(isPublicAddress(ip)).to.equal(isPublic));
    }
  });

  describe('properties (fast-check)', () => {
    const v4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((p) => p.join('.'));
    const hex = (v: string) => {
      const n = parseIPv4(v) as number;
      return `${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
    };

    it('every IPv4-carrying IPv6 form is judged as the IPv4 address it carries', () => {
      fc.assert(
        fc.property(v4, (ip) => {
          const expected = isPublicAddress(ip);
          for (const form of [
            `::ffff:${ip}`,
            `::ffff:${hex(ip)}`,
            `64:ff9b::${ip}`,
            `64:ff9b::${hex(ip)}`,
            `0:0:0:0:0:ffff:${ip}`,
          ]) {
            expect(isPublicAddress(form), form).to.equal(expected);
          }
          expect(isPublicAddress(`::${ip}`), `::${ip}`).to.equal(expected); // IPv4-compatible
        }),
        { numRuns: 2000 },
      );
    });

    it('every address in a refused IPv4 block is refused, whatever the host part', () => {
      const blocks: [number[], number][] = [
        [[10], 8],
        [[127], 8],
        [[169, 254], 16],
        [[192, 168], 16],
        [[0], 8],
      ];
      fc.assert(
        fc.property(
          fc.constantFrom(...blocks),
          fc.array(fc.nat(255), { minLength: 4, maxLength: 4 }),
          ([prefix], rest) => {
            const ip = [...prefix, ...rest.slice(prefix.length)].join('.');
            expect(isPublicAddress(ip), ip).to.equal(false);
            expect(isPublicAddress(`::ffff:${ip}`)).to.equal(false);
          },
        ),
      );
    });

    it('the parser reads the full form and the compressed form (as WHATWG URL writes it) as one address', () => {
      const group = fc.oneof(fc.constant(0), fc.constant(0xffff), fc.nat(0xffff));
      fc.assert(
        fc.property(fc.array(group, { minLength: 8, maxLength: 8 }), (groups) => {
          const full = groups.map((g) => g.toString(16).padStart(4, '0')).join(':');
          const compressed = new URL(`http://[${full}]/`).hostname.slice(1, -1);
          const value = parseIPv6(full);
          expect(value).to.equal(groups.reduce((acc, g) => (acc << 16n) | BigInt(g), 0n));
          expect(parseIPv6(compressed), compressed).to.equal(value);
          expect(isPublicAddress(compressed)).to.equal(isPublicAddress(full));
        }),
        { numRuns: 2000 },
      );
    });
  });
});
