import { defineCatalog } from '@ccos/console/util-i18n';

/** Titles for problems by code; the API's message is shown under the title as it is. */
export const errorMessages = defineCatalog({
  en: {
    'title.BAD_USER_INPUT': 'Invalid input',
    'title.CONFLICT': 'Conflict',
    'title.NOT_FOUND': 'Not found',
    'title.UNAUTHENTICATED': 'Please sign in',
    'title.FORBIDDEN': 'Not allowed',
    'title.FAILED_PRECONDITION': 'Not possible right now',
    'title.HOST_KEY_CHANGED': 'Host key changed',
    'title.UNAVAILABLE': 'Service unavailable',
    'title.INTERNAL_SERVER_ERROR': 'Server error',
    'title.NETWORK': 'Cannot reach the installer service',
    'title.UNKNOWN': 'Something went wrong',
    'message.NETWORK': 'Check the network connection and try again.',
    'title.unexpected': 'Unexpected error in the console',
    'message.unexpected': 'Reload the page if something looks wrong. Details are in the browser console.',
  },
  zh: {
    'title.BAD_USER_INPUT': '输入有误',
    'title.CONFLICT': '冲突',
    'title.NOT_FOUND': '未找到',
    'title.UNAUTHENTICATED': '请登录',
    'title.FORBIDDEN': '无权执行此操作',
    'title.FAILED_PRECONDITION': '当前状态不允许此操作',
    'title.HOST_KEY_CHANGED': '主机密钥已变化',
    'title.UNAVAILABLE': '服务不可用',
    'title.INTERNAL_SERVER_ERROR': '服务器错误',
    'title.NETWORK': '无法连接安装服务',
    'message.NETWORK': '请检查网络连接后重试。',
    'title.UNKNOWN': '出现错误',
    'title.unexpected': '控制台出现意外错误',
    'message.unexpected': '如果页面显示异常，请刷新页面。详细信息见浏览器控制台。',
  },
});
