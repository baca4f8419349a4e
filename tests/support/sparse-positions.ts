/**
 * The spacing of a test SQLite event store whose positions look like EventStoreDB's byte offsets (see
 * `SqliteEventStoreOptions.positionSpacing`): it refuses any position that is not one of its own, so a caller that
 * computes `position - 1` breaks its tests instead of passing on SQLite and failing on EventStoreDB.
 */
export const SPARSE_POSITIONS = 1009;
