import { defineCatalog } from './catalog';

/** Words more than one feature shows: product name, roles, languages, generic actions and states. */
export const commonMessages = defineCatalog({
  en: {
    productName: 'CCOS Scaler',
    productTagline: 'Worker node scale-out and scale-in',
    'role.ADMIN': 'Admin',
    'role.OPERATOR': 'Operator',
    'role.VIEWER': 'Viewer',
    'language.label': 'Language',
    cancel: 'Cancel',
    retry: 'Retry',
    loading: 'Loading…',
    dismiss: 'Dismiss',
    on: 'On',
    off: 'Off',
    never: 'Never',
  },
  zh: {
    productName: 'CCOS 节点扩缩容',
    productTagline: 'Worker 节点扩容与缩容',
    'role.ADMIN': '管理员',
    'role.OPERATOR': '操作员',
    'role.VIEWER': '只读用户',
    'language.label': '语言',
    cancel: '取消',
    retry: '重试',
    loading: '加载中…',
    dismiss: '关闭',
    on: '已开启',
    off: '已关闭',
    never: '从未',
  },
});

/** How each language names itself in the switch. */
export const LANGUAGE_NAMES = { en: 'English', zh: '简体中文' } as const;
