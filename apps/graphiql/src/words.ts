/**
 * The sign-in bar's words in English and Chinese. The language is the console's choice
 * (localStorage `ccos.language`, same origin), else the browser's; GraphiQL's own panes are English.
 */
const WORDS = {
  en: {
    title: 'ccos-scaler GraphQL',
    user: 'User',
    password: 'Password',
    signIn: 'Sign in',
    signOut: 'Sign out',
    signedIn: (username: string, role: string) => `Signed in as ${username} (${role}); requests carry its bearer token`,
    hint: 'Sign in to load the schema and run operations, or put an Authorization header in Headers.',
    failed: 'Sign-in failed',
    unreachable: 'The service cannot be reached',
    other: '中文',
  },
  zh: {
    title: 'ccos-scaler GraphQL',
    user: '用户名',
    password: '密码',
    signIn: '登录',
    signOut: '退出登录',
    signedIn: (username: string, role: string) => `已以 ${username}（${role}）登录；请求带有其令牌`,
    hint: '登录后可加载接口结构并执行操作，或在 Headers 中填写 Authorization 请求头。',
    failed: '登录失败',
    unreachable: '无法连接服务',
    other: 'English',
  },
} as const;

export type IdeLanguage = keyof typeof WORDS;
export type IdeWords = (typeof WORDS)[IdeLanguage];

const LANGUAGE_KEY = 'ccos.language';

export function currentLanguage(): IdeLanguage {
  let stored: string | null = null;
  try {
    stored = localStorage.getItem(LANGUAGE_KEY);
  } catch {
    // storage unavailable: follow the browser
  }
  if (stored === 'en' || stored === 'zh') {
    return stored;
  }
  return (navigator.languages?.[0] ?? navigator.language ?? 'en').toLowerCase().startsWith('zh') ? 'zh' : 'en';
}

export function chooseLanguage(language: IdeLanguage): void {
  localStorage.setItem(LANGUAGE_KEY, language);
  document.documentElement.lang = language === 'zh' ? 'zh-CN' : 'en';
}

export function wordsOf(language: IdeLanguage): IdeWords {
  return WORDS[language];
}
