/**
 * Electron's security checklist, applied to every web contents and the default
 * session: `window.open` denied, navigation and redirects away from the app
 * refused, webviews refused, every permission request and check refused, and
 * every request that is not for the app's own files cancelled (no remote content).
 */
import { APP_ORIGIN } from './app-protocol.js';
import type { ContentsSurface, SessionSurface } from './electron-surface.js';

/** URLs the renderer may load: the app's own files (and DevTools' internal pages). */
export function isAppUrl(url: string): boolean {
  return url === APP_ORIGIN || url.startsWith(`${APP_ORIGIN}/`) || url.startsWith('devtools://');
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

/** Refuses every permission and every request that leaves the app. */
export function hardenSession(session: SessionSurface): void {
  session.setPermissionRequestHandler((_contents, _permission, callback) => {
    callback(false);
  });
  session.setPermissionCheckHandler(() => false);
  session.webRequest.onBeforeRequest((details, callback) => {
    callback(isAppUrl(details.url) || details.url.startsWith('data:') || details.url.startsWith('blob:') ? {} : { cancel: true });
  });
}
