/** The bounds of `GET /feeds/changes?limit` (FEEDS.md): the door checks them, the channels' document states them. */
export const DEFAULT_CHANGES_LIMIT = 500;
export const MAX_CHANGES_LIMIT = 1000;
