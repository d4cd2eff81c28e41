import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { REQUIRED_BINARIES, REQUIRED_UNITS } from '@ccos/shared/domain';

/**
 * A default artifact set (top of ARTIFACTS_DIR) with every item an install needs, as small
 * stand-in bytes: for specs whose installs stop before any download, and for the fleet bench's
 * simulated agents, which download and check them but run nothing.
 */
export async function writeStandInArtifactSet(dir: string): Promise<string> {
  for (const kind of ['binary', 'rpm', 'unit']) {
    await mkdir(join(dir, kind), { recursive: true });
  }
  for (const name of REQUIRED_BINARIES) {
    await writeFile(join(dir, 'binary', name), `stand-in ${name}\n`);
  }
  for (const name of REQUIRED_UNITS) {
    await writeFile(join(dir, 'unit', name), '[Service]\n');
  }
  await writeFile(join(dir, 'rpm', 'cri-o-1.25.0-1.x86_64.rpm'), 'stand-in rpm\n');
  return dir;
}
