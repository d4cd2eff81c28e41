import './stdout-pipe';
import { readFaults, readLabConfig, updateFaults } from './host-state';

/**
 * `timedatectl` stand-in: reports the clock as synchronised unless the lab
 * set the host's `timeUnsynchronised` fault; `set-ntp true` clears it.
 */
function main(args: readonly string[]): number {
  const words = args.filter((arg) => !arg.startsWith('-'));
  const command = words[0] ?? 'status';
  const synced = !readFaults().timeUnsynchronised;
  switch (command) {
    case 'status':
      process.stdout.write(status(synced));
      return 0;
    case 'show':
      return show(args, synced);
    case 'set-ntp': {
      const value = words[1];
      if (value === undefined || !['true', 'false', 'yes', 'no', '1', '0', 'on', 'off'].includes(value)) {
        process.stderr.write('Failed to parse NTP setting: expected a boolean\n');
        return 1;
      }
      if (['true', 'yes', '1', 'on'].includes(value)) {
        updateFaults({ timeUnsynchronised: false });
      }
      return 0;
    }
    case 'timesync-status':
      process.stdout.write(synced ? `       Server: ${readLabConfig().ntpServer ?? 'n/a'}\n Poll interval: 1min 4s\n         Leap: normal\n` : '       Server: n/a\n         Leap: not synchronized\n');
      return 0;
    default:
      process.stderr.write(`Unknown command verb '${command}'.\n`);
      return 1;
  }
}

function status(synced: boolean): string {
  const now = new Date();
  const utc = now.toUTCString().replace(/GMT$/, 'UTC');
  return [
    `               Local time: ${utc}`,
    `           Universal time: ${utc}`,
    `                 RTC time: ${utc.replace(/ UTC$/, '')}`,
    '                Time zone: Etc/UTC (UTC, +0000)',
    `System clock synchronized: ${synced ? 'yes' : 'no'}`,
    `              NTP service: ${synced ? 'active' : 'inactive'}`,
    '          RTC in local TZ: no',
    '',
  ].join('\n');
}

function show(args: readonly string[], synced: boolean): number {
  const properties: Record<string, string> = {
    Timezone: 'Etc/UTC',
    LocalRTC: 'no',
    CanNTP: 'yes',
    NTP: synced ? 'yes' : 'no',
    NTPSynchronized: synced ? 'yes' : 'no',
    TimeUSec: new Date().toUTCString(),
  };
  const wanted = propertyArgs(args);
  const valueOnly = args.includes('--value');
  for (const [key, value] of Object.entries(properties)) {
    if (wanted.length === 0 || wanted.includes(key)) {
      process.stdout.write(valueOnly ? `${value}\n` : `${key}=${value}\n`);
    }
  }
  return 0;
}

function propertyArgs(args: readonly string[]): string[] {
  const out: string[] = [];
  args.forEach((arg, index) => {
    if (arg === '-p' || arg === '--property') {
      out.push(...(args[index + 1] ?? '').split(','));
    } else if (arg.startsWith('--property=')) {
      out.push(...arg.slice('--property='.length).split(','));
    } else if (arg.startsWith('-p') && arg.length > 2) {
      out.push(...arg.slice(2).split(','));
    }
  });
  return out;
}

process.exitCode = main(process.argv.slice(2));
