import { describe, expect, it } from 'vitest';
import { namespaceMountPoints } from './host-namespaces';

describe('namespace files a new host detaches', () => {
  it('detaches the folders holding namespace files and any nsfs file outside them, and nothing else', () => {
    const mountinfo = [
      '22 1 0:21 / / rw,relatime shared:1 - ext4 /dev/sda1 rw',
      '30 22 0:25 / /run rw,nosuid shared:5 - tmpfs tmpfs rw',
      '41 30 0:25 /netns /run/netns rw,nosuid shared:20 - tmpfs tmpfs rw',
      '42 41 0:4 net:[4026532300] /run/netns/cclabk7-h1 rw shared:21 - nsfs nsfs rw',
      '43 41 0:4 net:[4026532301] /run/netns/ccoslab-h1 rw shared:22 - nsfs nsfs rw',
      '50 30 0:25 /cclab/m2/ns /run/cclab/m2/ns rw,nosuid - tmpfs tmpfs rw',
      '51 50 0:4 mnt:[4026532400] /run/cclab/m2/ns/h1.mnt rw - nsfs nsfs rw',
      '60 30 0:25 /ccos-lab/ns /run/ccos-lab/ns rw,nosuid - tmpfs tmpfs rw',
      '70 22 0:30 / /sys rw shared:7 - sysfs sysfs rw',
      '',
    ].join('\n');
    expect(namespaceMountPoints(mountinfo)).toEqual([
      '/run/cclab/m2/ns',
      '/run/ccos-lab/ns',
      '/run/netns',
    ]);
    expect(namespaceMountPoints('90 22 0:4 net:[4026532500] /var/run/docker/netns/abc rw - nsfs nsfs rw\n')).toEqual(['/var/run/docker/netns/abc']);
  });
});
