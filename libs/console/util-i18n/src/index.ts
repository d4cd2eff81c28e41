export { LANGUAGES, type Language, type Catalog, type Translate, type MessageParams, defineCatalog, fillPlaceholders, formatIcu } from './lib/catalog';
export { I18n, isLanguage } from './lib/i18n';
export { commonMessages, LANGUAGE_NAMES } from './lib/common.messages';
export { ServerTextPipe } from './lib/server-text.pipe';
