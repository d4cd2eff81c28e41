/**
 * Formats an age the way the API server's table printers do (`5s`, `3m20s`, `4h`, `2d3h`).
 * @see https://github.com/kubernetes/apimachinery/blob/master/pkg/util/duration/duration.go
 */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) {
    return '<invalid>';
  }
  if (seconds < 0) {
    return '0s';
  }
  if (seconds < 120) {
    return `${seconds}s`;
  }
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 180) {
    return `${minutes}m`;
  }
  const hours = Math.floor(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) {
    return `${hours}h`;
  }
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) {
    return `${Math.floor(hours / 24)}d`;
  }
  if (hours < 24 * 365 * 8) {
    const dy = Math.floor(hours / 24) % 365;
    const years = Math.floor(hours / 24 / 365);
    return dy === 0 ? `${years}y` : `${years}y${dy}d`;
  }
  return `${Math.floor(hours / 24 / 365)}y`;
}
