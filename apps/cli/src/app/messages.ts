import { formatServerText } from '@ccos/shared/messages';

/**
 * The CLI's own words in English and Chinese, chosen by the locale (LC_ALL, LC_MESSAGES, LANG:
 * `zh_CN.UTF-8` and other `zh*` give Chinese). `{name}` is replaced by the parameter of that name.
 * Data (host names, ids, the API's own reasons) is printed as it is.
 */
export const CLI_MESSAGES = {
  usage: {
    en: `Usage: ccos-scaler <command> [flags]

Commands:
  login [--username NAME] [--password-file FILE | --password-stdin]
  logout
  clusters list
  clusters check [--cluster C]    (is the cluster ready for installs? each check with its reason and fix; exit 1 when one fails)
  clusters prepare [--cluster C]    (prints the manifest the cluster needs for installs: ccos-scaler clusters prepare | kubectl apply -f -)
  clusters limit [--cluster C] --installs-at-once N    (installs that run at once on the cluster, 1–1000; more wait their turn in line)
  nodes list [--cluster C]
  nodes add [--cluster C] --hostname H --ip IP [--port 22] [--user root] SECRET [--wait] [--acknowledge-old-certificates]
      --acknowledge-old-certificates (ADMIN): re-add a name this cluster removed after it joined, once its old machine is wiped or gone.
  nodes add [--cluster C] --from-csv FILE [--port 22] [--user root] [--partial] SECRET [--wait]
      FILE: CSV hostname,ip,port,user,labels,taints (a header may name them in any order) or one host per line.
      Every row is checked first and every problem is listed by line; nothing is added unless --partial
      (then the rows without problems are). Hosts already added with the same name and address are skipped.
  nodes install NODE [--watch]
  nodes watch NODE
  nodes retry NODE [--watch]
  nodes cancel NODE
  nodes remove NODE [--yes] [--force] [--delete-emptydir-data] [--ignore-daemonsets] [--allow-last-worker] [--clean-host] [--timeout SECONDS]
  nodes delete NODE [--yes]    (forgets a node that never joined, or was removed; nothing on the host changes)
  nodes clean NODE [--yes]    (removes what an earlier membership left on the host, as listed when it was added; then install)
  nodes credentials NODE [--user U] SECRET [--wait]    (new SSH credentials; the service connects again)
  nodes inspect NODE    (hashes the files its install wrote on the host now; names each changed or gone file; exit 1 unless CURRENT)
  rollout start [--cluster C] --kind REBOOT|UPGRADE|REAPPLY [--nodes A,B | --label K=V,…] [--max-unavailable N|N%] [--window CRON --window-minutes M [--time-zone TZ]] [--pause-on-alert A,B] [--drain-timeout S] [--ready-timeout S] [--dry-run]
      (cordon, drain, reboot, wait for Ready, uncordon, node by node; never more than the budget out of service; new nodes only inside the window and while no named alert fires; --dry-run shows each node's drain and starts nothing)
  rollout status|pause|resume|cancel [ROLLOUT] [--cluster C]    (by default the cluster's latest; status exits 1 when paused or cancelled)
  csrs list [--cluster C] [--pending]
  csrs approve NAME [--cluster C] [--force --reason TEXT]
  csrs deny NAME [--cluster C] --reason TEXT
  pools list [--cluster C]    (node groups: bounds, the size asked for and had, spares, and each host with its state)
  batches list [--cluster C]    (the latest batches of hosts added together, newest first)
  batches show BATCH [--cluster C]    (each host of a batch: phase, status, step, and why a failed one failed; BATCH: an id or its start)
  batches retry BATCH [--cluster C]    (installs the batch's failed hosts again, each from its failed step)
  audit [--actor NAME] [--action NAME] [--result SUCCESS|FAILURE|DENIED|PENDING] [--target ID] [--limit N]
  webhooks list [--cluster C]    (receivers of the cluster's node events: each change of a node's status, in order, signed)
  webhooks add --url URL [--description TEXT] [--cluster C]    (prints the signing secret, this once)
  webhooks remove ENDPOINT
  webhooks deliveries ENDPOINT [--limit N]    (the latest attempts, newest first)
  clusters four-eyes on|off [--cluster C]    (forced or ungraceful removals, skipped host sides, forced drains, forced CSR approvals and rollouts wait for a second person)
  approvals list [--cluster C] [--pending]    (actions held for a second person's approval, newest first)
  approvals approve REQUEST    (runs another user's held action, as theirs)
  approvals reject REQUEST --reason TEXT
  autoscaler connection [--cluster C] [--dir DIR]    (cloud-config and client certificate for cluster-autoscaler)
  plan -f FILE    (what applying the inventory file would change; exit 0 nothing, 5 something, 1 a conflict; docs/inventory.md)
  apply -f FILE [--yes] [--no-wait]    (applies that plan: adds and installs, relabels, removes; follows it to the end)
  inventory export [--cluster C]    (the cluster's hosts added here as an inventory file that plans to no change)

SECRET: --password-file FILE | --password-stdin | --private-key-file FILE [--passphrase-file FILE]; never on the command line.
Global flags: --server URL (or CCOS_SERVER), --output table|json|yaml, --help
The token comes from CCOS_TOKEN, or from the file login writes (~/.config/ccos-scaler/session.json).
Exit codes: 0 ok, 1 operation failed, 2 usage error, 3 authentication failed, 4 not found, 5 plan: something would change.`,
    zh: `用法：ccos-scaler <命令> [参数]

命令：
  login [--username 用户名] [--password-file 文件 | --password-stdin]       登录
  logout                                                                   退出登录
  clusters list                                                            列出集群
  clusters check [--cluster 集群]                                            检查集群能否安装节点：逐项给出原因和修复方法；有未通过的检查时退出码为 1
  clusters prepare [--cluster 集群]                                          输出集群安装节点所需的清单（ccos-scaler clusters prepare | kubectl apply -f -）
  clusters limit [--cluster 集群] --installs-at-once N                       设置集群同时运行的安装数（1–1000）；超出的安装按先后排队
  nodes list [--cluster 集群]                                               列出节点
  nodes add [--cluster 集群] --hostname 主机名 --ip 地址 [--port 22] [--user root] 凭据 [--wait] [--acknowledge-old-certificates]
      --acknowledge-old-certificates（管理员）：在旧机器已被清除或不复存在后，重新录入此集群中加入后被移除的名称。
  nodes add [--cluster 集群] --from-csv 文件 [--port 22] [--user root] [--partial] 凭据 [--wait]
      文件：CSV 列 hostname,ip,port,user,labels,taints（表头可按任意顺序命名各列），或每行一台主机。
      先检查每一行，并按行号列出全部问题；有问题时不录入任何主机，除非加 --partial（则录入没有问题的行）。
      已以相同主机名和地址录入的主机会被跳过。
  nodes install 节点 [--watch]                                               安装节点
  nodes watch 节点                                                           跟踪安装进度
  nodes retry 节点 [--watch]                                                 重试安装
  nodes cancel 节点                                                          取消安装
  nodes remove 节点 [--yes] [--force] [--delete-emptydir-data] [--ignore-daemonsets] [--allow-last-worker] [--clean-host] [--timeout 秒]
  nodes delete 节点 [--yes]                                                  删除从未加入集群（或已移除）的节点记录；主机上的内容不变
  nodes clean 节点 [--yes]                                                   清除主机上先前加入集群时留下的内容（即录入时列出的各项），之后即可安装
  nodes credentials 节点 [--user 用户] 凭据 [--wait]                          更新 SSH 凭据，服务随后重新连接
  nodes inspect 节点                                                         重新计算安装写入主机的文件的哈希，列出每个被修改或已删除的文件；状态不是 CURRENT 时退出码为 1
  rollout start [--cluster 集群] --kind REBOOT|UPGRADE|REAPPLY [--nodes A,B | --label K=V,…] [--max-unavailable N|N%] [--window CRON --window-minutes 分钟 [--time-zone 时区]] [--pause-on-alert A,B] [--drain-timeout 秒] [--ready-timeout 秒] [--dry-run]
      逐个节点封锁、排空、重启、等待就绪、恢复调度；同时不可用的节点不超过预算；新节点只在维护窗口内、且指定告警均未触发时开始；--dry-run 显示每个节点的排空情况而不启动
  rollout status|pause|resume|cancel [滚动操作] [--cluster 集群]               默认为该集群最近一次滚动操作；status 在暂停或已取消时退出码为 1
  csrs list [--cluster 集群] [--pending]                                     列出证书请求
  csrs approve 名称 [--cluster 集群] [--force --reason 理由]                  批准证书请求
  csrs deny 名称 [--cluster 集群] --reason 理由                               拒绝证书请求
  pools list [--cluster 集群]                                                列出节点池：上下限、目标与当前规模、备用主机，以及每台主机的状态
  batches list [--cluster 集群]                                              列出近期批次（一起录入的主机），最新的在前
  batches show 批次 [--cluster 集群]                                         查看批次中每台主机的阶段、状态、步骤及失败原因（批次：ID 或其开头部分）
  batches retry 批次 [--cluster 集群]                                        重新安装批次中失败的主机，每台从其失败的步骤继续
  audit [--actor 用户] [--action 操作] [--result SUCCESS|FAILURE|DENIED|PENDING] [--target ID] [--limit 条数]   审计日志
  webhooks list [--cluster 集群]                                             列出接收集群节点事件的 Webhook：每次节点状态变化，按顺序、带签名
  webhooks add --url 地址 [--description 说明] [--cluster 集群]              添加接收方；签名密钥只显示这一次
  webhooks remove 端点                                                       删除接收方
  webhooks deliveries 端点 [--limit 条数]                                    最近的投递记录，最新的在前
  clusters four-eyes on|off [--cluster 集群]                                 开启或关闭双人复核：强制或非优雅的移除、跳过主机、强制驱逐、强制批准 CSR 与滚动操作须由第二人批准
  approvals list [--cluster 集群] [--pending]                                列出等待第二人批准的操作，最新的在前
  approvals approve 请求                                                     批准他人提出的操作，并以其名义执行
  approvals reject 请求 --reason 理由                                        拒绝他人提出的操作
  autoscaler connection [--cluster 集群] [--dir 目录]                        为 cluster-autoscaler 签发客户端证书并输出 cloud-config
  plan -f 文件                                                               应用清单文件将做哪些更改；退出码 0 无更改，5 有更改，1 有冲突（docs/inventory.md）
  apply -f 文件 [--yes] [--no-wait]                                          执行该计划：录入并安装、修改标签、移除，并跟踪到结束
  inventory export [--cluster 集群]                                          将本服务录入的主机导出为清单文件（对其执行 plan 不会有任何更改）

凭据：--password-file 文件 | --password-stdin | --private-key-file 文件 [--passphrase-file 文件]；不要写在命令行上。
全局参数：--server 地址（或 CCOS_SERVER）、--output table|json|yaml、--help
令牌取自 CCOS_TOKEN，或 login 写入的文件（~/.config/ccos-scaler/session.json）。
退出码：0 成功，1 操作失败，2 用法错误，3 认证失败，4 未找到，5 plan：有待执行的更改。`,
  },
  planSummary: {
    en: 'Plan for cluster {cluster}: {add} to add and install, {install} to install, {relabel} to relabel, {remove} to remove, {forget} to forget; {unchanged} unchanged.',
    zh: '集群 {cluster} 的计划：录入并安装 {add} 台，安装 {install} 台，修改标签 {relabel} 台，移除 {remove} 台，删除记录 {forget} 台；{unchanged} 台无变化。',
  },
  planPools: { en: 'Pools: {pools} to create, {spares} spare(s) to add (installed when their pool scales up).', zh: '资源池：创建 {pools} 个，添加备用主机 {spares} 台（在资源池扩容时安装）。' },
  planCreatePool: { en: '  + pool      {pool} (size {min}..{max}; {cpus} CPUs, {memory} GiB per node) {marks}', zh: '  + 资源池    {pool}（规模 {min}..{max}；每节点 {cpus} 个 CPU，{memory} GiB）{marks}' },
  planAddSpare: { en: '  + spare     {hostname} {ip} in pool {pool}', zh: '  + 备用主机  {hostname} {ip}，资源池 {pool}' },
  planAdd: { en: '  + add       {hostname} {ip} {marks}', zh: '  + 录入      {hostname} {ip} {marks}' },
  planInstall: { en: '  + install   {hostname}', zh: '  + 安装      {hostname}' },
  planRelabel: { en: '  ~ relabel   {hostname} {from} -> {to}', zh: '  ~ 修改标签  {hostname} {from} -> {to}' },
  planRemove: { en: '  - remove    {hostname} (drain evicts {evict} pods, leaves {skip}, {refuse} would stop it)', zh: '  - 移除      {hostname}（排空将驱逐 {evict} 个 Pod，保留 {skip} 个，{refuse} 个会使其中止）' },
  planRemoveRefused: { en: '      refused: {reason}', zh: '      被拒绝：{reason}' },
  planForget: { en: '  - forget    {hostname} (never joined: its record is deleted)', zh: '  - 删除记录  {hostname}（从未加入集群：删除其记录）' },
  planConflict: { en: 'conflict: {reason}', zh: '冲突：{reason}' },
  planAttention: { en: '  ! {hostname} is {status}: it needs an operator (see ccos-scaler nodes list)', zh: '  ! {hostname} 当前为 {status}：需要运维人员处理（见 ccos-scaler nodes list）' },
  planNoChanges: { en: 'No changes: the cluster is as the file says.', zh: '无更改：集群与文件所述一致。' },
  applyPrompt: { en: 'Type the cluster name ({name}) to apply this plan, anything else to stop: ', zh: '输入集群名称（{name}）以执行此计划，输入其他内容则取消：' },
  applyNeedsYes: { en: 'not on a terminal: pass --yes to apply the plan without asking', zh: '不在终端上：请加 --yes 以不经确认直接执行计划' },
  applyAborted: { en: 'Nothing applied.', zh: '未执行任何更改。' },
  inventoryApplied: { en: 'Applied: batch {batch} installs the added hosts, {removals} removal(s) started.', zh: '已执行：批次 {batch} 安装录入的主机，已开始 {removals} 项移除。' },
  applyHostLine: { en: '{hostname}: {phase} {status} {step} {reason}', zh: '{hostname}：{phase} {status} {step} {reason}' },
  applyRemovalLine: { en: '{hostname}: removal {status} {reason}', zh: '{hostname}：移除 {status} {reason}' },
  inventoryDone: { en: 'Done: the cluster is as the file says.', zh: '完成：集群已与文件所述一致。' },
  inventoryIncomplete: { en: 'Not every change succeeded: run plan again to see what is left.', zh: '并非所有更改都已成功：请重新执行 plan 查看剩余内容。' },
  inventoryRemovalRefused: { en: 'the removal of {hostname} would be refused: {reason}', zh: '移除 {hostname} 将被拒绝：{reason}' },
  inventoryNoCredential: { en: '{hostname} is to be added, but the file names no credential for it (credential or defaults.credential)', zh: '{hostname} 将被录入，但文件未为其指定凭据（credential 或 defaults.credential）' },
  inventoryCredentialUnreadable: { en: 'the credential of {hostname} cannot be read from {source}; nothing was sent', zh: '无法从 {source} 读取 {hostname} 的凭据；未发送任何内容' },
  badUsage: { en: 'usage error: {detail} (see ccos-scaler --help)', zh: '用法错误：{detail}（见 ccos-scaler --help）' },
  unknownCommand: { en: 'unknown command "{command}"', zh: '未知命令“{command}”' },
  missingArgument: { en: '{what} is required', zh: '缺少{what}' },
  badOutput: { en: '--output must be table, json or yaml', zh: '--output 只能是 table、json 或 yaml' },
  passwordSource: { en: 'give the password with --password-file FILE or --password-stdin, never on the command line', zh: '请用 --password-file 文件 或 --password-stdin 提供密码，不要写在命令行上' },
  emptyPassword: { en: 'the password is empty', zh: '密码为空' },
  csvRow: { en: '{file} line {line}: {detail}', zh: '{file} 第 {line} 行：{detail}' },
  fieldProblem: { en: '{field}: {problem}', zh: '{field}：{problem}' },
  csvFileProblem: { en: '{file}: {detail}', zh: '{file}：{detail}' },
  csvNoHosts: { en: '{file} names no host (one per line: hostname,ip[,port,user,labels,taints])', zh: '{file} 中没有主机（每行一台：hostname,ip[,port,user,labels,taints]）' },
  csvAndHost: { en: '--from-csv and --hostname/--ip cannot be used together', zh: '--from-csv 不能与 --hostname/--ip 同时使用' },
  acknowledgeNeedsOneHost: {
    en: '--acknowledge-old-certificates applies to one host (--hostname and --ip): a list cannot re-add a removed name',
    zh: '--acknowledge-old-certificates 只适用于单台主机（--hostname 和 --ip）：列表不能重新录入已移除的名称',
  },
  partialNeedsCsv: { en: '--partial applies only to --from-csv', zh: '--partial 只能与 --from-csv 一起使用' },
  csvSkipped: { en: '{hostname} ({ip}) already added as node {id} ({status}), skipped', zh: '{hostname}（{ip}）已录入为节点 {id}（{status}），跳过' },
  csvNothingAdded: { en: 'Nothing added: {refused} row(s) of {file} have problems. Fix them and run the file again, or pass --partial to add the other rows.', zh: '未录入任何主机：{file} 中有 {refused} 行存在问题。请修正后重新运行，或加 --partial 录入其余各行。' },
  csvNothingPassed: { en: 'Nothing added: no row of {file} passed the checks ({refused} refused).', zh: '未录入任何主机：{file} 中没有通过检查的行（{refused} 行被拒绝）。' },
  csvNothingToAdd: { en: 'Nothing to add: all {skipped} host(s) of {file} are already added.', zh: '无需录入：{file} 中的 {skipped} 台主机均已录入。' },
  csvSummary: { en: '{file}: {added} added, {skipped} already added (skipped), {refused} refused.', zh: '{file}：录入 {added} 台，{skipped} 台已录入（跳过），{refused} 行被拒绝。' },
  passphraseNeedsKey: { en: '--passphrase-file goes with --private-key-file', zh: '--passphrase-file 须与 --private-key-file 一起使用' },
  oneSecret: { en: 'give either a password or a private key, not both', zh: '请只提供密码或私钥之一，不要同时提供' },
  badPort: { en: 'port "{value}" is not a number from 1 to 65535', zh: '端口“{value}”不是 1 到 65535 之间的数' },
  badNumber: { en: '{flag} must be a whole number', zh: '{flag} 须为整数' },
  passwordPrompt: { en: 'Password for {username}: ', zh: '{username} 的密码：' },
  signedIn: { en: 'Signed in to {server} as {username} ({role}); the token is in {file} until {expiresAt}.', zh: '已以 {username}（{role}）登录 {server}；令牌保存在 {file}，有效期至 {expiresAt}。' },
  signedOut: { en: 'Signed out.', zh: '已退出登录。' },
  notSignedIn: { en: 'not signed in: run ccos-scaler login, or set CCOS_TOKEN', zh: '尚未登录：请运行 ccos-scaler login，或设置 CCOS_TOKEN' },
  authFailed: { en: 'authentication failed: {detail}', zh: '认证失败：{detail}' },
  unreachable: { en: 'cannot reach {server}: {detail}', zh: '无法连接 {server}：{detail}' },
  apiRefused: { en: 'the service refused: {detail}', zh: '服务拒绝了请求：{detail}' },
  noClusters: { en: 'no cluster is registered', zh: '尚未注册任何集群' },
  severalClusters: { en: 'there are several clusters ({names}): choose one with --cluster', zh: '有多个集群（{names}）：请用 --cluster 指定' },
  clusterNotFound: { en: 'no cluster "{cluster}"', zh: '没有集群“{cluster}”' },
  nodeNotFound: { en: 'no node "{node}"', zh: '没有节点“{node}”' },
  csrNotFound: { en: 'no CSR "{name}" in cluster {cluster}', zh: '集群 {cluster} 中没有证书请求“{name}”' },
  nodeAdded: { en: 'Added {hostname} ({ip}) as node {id}: {status}', zh: '已录入 {hostname}（{ip}），节点 {id}：{status}' },
  nodeSettled: { en: '{hostname}: {status}{reason}', zh: '{hostname}：{status}{reason}' },
  deleteConfirmPrompt: { en: 'Type the host name ({name}) to delete its record, anything else to stop: ', zh: '输入主机名（{name}）以确认删除其记录，输入其他内容则取消：' },
  deleteConfirmNeeded: { en: 'not on a terminal: pass --yes to delete the record without asking', zh: '不在终端上：请加 --yes 以不经确认直接删除记录' },
  deleteAborted: { en: 'Nothing deleted.', zh: '未删除任何记录。' },
  cleanConfirmPrompt: { en: 'Type the host name ({name}) to remove what its earlier membership left on it, anything else to stop: ', zh: '输入主机名（{name}）以清除其先前加入集群时留下的内容，输入其他内容则取消：' },
  cleanConfirmNeeded: { en: 'not on a terminal: pass --yes to clean the host without asking', zh: '不在终端上：请加 --yes 以不经确认直接清理主机' },
  cleanAborted: { en: 'Nothing cleaned.', zh: '未清理任何内容。' },
  'hostState.CURRENT': {
    en: '{hostname}: CURRENT: each of the {files} files its install wrote is as it was written, from artifact set {version}, the cluster\'s.',
    zh: '{hostname}：CURRENT：安装写入的 {files} 个文件均与写入时一致，来自制品集 {version}，即集群当前的制品集。',
  },
  'hostState.DRIFTED': {
    en: '{hostname}: DRIFTED: files its install wrote were changed or removed on the host (reinstall the node to restore them):',
    zh: '{hostname}：DRIFTED：安装写入的文件在主机上被修改或删除（重新安装该节点即可恢复）：',
  },
  'hostState.OUTDATED': {
    en: '{hostname}: OUTDATED: installed from artifact set {version}; the cluster\'s installs now get another set.',
    zh: '{hostname}：OUTDATED：安装自制品集 {version}；集群的安装现在使用另一个制品集。',
  },
  'hostState.UNINSPECTED': {
    en: '{hostname}: UNINSPECTED: {files} files recorded, not inspected yet.',
    zh: '{hostname}：UNINSPECTED：已记录 {files} 个文件，尚未检查。',
  },
  driftChanged: { en: '  changed  {path}  (recorded {expected}…, now {found}…)', zh: '  已修改  {path}（记录为 {expected}…，现为 {found}…）' },
  driftGone: { en: '  gone     {path}  (recorded {expected}…)', zh: '  已删除  {path}（记录为 {expected}…）' },
  hostRunning: { en: 'At install: kernel {kernel}, kubelet {kubelet} started with {flags} argument(s).', zh: '安装时：内核 {kernel}，kubelet {kubelet}，启动参数 {flags} 个。' },
  runningKernelNow: { en: '  now kernel {kernel} (booted since the install)', zh: '  当前内核 {kernel}（安装后重新引导过）' },
  runningKubeletNow: { en: '  now kubelet {kubelet}', zh: '  当前 kubelet {kubelet}' },
  runningFlagsNow: { en: '  now kubelet runs with other arguments: {flags}', zh: '  kubelet 当前的启动参数与安装时不同：{flags}' },
  rolloutPreviewHeading: { en: 'Dry run: {nodes} node(s) in this order, at most {allowed} out of service at once; nothing started.', zh: '试运行：按此顺序共 {nodes} 个节点，同时最多 {allowed} 个不可用；未启动任何操作。' },
  rolloutPreviewWindowOpen: { en: '  the window is open until {at}', zh: '  维护窗口开放至 {at}' },
  rolloutPreviewWindowClosed: { en: '  the window is closed until {at}: nothing would start before', zh: '  维护窗口在 {at} 之前关闭：此前不会启动任何节点' },
  rolloutPreviewAlerts: { en: '  firing now: {alerts} (the rollout would pause before its first node)', zh: '  当前正在触发：{alerts}（滚动操作会在第一个节点之前暂停）' },
  rolloutPreviewNode: { en: '  {node}: drain evicts {evict} pod(s), leaves {skip}', zh: '  {node}：排空将驱逐 {evict} 个 Pod，保留 {skip} 个' },
  rolloutPreviewRefusal: { en: '      refused: {line}', zh: '      被拒绝：{line}' },
  rolloutPreviewBudget: { en: '      PodDisruptionBudget {budget} allows {allowed} disruption(s) now ({pods})', zh: '      PodDisruptionBudget {budget} 当前允许 {allowed} 次中断（{pods}）' },
  rolloutPreviewBudgetBlocks: { en: '      PodDisruptionBudget {budget} allows {allowed} disruption(s) now ({pods}): the rollout would pause here', zh: '      PodDisruptionBudget {budget} 当前允许 {allowed} 次中断（{pods}）：滚动操作会在此暂停' },
  rolloutKind: { en: 'rollout kind {kind}: REBOOT, UPGRADE (to the cluster\'s artifact set) or REAPPLY (restore drifted files)', zh: '滚动操作类型 {kind}：应为 REBOOT、UPGRADE（升级到集群的制品集）或 REAPPLY（恢复已偏离的文件）' },
  webhookSecret: { en: 'Endpoint {id} added. Signing secret (shown this once; keep it in the receiver): {secret}', zh: '已添加端点 {id}。签名密钥（只显示这一次，请保存在接收方）：{secret}' },
  webhookRemoved: { en: 'Endpoint {id} removed: nothing more is sent to {url}', zh: '已删除端点 {id}：不再向 {url} 发送' },
  approvalReasonMissing: { en: 'ccos-scaler approvals reject needs --reason (its requester reads it)', zh: 'ccos-scaler approvals reject 需要 --reason（请求人会看到）' },
  approvalDecided: { en: 'Request {id} ({action} of {target}): {status}. {outcome}', zh: '请求 {id}（对 {target} 的 {action}）：{status}。{outcome}' },
  fourEyesOnOrOff: { en: 'say on or off: ccos-scaler clusters four-eyes on|off', zh: '开启请用 ccos-scaler clusters four-eyes on，关闭请用 ccos-scaler clusters four-eyes off' },
  fourEyesOn: {
    en: 'Cluster {cluster} now holds forced and ungraceful removals, skipped host sides, forced drains, forced CSR approvals and rollouts until another user approves them (ccos-scaler approvals list).',
    zh: '集群 {cluster} 已开启双人复核：强制或非优雅的移除、跳过主机、强制驱逐、强制批准 CSR 与滚动操作须经另一位用户批准后才执行（ccos-scaler approvals list）。',
  },
  fourEyesOff: { en: 'Cluster {cluster} runs those actions when asked again; requests already held stay until decided or expired.', zh: '集群 {cluster} 已关闭双人复核，这些操作将在请求时直接执行；已提出的请求保留至被决定或过期。' },
  webhookUrlMissing: { en: 'ccos-scaler webhooks add needs --url (where the events are POSTed)', zh: 'ccos-scaler webhooks add 需要 --url（事件发往的地址）' },
  rolloutAgentRun: { en: '(agent run {run})', zh: '（代理运行 {run}）' },
  rolloutWindowMinutes: { en: '--window needs --window-minutes (how long the window stays open)', zh: '--window 需要 --window-minutes（窗口打开多久）' },
  rolloutBudget: { en: '--max-unavailable "{value}" is not a count or a percentage (2, 25%)', zh: '--max-unavailable "{value}" 不是数量或百分比（如 2、25%）' },
  rolloutNotFound: { en: 'no rollout {rollout}', zh: '没有滚动操作 {rollout}' },
  noRollouts: { en: 'cluster {cluster} has no rollouts', zh: '集群 {cluster} 没有滚动操作' },
  rolloutHeading: { en: 'Rollout {id}: {kind} {status}, at most {budget} unavailable at once, started by {by}', zh: '滚动操作 {id}：{kind} {status}，同时最多 {budget} 个不可用，由 {by} 启动' },
  rolloutWindow: { en: '  window: "{cron}" for {durationMinutes} minutes ({timeZone})', zh: '  维护窗口："{cron}"，持续 {durationMinutes} 分钟（{timeZone}）' },
  rolloutReason: { en: '  {reason}', zh: '  {reason}' },
  rolloutWaiting: { en: '  {reason}', zh: '  {reason}' },
  rolloutNode: { en: '  {node}  {phase}{problem}', zh: '  {node}  {phase}{problem}' },
  inspectProblem: { en: '{hostname}: could not inspect the host: {reason}; the last findings follow.', zh: '{hostname}：无法检查该主机：{reason}；以下为上次的检查结果。' },
  hostCleaned: {
    en: 'Cleaned {hostname}: removed what its earlier membership left (items listed: {count}); it can be installed now.',
    zh: '已清理 {hostname}：移除了先前加入集群时留下的 {count} 项内容；现在可以安装。',
  },
  nodeDeleted: { en: 'Deleted the record of {hostname} (node {id}); nothing on the host was changed.', zh: '已删除 {hostname} 的记录（节点 {id}）；主机上的内容未改变。' },
  credentialsUpdated: { en: 'New SSH credentials for {hostname} (user {user}) saved; connecting again: {status}', zh: '已保存 {hostname} 的新 SSH 凭据（用户 {user}）；正在重新连接：{status}' },
  installStarted: { en: 'Install of {hostname} started (run {run}).', zh: '已开始安装 {hostname}（运行 {run}）。' },
  retryStarted: { en: 'Install of {hostname} resumed (run {run}).', zh: '已重试安装 {hostname}（运行 {run}）。' },
  installCancelled: { en: 'Install of {hostname} cancelled: {status}.', zh: '已取消安装 {hostname}：{status}。' },
  noRun: { en: '{hostname} has no install run', zh: '{hostname} 没有安装记录' },
  stepLine: { en: '[{step}] {status}{progress} {message}', zh: '[{step}] {status}{progress} {message}' },
  waitingForCsrs: { en: '{hostname}: waiting for an operator: {count} CSR(s) to approve (ccos-scaler csrs list --pending)', zh: '{hostname}：等待操作员批准 {count} 个证书请求（ccos-scaler csrs list --pending）' },
  installSucceeded: { en: '{hostname} joined the cluster ({status}).', zh: '{hostname} 已加入集群（{status}）。' },
  installFailed: { en: 'Install of {hostname} {status}{step}: {reason}', zh: '{hostname} 安装{status}{step}：{reason}' },
  atStep: { en: ' at {step}', zh: '于 {step}' },
  checkFix: { en: '    fix:', zh: '    修复方法：' },
  installsAtOnceSet: { en: 'Cluster {cluster} now runs at most {limit} installs at once; more wait their turn.', zh: '集群 {cluster} 现在同时最多运行 {limit} 个安装；超出的按先后排队。' },
  installsAtOnceMissing: { en: 'give --installs-at-once with a number', zh: '请用 --installs-at-once 给出数目' },
  clusterReady: { en: 'Cluster {cluster} is ready for installs.', zh: '集群 {cluster} 可以安装节点。' },
  clusterNotReady: { en: 'Cluster {cluster} is not ready for installs: {failed} check(s) failed.', zh: '集群 {cluster} 尚不能安装节点：{failed} 项检查未通过。' },
  batchSummary: {
    en: 'Batch {id} ({state}): {total} host(s): {joined} joined, {installing} installing, {queued} queued, {failed} failed, {cancelled} cancelled, {waiting} waiting for an operator.',
    zh: '批次 {id}（{state}）：共 {total} 台主机：已加入 {joined}，安装中 {installing}，排队 {queued}，失败 {failed}，已取消 {cancelled}，等待操作员 {waiting}。',
  },
  batchRetried: { en: 'Retrying the {count} failed host(s) of batch {id}; each resumes at its failed step.', zh: '正在重试批次 {id} 中失败的 {count} 台主机；每台从其失败的步骤继续。' },
  batchNotFound: { en: 'no batch "{batch}" among the latest batches of cluster {cluster}', zh: '集群 {cluster} 的近期批次中没有“{batch}”' },
  batchAmbiguous: { en: '"{batch}" starts several batch ids ({ids}): give more of it', zh: '“{batch}”是多个批次 ID 的开头（{ids}）：请写得更完整' },
  csrApproved: { en: 'Approved {name}.', zh: '已批准 {name}。' },
  csrDenied: { en: 'Denied {name}.', zh: '已拒绝 {name}。' },
  previewHeading: { en: 'Removing {hostname} would:', zh: '移除 {hostname} 将会：' },
  previewCounts: { en: '  evict {evict} pod(s), skip {skip}, refuse {refuse}', zh: '  驱逐 {evict} 个 Pod，跳过 {skip} 个，拒绝 {refuse} 个' },
  previewPod: { en: '  {action} {pod}: {reason}', zh: '  {action} {pod}：{reason}' },
  previewNoPods: { en: '  no pods on the node', zh: '  节点上没有 Pod' },
  previewSafety: { en: '  check {rule}: {verdict} {message}', zh: '  检查 {rule}：{verdict} {message}' },
  previewWarning: { en: '  warning: {message}', zh: '  警告：{message}' },
  passed: { en: 'passed', zh: '通过' },
  blocked: { en: 'blocks', zh: '阻止' },
  warns: { en: 'warns', zh: '警告' },
  removalRefused: { en: 'the removal is refused: {reason}', zh: '移除被拒绝：{reason}' },
  confirmPrompt: { en: 'Type the host name ({name}) to remove it, anything else to stop: ', zh: '输入主机名（{name}）以确认移除，输入其他内容则取消：' },
  confirmNeeded: { en: 'not on a terminal: pass --yes to remove without asking', zh: '不在终端上：请加 --yes 以不经确认直接移除' },
  removalAborted: { en: 'Nothing removed.', zh: '未移除任何节点。' },
  removalStarted: { en: 'Removal of {hostname} started (run {run}).', zh: '已开始移除 {hostname}（运行 {run}）。' },
  removalLine: { en: '[{phase}] {kind} {pod}{message}', zh: '[{phase}] {kind} {pod}{message}' },
  removalSucceeded: { en: '{hostname} removed ({status}).', zh: '{hostname} 已移除（{status}）。' },
  removalFailed: { en: 'Removal of {hostname} {status}: {reason}', zh: '{hostname} 移除{status}：{reason}' },
  interrupted: { en: 'interrupted; the operation goes on in the service', zh: '已中断；服务端的操作仍在继续' },
  columns: {
    en: 'ID|NAME|API SERVER|VIP|AUTO-APPROVE|INSTALLS AT ONCE|HOSTNAME|IP|STATUS|REASON|CLUSTER|REQUESTER|NODE|VERDICT|AGE|AT|ACTOR|ACTION|TARGET|RESULT|MIN|MAX|DESIRED|CURRENT|SPARES|HOSTS|JOINED|FAILED|PHASE|STEP|URL|DESCRIPTION|LAST DELIVERED|FAILURES|EVENT|TYPE|ANSWER|MS|EXPIRES|DECIDED BY',
    zh: 'ID|名称|API 服务器|VIP|自动批准|同时安装数|主机名|地址|状态|原因|集群|申请者|节点|策略结论|时长|时间|操作者|操作|对象|结果|最小|最大|期望|当前|备用|主机数|已加入|失败|阶段|步骤|地址|说明|最近投递|连续失败|事件|类型|应答|毫秒|过期时间|决定人',
  },
} as const satisfies Record<string, { readonly en: string; readonly zh: string }>;

export type MessageKey = keyof typeof CLI_MESSAGES;
export type Language = 'en' | 'zh';

/** The language of the environment's locale: Chinese for zh*, English otherwise. */
export function languageOf(env: NodeJS.ProcessEnv): Language {
  const locale = env['LC_ALL'] || env['LC_MESSAGES'] || env['LANG'] || '';
  return /^zh/i.test(locale) ? 'zh' : 'en';
}

export type Translate = (key: MessageKey, params?: Record<string, string | number>) => string;

export function translator(language: Language): Translate {
  return (key, params = {}) => CLI_MESSAGES[key][language].replace(/\{(\w+)\}/g, (whole, name: string) => (name in params ? String(params[name]) : whole));
}

/** Column headings of the tables, by the English heading. */
export function columnTitles(language: Language): Record<string, string> {
  const english = CLI_MESSAGES.columns.en.split('|');
  const local = CLI_MESSAGES.columns[language].split('|');
  return Object.fromEntries(english.map((title, index) => [title, local[index] ?? title]));
}

/**
 * A text the server produced, in the CLI's language: from its message code and parameters (the
 * catalogue the console uses too, libs/shared/messages), else the server's own words.
 */
export function serverText(language: Language, fallback: string | null | undefined, code?: string | null, params?: unknown): string {
  return formatServerText(language === 'zh' ? 'zh-CN' : 'en', code, params, fallback);
}

/**
 * A field's own words, for the fields the CLI's commands fill in (`input.hostname` from
 * --hostname): the API's path means nothing to the reader. An unknown field keeps its last name.
 */
const FIELD_WORDS: Readonly<Record<string, { readonly en: string; readonly zh: string }>> = {
  hostname: { en: 'host name', zh: '主机名' },
  ip: { en: 'IP address', zh: 'IP 地址' },
  sshPort: { en: 'SSH port', zh: 'SSH 端口' },
  sshUser: { en: 'SSH user', zh: 'SSH 用户' },
  password: { en: 'password', zh: '密码' },
  privateKey: { en: 'private key', zh: '私钥' },
  passphrase: { en: 'passphrase', zh: '私钥口令' },
  credentials: { en: 'credentials', zh: '凭据' },
  row: { en: 'row', zh: '该行' },
  labels: { en: 'labels', zh: '标签' },
  taints: { en: 'taints', zh: '污点' },
  reason: { en: 'reason', zh: '理由' },
  username: { en: 'user name', zh: '用户名' },
  clusterId: { en: 'cluster', zh: '集群' },
  document: { en: 'inventory file', zh: '清单文件' },
  fingerprint: { en: 'plan fingerprint', zh: '计划指纹' },
};

export function fieldWords(language: Language, field: string): string {
  const name = field.replace(/\[\d+\]/g, '').split('.').pop() ?? field;
  return FIELD_WORDS[name]?.[language] ?? name;
}

/** What the API's error extensions carry for a field's problem (BAD_USER_INPUT, or a CONFLICT about a field). */
export interface ServerErrorExtensions {
  readonly messageCode?: string;
  readonly messageParams?: unknown;
  readonly field?: string;
  readonly problemCode?: string;
  readonly problemParams?: unknown;
}

/**
 * An API error in the CLI's language. A field's coded problem is shown after the field's own
 * words in Chinese (`主机名：…`), never after its API path; English keeps the server's message.
 */
export function serverErrorText(language: Language, fallback: string, extensions: ServerErrorExtensions | undefined): string {
  if (language === 'zh' && typeof extensions?.field === 'string' && typeof extensions.problemCode === 'string') {
    return `${fieldWords(language, extensions.field)}：${formatServerText('zh-CN', extensions.problemCode, extensions.problemParams, fallback)}`;
  }
  return serverText(language, fallback, extensions?.messageCode, extensions?.messageParams);
}
