/**
 * Whether an offer is searchable, as the checks of SHOPPER.md "What is searchable" (PORTAL.md "Why is my offer (not)
 * in search"): the one derivation the shopper search (offer-facts.ts, infra/adapters/sqlite/held-offers.ts) and the partner's
 * `GET /v1/products/{sku}/visibility` both call, so the answer a partner reads is the rule the search applies.
 *
 * An offer is searchable exactly when every check is ok. The `accepted` check is the state `GET /v1/products/{sku}`
 * derives (product-status.ts), so it already fails when the store is not active, the domain not approved or the
 * offer stale; the other checks say which of those it is, so a partner knows what to do.
 */
import {
  pageDomainApproved,
  STALE_AFTER_MS,
  withClock,
  type BaseState,
  type ProductState,
  type StoreFacts,
} from './product-status.js';

export const VISIBILITY_CHECKS = ['live', 'accepted', 'fresh', 'store_active', 'domain_approved', 'available'] as const;
export type VisibilityCheckName = (typeof VISIBILITY_CHECKS)[number];
export type VisibilityCheck = { check: VisibilityCheckName; ok: boolean };

/** What the checks read: the offer's base state and last applied write, its store's facts, its page's host. */
export interface VisibilityFacts {
  live: boolean;
  base: BaseState;
  /** The time of the last applied PUT/PATCH (ISO text or ms since the epoch). */
  last_write_at: string | number;
  store: Pick<StoreFacts, 'status' | 'domains' | 'domains_approved'> | null;
  page_host: string;
  available: boolean;
}

const msOf = (at: string | number): number => (typeof at === 'number' ? at : Date.parse(at));

/** The state `GET /v1/products/{sku}` answers at `now`. */
export const stateAt = (f: Pick<VisibilityFacts, 'base' | 'last_write_at'>, now: Date): ProductState =>
  withClock(f.base, msOf(f.last_write_at), now);

/** The checks, in the order Visibility lists them. */
export function visibilityChecks(f: VisibilityFacts, now: Date): VisibilityCheck[] {
  return [
    { check: 'live', ok: f.live },
    { check: 'accepted', ok: stateAt(f, now) === 'accepted' },
    { check: 'fresh', ok: now.getTime() - msOf(f.last_write_at) <= STALE_AFTER_MS },
    { check: 'store_active', ok: f.store?.status === 'active' },
    { check: 'domain_approved', ok: pageDomainApproved(f.store, f.page_host) },
    { check: 'available', ok: f.available === true },
  ];
}

/**
 * Searchable at `now`: every check of `visibilityChecks` ok, the same conditions in the same order, without building
 * the list (the feed projector judges every offer on every write of it, the search every offer it ranks).
 */
export function searchableNow(f: VisibilityFacts, now: Date): boolean {
  return (
    f.live &&
    stateAt(f, now) === 'accepted' &&
    now.getTime() - msOf(f.last_write_at) <= STALE_AFTER_MS &&
    f.store?.status === 'active' &&
    pageDomainApproved(f.store, f.page_host) &&
    f.available === true
  );
}

/** When an `accepted` offer leaves search by rule 3 unless written again; null while it is not `accepted`. */
export function freshUntil(f: Pick<VisibilityFacts, 'base' | 'last_write_at'>, now: Date): string | null {
  return stateAt(f, now) === 'accepted' ? new Date(msOf(f.last_write_at) + STALE_AFTER_MS).toISOString() : null;
}

/** What to do (pt-BR) when a check fails; `state` is the one `GET /v1/products/{sku}` answers. */
export function checkDetail(check: VisibilityCheckName, state: ProductState): string {
  switch (check) {
    case 'live':
      return 'Este produto está no ambiente de teste, que ninguém vê na busca: envie-o com uma chave live para publicá-lo.';
    case 'accepted':
      return ACCEPTED_DETAILS[state];
    case 'fresh':
      return 'Nenhuma atualização (PUT ou PATCH) aplicada nas últimas 48 horas: envie o produto de novo para que volte à busca.';
    case 'store_active':
      return 'A loja não está ativa (aguarda análise ou está suspensa): aguarde a aprovação da loja ou fale com o suporte.';
    case 'domain_approved':
      return 'O domínio do product_url ainda não foi aprovado: use um domínio aprovado da loja ou aguarde a aprovação do domínio.';
    case 'available':
      return 'O produto está marcado como indisponível (available: false): envie available: true quando puder vendê-lo.';
  }
}

const ACCEPTED_DETAILS: Record<ProductState, string> = {
  accepted: 'O produto está aceito.',
  pending:
    'O produto está pendente: aguarde a verificação da imagem de capa, ou resolva os motivos listados (loja ou domínio não aprovados).',
  rejected:
    'O produto foi rejeitado: corrija os motivos listados (por exemplo, a imagem de capa) e envie-o de novo com PUT.',
  stale: 'O produto está desatualizado (mais de 48 horas sem PUT ou PATCH aplicado): envie-o de novo.',
  removed: 'O produto foi removido: envie-o de novo com PUT para publicá-lo outra vez.',
};
