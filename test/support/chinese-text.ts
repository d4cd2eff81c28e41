import type { Page } from 'playwright-core';

/**
 * What a Chinese screen may show in Latin letters, and the browser-side walk that finds every
 * other Latin word on it: English left on a Chinese screen. Shared by the console's Chinese tests.
 */

/**
 * Names that stay Latin in the Chinese console because they are names, not English: the
 * product, the Kubernetes objects and tools an operator types, protocols and units. Compared
 * case-insensitively. Kept short on purpose: a word of a sentence is never a name.
 */
export const TECHNICAL_TERMS = [
  // The product and its agent's executable, OpenShift and Kubernetes objects, node roles and conditions.
  'CCOS', 'ccos-scaler', 'cluster-autoscaler', 'CSV', 'boot-worker', 'OpenShift', 'Kubernetes', 'Node', 'Pod', 'PDB', 'PodDisruptionBudget', 'DaemonSet', 'ReplicaSet', 'ServiceAccount', 'Role', 'RoleBinding', 'emptyDir', 'CSR', 'master', 'worker', 'agent', 'Ready', 'NotReady',
  // Tools and files an operator types by these names.
  'kubelet', 'kubectl', 'kubeadm', 'kubeconfig', 'insecure-skip-tls-verify', 'rpm', 'dnf', 'systemd', 'sshd', 'Ignition', 'swap', 'swapon', 'sudo', 'cron',
  // Protocols, formats, certificate fields and units.
  'API', 'VIP', 'SSH', 'IP', 'DNS', 'TLS', 'HTTP', 'HTTPS', 'HTML', 'POST', 'Webhook', 'X-Signature', 'CN', 'O', 'SAN', 'CA', 'PEM', 'ECDSA', 'RSA', 'CPU', 'MiB', 'GiB', 'KiB', 'B', 'ms',
  // The language switch names each language in that language.
  'English',
];

/** Component names of several words that stay as they are (OpenShift's own name for it), and commands a reason tells the operator to type. */
export const TECHNICAL_PHRASES = ['machine config server', 'systemctl status sshd', 'kubectl apply -f -', 'ccos-scaler clusters prepare'];

/** Elements that show data as it is: code, commands, output tails, names set in monospace, form values. */
export const DATA_SELECTORS = ['code', 'pre', 'kbd', 'samp', '.mono', '.ccos-mono', 'input', 'textarea', 'select', '[data-testid="host-key"]', '[data-testid="drain-command"]', '.sr-only-data'];

/** Browser side: the Latin words on the visible page outside data elements, each with the text it stands in. */
const LATIN_WORDS = `({ selectors, terms, data, root }) => {
  const allowed = new Set(terms.map((term) => term.toLowerCase()));
  const values = data.map((value) => value.toLowerCase());
  const found = [];
  const walker = document.createTreeWalker(root ? document.querySelector(root) ?? document.body : document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const element = node.parentElement;
    if (!element || element.closest(selectors.join(',')) || element.closest('script, style, [hidden], [aria-hidden="true"]')) {
      continue;
    }
    if (!element.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true })) {
      continue;
    }
    let text = node.textContent ?? '';
    // Longest first, so that a value holding a shorter one (an OS name holding the cluster's name) goes whole.
    for (const value of [...data].sort((a, b) => b.length - a.length)) {
      text = text.split(value).join(' ');
    }
    // A word starts where no letter or digit is before it (the m of 500m CPU is a unit, not a word).
    // A leading slash keeps a path (/version) whole, so that it counts as data below.
    for (const match of text.matchAll(/(?<![A-Za-z0-9/])(?:-{0,2}|[/])[A-Za-z][A-Za-z0-9_.:/@#=-]*/g)) {
      const word = match[0].replace(/[.:/-]+$/, '');
      // Command flags (--force), identifiers, paths, versions, addresses and key=value examples are data.
      if (word.startsWith('-') || /[0-9_./:@#=]/.test(word) || allowed.has(word.toLowerCase()) || values.includes(word.toLowerCase())) {
        continue;
      }
      found.push(word + '  ←  ' + (node.textContent ?? '').trim().slice(0, 160));
    }
  }
  return [...new Set(found)];
}`;

/**
 * The Latin words on the visible page (or in the element `root` selects) outside data elements,
 * technical names and `data` (names, addresses … of the world), each with the text around it.
 */
export async function latinWordsOnScreen(page: Page, data: readonly string[], root?: string): Promise<string[]> {
  return (await page.evaluate(`(${LATIN_WORDS})(${JSON.stringify({ selectors: DATA_SELECTORS, terms: TECHNICAL_TERMS, data: [...data, ...TECHNICAL_PHRASES], root: root ?? null })})`)) as string[];
}
