// The key header's format over fake-indexeddb (cases in header-format-cases.ts).
import { headerFormatTests } from './header-format-cases.js';

headerFormatTests('Node');
