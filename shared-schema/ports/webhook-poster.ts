/** The port the webhook sender posts through (infra/adapters/webhooks/poster.ts: HTTPS to public addresses only). */
export interface WebhookPost {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** The receiver's HTTP status, or why no answer came (a refused address, no connection, a timeout). */
export type WebhookPostResult = { status: number } | { error: string };

export type WebhookPoster = (post: WebhookPost) => Promise<WebhookPostResult>;
