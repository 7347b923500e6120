// The key header's format over Chromium's IndexedDB (cases in header-format-cases.ts).
import { headerFormatTests } from './header-format-cases.js';

headerFormatTests('Chromium');
