/**
 * The application menu. Its commands (import, export, switch view) are sent to
 * the renderer, which owns the memory; the menu itself touches nothing.
 */
import type { MenuCommand } from '../preload/bridge-api.js';
import type { MenuItemTemplate } from './electron-surface.js';

/**
 * The menu template; `send` delivers a command to the window's renderer.
 * @example
 * Menu.setApplicationMenu(Menu.buildFromTemplate(menuTemplate((c) => { win.webContents.send(CHANNELS.menuCommand, c) }, process.platform)))
 */
export function menuTemplate(send: (command: MenuCommand) => void, platform: string): MenuItemTemplate[] {
  const item = (label: string, command: MenuCommand, accelerator?: string): MenuItemTemplate => ({
    label,
    ...(accelerator === undefined ? {} : { accelerator }),
    click: () => {
      send(command);
    },
  });
  const menu: MenuItemTemplate[] = [
    {
      label: 'File',
      submenu: [
        item('Import…', 'import', 'CmdOrCtrl+O'),
        item('Export…', 'export', 'CmdOrCtrl+S'),
        { type: 'separator' },
        platform === 'darwin' ? { role: 'close' } : { role: 'quit' },
      ],
    },
    { role: 'editMenu' },
    {
      label: 'View',
      submenu: [
        item('Chat', 'view-chat', 'CmdOrCtrl+0'),
        item('Memories', 'view-memories', 'CmdOrCtrl+1'),
        item('Conversations', 'view-conversations', 'CmdOrCtrl+2'),
        item('Core memory', 'view-blocks', 'CmdOrCtrl+3'),
        item('Map', 'view-map', 'CmdOrCtrl+4'),
        item('Import and export', 'view-transfer', 'CmdOrCtrl+5'),
        item('Sync', 'view-sync', 'CmdOrCtrl+6'),
        item('Forget a user…', 'view-forget'),
        item('Agents (MCP)', 'view-agents'),
        item('Status', 'view-status', 'CmdOrCtrl+7'),
        { type: 'separator' },
        { role: 'resetZoom' },
        { role: 'zoomIn' },
        { role: 'zoomOut' },
        { role: 'togglefullscreen' },
      ],
    },
    { role: 'windowMenu' },
  ];
  return platform === 'darwin' ? [{ role: 'appMenu' }, ...menu] : menu;
}
