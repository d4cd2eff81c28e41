const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const DECIMAL: Record<string, number> = { n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };
const QUANTITY = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E))?$/;

/**
 * Parses a Kubernetes resource quantity (`100m`, `1.5`, `128Mi`, `1e3`, `2k`) into its value in
 * base units (cores, bytes, count). Returns null for text that is not a quantity.
 * @see https://kubernetes.io/docs/reference/kubernetes-api/common-definitions/quantity/
 */
export function parseQuantity(text: string | number | undefined | null): number | null {
  if (typeof text === 'number') {
    return Number.isFinite(text) ? text : null;
  }
  const match = text == null ? null : QUANTITY.exec(text.trim());
  if (!match) {
    return null;
  }
  const [, number, exponent, suffix] = match;
  const multiplier = exponent ? 10 ** Number(exponent.slice(1)) : suffix ? (BINARY[suffix] ?? DECIMAL[suffix]) : 1;
  return Number(number) * multiplier;
}

/** CPU in millicores, rounded up as Kubernetes' `MilliValue` does (`0.1` → 100, `1m` → 1). */
export function cpuMillicores(text: string | number | undefined | null): number | null {
  const value = parseQuantity(text);
  // Rounding to a nanocore first keeps float noise (0.1 * 1000 = 100.00000000000001) out of the ceiling.
  return value === null ? null : Math.ceil(Math.round(value * 1e9) / 1e6);
}

/** Memory (or any count) in whole base units, rounded up. */
export function wholeUnits(text: string | number | undefined | null): number | null {
  const value = parseQuantity(text);
  return value === null ? null : Math.ceil(Math.round(value * 1e3) / 1e3);
}
