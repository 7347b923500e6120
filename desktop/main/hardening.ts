/**
 * Electron's security checklist, applied to every web contents and the default
 * session: `window.open` denied, navigation and redirects away from the app
 * refused, webviews refused, every permission request and check refused, and
 * every request that is not for the app's own files cancelled (no remote content),
 * except requests to the one sync server and the one model server the user set.
 */
import { APP_ORIGIN } from './app-protocol.js';
import type { ContentsSurface, SessionSurface } from './electron-surface.js';

/**
 * URLs of the app's own page and files. The only place a window may navigate
 * to, and the only page whose IPC calls are answered (DevTools' `devtools://`
 * pages are neither).
 */
export function isAppUrl(url: string): boolean {
  return url === APP_ORIGIN || url.startsWith(`${APP_ORIGIN}/`);
}

/**
 * Requests that stay on this machine without reaching any file or server of
 * their own: the app's files, the page's `data:` and `blob:` URLs, and the
 * resources of DevTools (`devtools://`, its own bundled frontend, loaded only
 * when the user opens it). Requests only: nothing may navigate to them.
 */
function isLocalRequest(url: string): boolean {
  return isAppUrl(url) || url.startsWith('data:') || url.startsWith('blob:') || url.startsWith('devtools://');
}

/** Locks one web contents to the app. */
export function hardenContents(contents: ContentsSurface): void {
  contents.setWindowOpenHandler(() => ({ action: 'deny' }));
  const refuseForeign = (event: { preventDefault(): void }, url: string): void => {
    if (!isAppUrl(url)) event.preventDefault();
  };
  contents.on('will-navigate', refuseForeign);
  contents.on('will-redirect', refuseForeign);
  contents.on('will-attach-webview', (event) => {
    event.preventDefault();
  });
}

/**
 * Refuses every permission and every request that leaves the app, except to the
 * origins `allowedOrigins()` names (the sync server and the model server the user
 * set and allowed), read at each request.
 */
export function hardenSession(
  session: SessionSurface,
  allowedOrigins: () => readonly (string | undefined)[] = () => [],
): void {
  session.setPermissionRequestHandler((_contents, _permission, callback) => {
    callback(false);
  });
  session.setPermissionCheckHandler(() => false);
  session.webRequest.onBeforeRequest((details, callback) => {
    const allowed = allowedOrigins().some(
      (origin) => origin !== undefined && (details.url === origin || details.url.startsWith(`${origin}/`)),
    );
    callback(isLocalRequest(details.url) || allowed ? {} : { cancel: true });
  });
}
