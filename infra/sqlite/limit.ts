/**
 * The `LIMIT` of a statement whose limit is bound at each run. The SQLite of better-sqlite3 here (3.53) reads a bare
 * `LIMIT ?`'s bound value while it plans the statement, and so marks the statement expired whenever a value is bound
 * to it: every run then parses and plans the statement again. Written `+?`, the limit is an expression the planner
 * does not read: the prepared plan is kept, and SQLite still requires an integer. On 100,000 rows a run with
 * `LIMIT ?` costs about twice one with `LIMIT +?`, which costs what a constant limit does (docs/benchmarks.md,
 * "Less CPU per search").
 */
export const LIMIT_BOUND = 'LIMIT +?';
