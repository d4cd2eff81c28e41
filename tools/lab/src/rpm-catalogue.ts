/**
 * The 73 rpms of a worker (seed design: "共73个rpm包"), as stand-ins with
 * realistic names, versions and a few dependencies among them, so installing
 * them one by one in the wrong order fails as on a real host while one
 * transaction with all of them works. Sizes are small except
 * openshift-hyperkube, which makes a download take measurable time.
 */
export interface CatalogueRpm {
  readonly name: string;
  readonly version: string;
  readonly release: string;
  readonly arch: 'x86_64' | 'noarch';
  readonly requires: readonly string[];
  readonly sizeKiB: number;
}

type Row = readonly [name: string, versionRelease: string, requires: readonly string[], sizeKiB: number, arch?: 'noarch'];

const ROWS: readonly Row[] = [
  ['openshift-hyperkube', '4.12.0-202303081116.p0.g8d3f2a5.assembly.stream.el8', ['cri-o', 'conntrack-tools', 'socat', 'iptables-nft'], 8192],
  ['openshift-clients', '4.12.0-202303081116.p0.g8d3f2a5.assembly.stream.el8', ['bash'], 1024],
  ['cri-o', '1.25.2-10.rhaos4.12.git0a083f9.el8', ['conmon', 'runc', 'containers-common', 'container-selinux', 'containernetworking-plugins', 'socat', 'iproute'], 1536],
  ['cri-tools', '1.25.0-2.el8', [], 896],
  ['conmon', '2.1.2-2.module+el8.6.0+15917+093ca6f8', [], 64],
  ['runc', '1.1.4-1.rhaos4.12.el8', [], 640],
  ['crun', '1.4.2-1.module+el8.6.0+14877+f643d2d6', [], 256],
  ['containers-common', '1-43.rhaos4.12.el8', ['container-selinux'], 128, 'noarch'],
  ['container-selinux', '2.188.0-1.rhaos4.12.el8', ['policycoreutils', 'selinux-policy-targeted'], 64, 'noarch'],
  ['containernetworking-plugins', '1.0.1-5.rhaos4.11.el8', ['iptables-nft'], 1024],
  ['podman', '4.2.0-5.rhaos4.12.el8', ['conmon', 'containers-common', 'runc', 'slirp4netns', 'fuse-overlayfs'], 1024],
  ['skopeo', '1.9.4-1.rhaos4.12.el8', ['containers-common'], 512],
  ['fuse-overlayfs', '1.9-1.module+el8.7.0+15895+a6753917', ['fuse3-libs'], 64],
  ['fuse3-libs', '3.3.0-16.el8', [], 96],
  ['slirp4netns', '1.2.0-2.module+el8.7.0+15895+a6753917', ['libslirp'], 64],
  ['libslirp', '4.4.0-1.module+el8.7.0+15895+a6753917', [], 64],
  ['socat', '1.7.4.1-1.el8', [], 320],
  ['conntrack-tools', '1.4.4-11.el8', ['libnetfilter_conntrack', 'libnetfilter_cthelper', 'libnetfilter_cttimeout', 'libnetfilter_queue'], 224],
  ['libnetfilter_conntrack', '1.0.6-5.el8', ['libnfnetlink', 'libmnl'], 64],
  ['libnetfilter_cthelper', '1.0.0-15.el8', ['libmnl'], 32],
  ['libnetfilter_cttimeout', '1.0.0-11.el8', ['libmnl'], 32],
  ['libnetfilter_queue', '1.0.4-3.el8', ['libnfnetlink', 'libmnl'], 32],
  ['libnfnetlink', '1.0.1-13.el8', [], 32],
  ['libmnl', '1.0.4-6.el8', [], 32],
  ['iptables-nft', '1.8.4-23.el8', ['iptables-libs', 'nftables'], 192],
  ['iptables-libs', '1.8.4-23.el8', ['libnfnetlink'], 112],
  ['nftables', '0.9.3-26.el8', ['libnftnl', 'libmnl'], 320],
  ['libnftnl', '1.1.5-5.el8', ['libmnl'], 80],
  ['ipset', '7.1-1.el8', ['ipset-libs'], 48],
  ['ipset-libs', '7.1-1.el8', ['libmnl'], 64],
  ['ebtables-legacy', '2.0.11-9.el8', [], 96],
  ['ethtool', '5.13-2.el8', [], 224],
  ['iproute-tc', '5.18.0-1.el8', ['iproute'], 480],
  ['bridge-utils', '1.7-2.el8', [], 48],
  ['openvswitch2.17', '2.17.0-67.el8fdp', ['openvswitch-selinux-extra-policy'], 2048],
  ['openvswitch-selinux-extra-policy', '1.0-31.el8fdp', ['selinux-policy-targeted'], 16, 'noarch'],
  ['NetworkManager-ovs', '1.40.0-6.el8_7', ['openvswitch2.17'], 96],
  ['jq', '1.6-3.el8', ['oniguruma'], 208],
  ['oniguruma', '6.8.2-2.el8', [], 192],
  ['nfs-utils', '2.3.3-57.el8', ['libnfsidmap', 'rpcbind', 'keyutils', 'gssproxy'], 512],
  ['libnfsidmap', '2.3.3-57.el8', [], 128],
  ['rpcbind', '1.2.5-10.el8', [], 64],
  ['keyutils', '1.5.10-9.el8', [], 64],
  ['gssproxy', '0.8.0-21.el8', ['libverto-libev'], 128],
  ['libverto-libev', '0.3.0-5.el8', ['libev'], 16],
  ['libev', '4.24-6.el8', [], 64],
  ['cifs-utils', '6.8-3.el8', ['keyutils'], 96],
  ['device-mapper-multipath', '0.8.4-28.el8', ['device-mapper-multipath-libs'], 256],
  ['device-mapper-multipath-libs', '0.8.4-28.el8', [], 320],
  ['iscsi-initiator-utils', '6.2.1.4-4.git095f59c.el8', ['iscsi-initiator-utils-iscsiuio', 'isns-utils-libs'], 384],
  ['iscsi-initiator-utils-iscsiuio', '6.2.1.4-4.git095f59c.el8', [], 96],
  ['isns-utils-libs', '0.99-1.el8', [], 96],
  ['lvm2', '2.03.14-6.el8', ['lvm2-libs'], 1664],
  ['lvm2-libs', '2.03.14-6.el8', [], 1152],
  ['xfsprogs', '5.0.0-10.el8', [], 1088],
  ['glusterfs', '6.0-56.4.el8', ['glusterfs-libs'], 640],
  ['glusterfs-client-xlators', '6.0-56.4.el8', ['glusterfs-libs'], 896],
  ['glusterfs-fuse', '6.0-56.4.el8', ['glusterfs', 'glusterfs-client-xlators'], 160],
  ['glusterfs-libs', '6.0-56.4.el8', [], 416],
  ['attr', '2.4.48-3.el8', [], 64],
  ['chrony', '4.2-1.el8', [], 320],
  ['policycoreutils', '2.9-20.el8', [], 384],
  ['policycoreutils-python-utils', '2.9-20.el8', ['policycoreutils'], 256, 'noarch'],
  ['audit', '3.0.7-4.el8', ['audit-libs'], 256],
  ['audit-libs', '3.0.7-4.el8', [], 128],
  ['irqbalance', '1.9.0-3.el8', [], 64],
  ['tuned', '2.19.0-1.el8', [], 320, 'noarch'],
  ['sysstat', '11.7.3-7.el8', [], 448],
  ['lsof', '4.93.2-1.el8', [], 256],
  ['strace', '5.18-2.el8', [], 1472],
  ['tcpdump', '4.9.3-3.el8', [], 480],
  ['bind-utils', '9.11.36-5.el8', [], 448],
  ['kernel-tools', '4.18.0-372.46.1.el8_6', [], 1024],
];

/** The stand-in rpm set. */
export const RPM_CATALOGUE: readonly CatalogueRpm[] = ROWS.map(([name, versionRelease, requires, sizeKiB, arch]) => {
  const dash = versionRelease.indexOf('-');
  return {
    name,
    version: versionRelease.slice(0, dash),
    release: versionRelease.slice(dash + 1),
    arch: arch ?? 'x86_64',
    requires,
    sizeKiB,
  };
});
