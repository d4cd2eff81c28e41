import { defineCatalog } from '@ccos/console/util-i18n';

export const shellMessages = defineCatalog({
  en: {
    skipToContent: 'Skip to content',
    'nav.label': 'Main',
    'nav.clusters': 'Clusters',
    'nav.users': 'Users',
    'nav.audit': 'Audit log',
    'nav.nodes': 'Nodes',
    'nav.csrs': 'Certificates',
    'nav.clusterPages': 'Pages of cluster {cluster}',
    'clusterSwitcher.label': 'Cluster',
    'clusterSwitcher.all': 'All clusters',
    'userMenu.label': 'Account',
    signOut: 'Sign out',
    signedOut: 'Signed out',
  },
  zh: {
    skipToContent: '跳到主要内容',
    'nav.label': '主导航',
    'nav.clusters': '集群',
    'nav.users': '用户',
    'nav.audit': '审计日志',
    'nav.nodes': '节点',
    'nav.csrs': '证书处理',
    'nav.clusterPages': '集群 {cluster} 的页面',
    'clusterSwitcher.label': '集群',
    'clusterSwitcher.all': '全部集群',
    'userMenu.label': '账户',
    signOut: '退出登录',
    signedOut: '已退出登录',
  },
});
