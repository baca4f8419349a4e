/**
 * The `LIMIT` of a statement whose limit is bound at each run. SQLite (since 3.47) reads a bare `LIMIT ?`'s bound
 * value while it plans the statement, and so marks the statement expired whenever a value is bound to it: every run
 * then parses and plans the statement again (`sqlite3Reprepare`). In the search bench that was a quarter of the
 * projection thread's CPU, in its subscription's reads (docs/benchmarks.md, 2026-11-25). Written `+?`, the limit is an
 * expression the planner does not read: the prepared plan is kept, and SQLite still requires an integer.
 */
export const LIMIT_BOUND = 'LIMIT +?';
