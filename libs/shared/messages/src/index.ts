export { EN, type MessageCode } from './lib/catalogue.en';
export { ZH_CN } from './lib/catalogue.zh-cn';
export {
  MESSAGE_LOCALES, type MessageLocale, type MessageParam, type MessageParams, type Message, type CodedText,
  isMessageCode, isMessage, templateOf, formatMessage, formatServerText, message, bare, localeOf,
} from './lib/message';
