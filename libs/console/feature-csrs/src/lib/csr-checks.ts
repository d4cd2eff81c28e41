import { CLIENT_CSR_CHECKS, SERVING_CSR_CHECKS } from '@ccos/shared/domain';

/** Every check name the policy reports, so each has a translated label. */
export const CSR_CHECK_NAMES = [...new Set<string>([...CLIENT_CSR_CHECKS, ...SERVING_CSR_CHECKS])] as readonly CsrCheckName[];
export type CsrCheckName = (typeof CLIENT_CSR_CHECKS)[number] | (typeof SERVING_CSR_CHECKS)[number];

export function isKnownCheck(name: string): name is CsrCheckName {
  return (CSR_CHECK_NAMES as readonly string[]).includes(name);
}
