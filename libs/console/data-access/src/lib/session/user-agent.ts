const BROWSERS: ReadonlyArray<readonly [RegExp, string]> = [
  [/\bEdg\/(\d+)/, 'Edge'],
  [/\bOPR\/(\d+)/, 'Opera'],
  [/\bFirefox\/(\d+)/, 'Firefox'],
  [/\b(?:HeadlessChrome|Chromium|Chrome)\/(\d+)/, 'Chrome'],
  [/\bVersion\/(\d+)[^ ]* (?:Mobile\/\S+ )?Safari\//, 'Safari'],
  [/\bcurl\/(\d+)/, 'curl'],
];
const SYSTEMS: ReadonlyArray<readonly [RegExp, string]> = [
  [/\bWindows NT\b/, 'Windows'],
  [/\b(?:iPhone|iPad)\b/, 'iOS'],
  [/\bMac OS X\b/, 'macOS'],
  [/\bAndroid\b/, 'Android'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bLinux\b/, 'Linux'],
];

/**
 * A short name for the client behind a session, e.g. `Chrome 131 · Linux`, from its
 * User-Agent (names only, no words to translate); the raw value, shortened, when it is
 * none of the usual ones; empty when there is none.
 */
export function userAgentSummary(userAgent: string | null | undefined): string {
  if (!userAgent) {
    return '';
  }
  const browser = BROWSERS.map(([pattern, name]) => ({ name, match: pattern.exec(userAgent) })).find(({ match }) => match);
  const system = SYSTEMS.find(([pattern]) => pattern.test(userAgent))?.[1];
  if (!browser?.match) {
    return userAgent.length > 60 ? `${userAgent.slice(0, 59)}…` : userAgent;
  }
  return [`${browser.name} ${browser.match[1]}`, system].filter(Boolean).join(' · ');
}
