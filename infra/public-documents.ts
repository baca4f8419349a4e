/** The public documents: `/openapi.json`, `/openapi.yaml`, `/guia.md` (placeholder until the generator lands). */
import type { PublicDocument } from '../query-api/app.js';

export function publicDocuments(_apiBaseUrl: string): Record<string, PublicDocument> {
  return {};
}
