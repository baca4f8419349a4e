/** The address convention every tool follows (docs/adr/0064-one-address-convention.md). */
import { expect } from 'chai';
import { serviceAddress } from '../../infra/ops/cli/service-address.js';
import { partnerApi } from '../../clients/typescript/examples/partner-flow.js';

describe('one address convention for the tools (SERVICE_URL, ADMIN_URL, PORT, ADMIN_PORT)', () => {
  it("defaults to `make run`'s ports on 127.0.0.1", () => {
    expect(serviceAddress({})).to.deep.equal({
      serviceUrl: 'http://127.0.0.1:8080',
      partnerApi: 'http://127.0.0.1:8080/v1',
      adminUrl: 'http://127.0.0.1:8081',
      adminApi: 'http://127.0.0.1:8081/admin/v1',
    });
    expect(partnerApi({})).to.equal('http://127.0.0.1:8080/v1');
  });

  it('derives the URLs from PORT and ADMIN_PORT when only those are set', () => {
    const a = serviceAddress({ PORT: '9080', ADMIN_PORT: '9081' });
    expect([a.partnerApi, a.adminApi]).to.deep.equal(['http://127.0.0.1:9080/v1', 'http://127.0.0.1:9081/admin/v1']);
    expect(partnerApi({ PORT: '9080' })).to.equal('http://127.0.0.1:9080/v1');
  });

  it('takes the URLs over the ports, with or without their API path and trailing slash', () => {
    for (const [service, admin] of [
      ['https://pc.example', 'https://ops.example:9443'],
      ['https://pc.example/', 'https://ops.example:9443/'],
      ['https://pc.example/v1', 'https://ops.example:9443/admin/v1'],
      ['https://pc.example/v1/', 'https://ops.example:9443/admin/v1/'],
    ]) {
      const a = serviceAddress({ SERVICE_URL: service, ADMIN_URL: admin, PORT: '1', ADMIN_PORT: '2' });
      expect(a).to.deep.equal({
        serviceUrl: 'https://pc.example',
        partnerApi: 'https://pc.example/v1',
        adminUrl: 'https://ops.example:9443',
        adminApi: 'https://ops.example:9443/admin/v1',
      });
      expect(partnerApi({ SERVICE_URL: service, PORT: '1' })).to.equal(a.partnerApi);
    }
  });
});
