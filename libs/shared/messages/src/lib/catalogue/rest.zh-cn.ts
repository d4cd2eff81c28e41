import type { REST_EN } from './rest.en';

/** {@link REST_EN} in Simplified Chinese. */
export const REST_ZH_CN: Readonly<Record<keyof typeof REST_EN, string>> = {
  'csr.forceNeedsAdmin': '强制批准需要 ADMIN 角色；您的角色是 {held}',
  'csr.forceReason.required': '强制批准时必须填写：请说明为何违背策略批准此 CSR',
  'csr.forceReason.control': '不能包含控制字符',
  'csr.reasonWithoutForce': '只用于 force: true（强制批准）；策略允许的批准无需填写理由',
  'csr.policyRefuses': 'CSR 策略不会批准 {name}：{reason}；{hint}',
  'csr.policyRefuses.cannotOverride': '强制批准也不能越过 {checks}',
  'csr.policyRefuses.adminMayForce': 'ADMIN 可以用 force: true 并写明理由来强制批准',
  'csr.forceBlocked': '无法强制批准 {name}：{blockers}；任何批准都不能越过{count, plural, =1 {这项检查} other {这些检查}}',
  'csr.forceBlocked.check': '{check}（{detail}）',
  'csr.denyReasonEmpty': '不能为空：请说明拒绝此 CSR 的原因',
  'csr.alreadyDecided': '{name} 已{state, select, approved {被批准} denied {被拒绝} issued {签发} failed {失败} other {处于 {state} 状态}}；只有待处理的 CSR 才能被{verb, select, approve {批准} other {拒绝}}',
  'cluster.outage.unreachable': '无法连接集群 {cluster}：{error}（已持续 {downFor} 秒；{retryIn} 秒后重试）。请检查其 API 服务器是否在运行，以及安装服务能否访问它（网络、防火墙、API 服务器地址）。',
  'cluster.outage.errorAnswer': '集群 {cluster} 的 API 服务器返回错误：{error}（已持续 {downFor} 秒；{retryIn} 秒后重试）。请检查注册该集群时所用服务账号的凭据和权限。',
  'cluster.outage.noFirstList': '{seconds} 秒内没有得到完整的应答（其 CSR 和 Node 的首次列表尚未到达）',
  'cluster.outage.readTimeout': '{operation}：{seconds} 秒内没有应答',
  'cluster.clientOptions': '集群 {cluster}：{error}',
  'service.shuttingDown': '服务正在关闭',
};
