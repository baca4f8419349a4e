/**
 * The partner portal (PORTAL.md "The portal") under `/portal` on the partner API's address, served by the query
 * door whatever the method (the gateways send `/portal` here: docs/adr/0081-portal-door-and-sessions.md), in front of
 * the key check like the shopper's pages: a page is signed in by its session cookie, not by a key header.
 *
 * - `GET /portal`: the sign-in form, or the overview. `POST /portal/entrar` (form field `api_key`): 303 to `/portal`
 *   with a session cookie, or 401 with the form and no cookie; braked per client address (10 a minute).
 *   `POST /portal/sair` ends the session.
 * - Every form post must come from this site (`Origin`, else `Referer`): another origin, or none, is refused (403).
 * - A session sees what its key sees, read again on every page (partner, environment, scopes); pages of a SKU or
 *   store of another partner or environment answer 404.
 * - Every answer is `no-store` HTML with a Content-Security-Policy that runs no script.
 */
import { PORTAL_PATH, isPortalPath } from '../../shared-schema/http/routes.js';
import type { Next } from 'koa';
import type { DoorContext } from '../../shared-schema/http/context.js';
import { publicBrake } from '../../shared-schema/http/minute-brake.js';
import { ProblemError, methodNotAllowed } from '../../shared-schema/contract/problems.js';
import type { Scope } from '../../shared-schema/events/partner.js';
import type { KeyRecord } from '../../shared-schema/read-models/partners.js';
import { SESSION_MS } from '../../shared-schema/read-models/portal-sessions.js';
import {
  PORTAL_CSP,
  messagePage,
  signInPage,
  type PortalLinks,
  type SessionView,
} from '../../shared-schema/html/portal.js';
import type { QueryDeps } from '../app.js';
import { PortalSessions } from './sessions.js';
import { portalPages, type PortalPage } from './pages.js';

const COOKIE = 'portal_sessao';
/** The sign-in form is one field: a larger body is not a sign-in. */
const MAX_FORM_BYTES = 4096;

/** What a page of a signed-in session knows of it. */
export interface PortalSession {
  key: KeyRecord;
  tenant: { partnerId: string; env: KeyRecord['environment'] };
  who: SessionView;
  has: (scope: Scope) => boolean;
}

function sessionOf(key: KeyRecord): PortalSession {
  return {
    key,
    tenant: { partnerId: key.partner_id, env: key.environment },
    who: { partnerName: key.partner_name, partnerId: key.partner_id, env: key.environment },
    has: (scope) => key.scopes.includes(scope),
  };
}

function html(ctx: DoorContext, status: number, body: string): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = body;
}

/** The headers of every portal answer, refusals included. */
function secure(ctx: DoorContext): void {
  ctx.set('Content-Security-Policy', PORTAL_CSP);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'strict-origin-when-cross-origin');
  ctx.set('Cache-Control', 'no-store');
}

/** The host (`name:port`) of an absolute address, or null. */
function hostOf(url: string): string | null {
  try {
    return new URL(url).host.toLowerCase();
  } catch {
    return null;
  }
}

/**
 * A form post comes from this site when its `Origin` (or, without one, its `Referer`) is the site it was sent to or
 * the public base's: browsers send them on every cross-site form post, so one that names another site, or none, is
 * refused (no token to keep: the pages need no script and keep no state but the session).
 */
function sameOrigin(ctx: DoorContext, publicBaseUrl: string): boolean {
  const origin = ctx.get('Origin');
  const from = origin !== '' && origin !== 'null' ? origin : ctx.get('Referer');
  const host = from ? hostOf(from) : null;
  if (host === null) return false;
  return host === ctx.host.toLowerCase() || host === hostOf(publicBaseUrl);
}

/** The form fields of a post (urlencoded, at most MAX_FORM_BYTES). */
async function formOf(ctx: DoorContext): Promise<URLSearchParams> {
  if (!ctx.is('application/x-www-form-urlencoded')) return new URLSearchParams();
  const declared = Number(ctx.get('Content-Length') || '0');
  if (declared > MAX_FORM_BYTES) throw new ProblemError(413, [], 'The form is larger than a sign-in.');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_FORM_BYTES) throw new ProblemError(413, [], 'The form is larger than a sign-in.');
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

export function portalRoutes(deps: QueryDeps) {
  const links: PortalLinks = { portal: `${new URL(deps.publicBaseUrl).pathname.replace(/\/+$/, '')}${PORTAL_PATH}` };
  const secureCookie = new URL(deps.publicBaseUrl).protocol === 'https:';
  const sessions = new PortalSessions(deps.reads, deps.clock);
  const pages = portalPages(deps, links);

  const cookie = (value: string, maxAgeSeconds: number): string =>
    `${COOKIE}=${value}; Path=${links.portal}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Lax${secureCookie ? '; Secure' : ''}`;

  async function signIn(ctx: DoorContext): Promise<void> {
    try {
      await publicBrake(deps, ctx.ip, 'signin');
    } catch (err) {
      if (!(err instanceof ProblemError) || err.status !== 429) throw err;
      for (const [k, v] of Object.entries(err.headers)) ctx.set(k, v);
      return html(
        ctx,
        429,
        messagePage(links, null, 'Muitas tentativas', [
          'Você tentou entrar muitas vezes em pouco tempo. Espere um minuto e tente de novo.',
        ]),
      );
    }
    const key = (await formOf(ctx)).get('api_key')?.trim() ?? '';
    const id = await sessions.open(key);
    if (!id)
      return html(ctx, 401, signInPage(links, 'Chave inválida, revogada ou mal formada. Confira e tente de novo.'));
    ctx.append('Set-Cookie', cookie(id, SESSION_MS / 1000));
    ctx.status = 303;
    ctx.redirect(links.portal);
  }

  async function signOut(ctx: DoorContext): Promise<void> {
    await sessions.end(ctx.cookies.get(COOKIE));
    ctx.append('Set-Cookie', cookie('', 0));
    ctx.status = 303;
    ctx.redirect(links.portal);
  }

  return async (ctx: DoorContext, next: Next): Promise<void> => {
    if (!isPortalPath(ctx.path)) {
      await next();
      return;
    }
    secure(ctx);
    const path = ctx.path.slice(PORTAL_PATH.length) || '/';
    if (ctx.method === 'POST') {
      if (path !== '/entrar' && path !== '/sair') throw methodNotAllowed(ctx.method, 'GET, HEAD');
      if (!sameOrigin(ctx, deps.publicBaseUrl))
        return html(
          ctx,
          403,
          messagePage(links, null, 'Envio recusado', [
            'Este formulário não foi enviado a partir do portal. Abra o portal e tente de novo.',
          ]),
        );
      return path === '/entrar' ? signIn(ctx) : signOut(ctx);
    }
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD')
      throw methodNotAllowed(ctx.method, path === '/entrar' || path === '/sair' ? 'POST' : 'GET, HEAD');
    const key = await sessions.find(ctx.cookies.get(COOKIE));
    if (!key) {
      if (ctx.cookies.get(COOKIE)) ctx.append('Set-Cookie', cookie('', 0));
      if (path === '/') return html(ctx, 200, signInPage(links, null));
      ctx.status = 303;
      return ctx.redirect(links.portal);
    }
    const answer: PortalPage = await pages(sessionOf(key), path, ctx.query);
    if (answer.type === undefined) return html(ctx, answer.status, answer.body as string);
    ctx.status = answer.status;
    if (answer.filename) ctx.attachment(answer.filename);
    ctx.type = answer.type;
    ctx.body = answer.body;
  };
}
