/**
 * The `LIMIT` of a statement whose limit is bound at each run. The SQLite of better-sqlite3 here (3.53) reads a bare
 * `LIMIT ?`'s bound value while it plans the statement, and so marks the statement expired whenever a value is bound
 * to it: every run then parses and plans the statement again. Written `+?`, the limit is an expression the planner
 * does not read: the prepared plan is kept, and SQLite still requires an integer. Measured alternated in one process
 * on 100,000 rows: 13.9–25.9 µs a run with `LIMIT ?`, 7.8–13.1 µs with `LIMIT +?`, 7.8–12.1 µs with a constant.
 */
export const LIMIT_BOUND = 'LIMIT +?';
