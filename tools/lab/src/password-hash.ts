import { runCommand } from './run-command';

/**
 * A SHA-512 crypt hash (`$6$...`) for `/etc/shadow`, made by `openssl passwd`
 * with the password on stdin (never on a command line).
 */
export async function hashPassword(password: string): Promise<string> {
  if (password.includes('\n')) {
    throw new RangeError('a password cannot contain a newline');
  }
  const { stdout } = await runCommand(['openssl', 'passwd', '-6', '-stdin'], { input: `${password}\n` });
  return stdout.trim();
}

/** `/etc/shadow` text with root's password hash replaced (other lines untouched). */
export function withRootPassword(shadow: string, hash: string): string {
  let found = false;
  const lines = shadow.split('\n').map((line) => {
    const fields = line.split(':');
    if (fields[0] !== 'root') {
      return line;
    }
    found = true;
    fields[1] = hash;
    return fields.join(':');
  });
  if (!found) {
    throw new Error('/etc/shadow has no root entry');
  }
  return lines.join('\n');
}
