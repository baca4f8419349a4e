/** docs/configuration.md shows the settings loadConfig reads: its table is the one SETTINGS generates today. */
import { expect } from 'chai';
import fs from 'node:fs';
import { CONFIG_DOC, withSettingsTable } from '../../infra/wiring/config-doc.js';
import { SETTINGS } from '../../infra/wiring/config.js';

describe('configuration: the settings table of docs/configuration.md', () => {
  it('is what SETTINGS in infra/wiring/config.ts generates now (`make config-doc`)', () => {
    const committed = fs.readFileSync(CONFIG_DOC, 'utf8');
    expect(
      withSettingsTable(committed) === committed,
      'docs/configuration.md is out of date: run `make config-doc` and commit it',
    ).to.equal(true);
  });

  it('has a row for every variable loadConfig reads', () => {
    const committed = fs.readFileSync(CONFIG_DOC, 'utf8');
    for (const variable of Object.keys(SETTINGS)) expect(committed).to.include(`| \`${variable}\` |`);
  });
});
