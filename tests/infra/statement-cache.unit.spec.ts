/** The read store's prepared statements: at most MAX_STATEMENTS per mode, whatever texts the queries make. */
import { expect } from 'chai';
import Database from 'better-sqlite3';
import { MAX_STATEMENTS, SqliteConnection } from '../../infra/adapters/sqlite/read-store-connection.js';

describe('SqliteConnection: statement cache bound', () => {
  it('holds at most its bound while ever new texts run (`in` lists of every length), and answers each right', () => {
    const connection = new SqliteConnection(new Database(':memory:'));
    connection.run('CREATE TABLE t (x INTEGER)');
    for (let x = 0; x < 10; x++) connection.run('INSERT INTO t VALUES (?)', [x]);
    for (let n = 1; n <= 3 * MAX_STATEMENTS; n++) {
      const values = Array.from({ length: n }, (_, i) => i % 10);
      const sql = `SELECT count(*) AS c FROM t WHERE x IN (${values.map(() => '?').join(',')})`;
      const counted = connection.statement(sql, 'pluck').get(...values) as number;
      expect(counted).to.equal(Math.min(n, 10));
      expect(connection.statementCount).to.be.at.most(3 * MAX_STATEMENTS);
    }
    expect(connection.statementCount).to.be.at.most(MAX_STATEMENTS + 2);
    connection.db.close();
  });
});
