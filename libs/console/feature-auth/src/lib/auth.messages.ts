import { defineCatalog } from '@ccos/console/util-i18n';

export const authMessages = defineCatalog({
  en: {
    heading: 'Sign in',
    intro: 'Sign in to register clusters and add or remove worker nodes.',
    username: 'User name',
    password: 'Password',
    submit: 'Sign in',
    failed: 'Sign-in failed',
    'required.username': 'Enter your user name.',
    'required.password': 'Enter your password.',
    sessionExpired: 'Your session has ended. Sign in again to continue.',
  },
  zh: {
    heading: '登录',
    intro: '登录后可注册集群，录入、安装和移除 worker 节点。',
    username: '用户名',
    password: '密码',
    submit: '登录',
    failed: '登录失败',
    'required.username': '请输入用户名。',
    'required.password': '请输入密码。',
    sessionExpired: '会话已结束，请重新登录。',
  },
});
