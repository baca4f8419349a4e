/** The integration guide's section on the movement statement and the monthly closings (spec LEDGER.md). */
export const LEDGER_GUIDE = `### Movement statement and monthly closings (reconciliation)

Routes (scope \`reports\`): \`GET /statement\`, \`GET /closings\`, \`GET /closings/{period}\` and
\`GET /closings/{period}/movements.csv\`.

Every conversion event applied to an order's balance is one **movement**, booked at its \`recorded_at\` (when the
service recorded it, not your \`occurred_at\`); a duplicate, a stale event or a refused one is not. A movement
carries the signed change of the order (\`net_delta_cents\`, \`known_expected_commission_delta_cents\`, and
\`expected_commission_delta_cents\`, null while a line has no rule) and the running balances after it.

\`\`\`sh
curl -s "$BASE/statement?since=2026-10-01T03:00:00Z&until=2026-11-01T03:00:00Z&limit=200" \\
  -H "Authorization: Bearer $API_KEY"
\`\`\`

\`opening\` and \`closing\` are the running totals just before the window and at its end (the same on every page);
follow \`next_cursor\`. Add \`store_id\` for one store's balances. A window that has ended never changes.

A **closing** is a calendar month in Brasília time (America/Sao_Paulo, UTC−03:00): \`2026-10\` is
[2026-10-01T03:00:00Z, 2026-11-01T03:00:00Z). Once the month has ended it is fixed for ever: a refund recorded in
November of an order paid in October belongs to November.

\`\`\`sh
curl -s "$BASE/closings" -H "Authorization: Bearer $API_KEY"                       # newest first
curl -s "$BASE/closings/2026-10" -H "Authorization: Bearer $API_KEY"               # 409 period_open until it ends
curl -s "$BASE/closings/2026-10/movements.csv" -H "Authorization: Bearer $API_KEY" -o 2026-10.csv
sha256sum 2026-10.csv                                                                 # equals the closing's sha256
\`\`\`

To reconcile a month: check that its \`opening\` equals the previous month's \`closing\`, that \`closing\` =
\`opening\` + \`net_delta_cents\` / \`known_expected_commission_delta_cents\`, that the CSV's last line carries the
\`closing\` balances, that the CSV's SHA-256 is \`sha256\`, and that \`previous_sha256\` is the previous month's
\`sha256\`. Then match the CSV's \`order_id\`/\`event_id\` lines against your own orders.
`;
