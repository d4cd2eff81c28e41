import { computed, signal } from '@angular/core';
import type { KeyValueRow } from '@ccos/console/ui';
import type { AddNodeInput } from '@ccos/shared/api-schema';
import { TAINT_EFFECTS, type TaintEffect, checkHostname, checkIp, checkLabelKey, checkLabelValue, checkLabels, checkPort, checkTaints } from '@ccos/shared/domain';
import { type CredentialsField, type CredentialsProblem, SshCredentialsForm } from '../ssh-credentials.form';

/** The fields the form shows, named as the API names them (so `input.hostname` errors land on `hostname`). */
export type AddNodeField = 'hostname' | 'ip' | 'sshPort' | CredentialsField | 'labels' | 'taints';

export type HostProblem = 'invalid.hostname' | 'invalid.ip' | 'invalid.sshPort' | 'invalid.labels' | 'invalid.taints';
export type AddNodeProblem = HostProblem | CredentialsProblem;

/** A row's problem and the key it is about, worded by the page. */
export interface RowProblem {
  readonly problem: 'required.key' | 'invalid.key' | 'invalid.value' | 'duplicate.key';
  readonly key: string;
}

/**
 * The add-node form's values and client-side rules — the same rules the API applies, from
 * @ccos/shared/domain — kept apart from the page so the page only wires them to fields.
 * Empty label and taint rows are ignored.
 */
export class AddNodeForm {
  readonly hostname = signal('');
  readonly ip = signal('');
  readonly sshPort = signal('22');
  readonly credentials = new SshCredentialsForm();
  readonly labels = signal<readonly KeyValueRow[]>([]);
  readonly taints = signal<readonly KeyValueRow[]>([]);

  readonly labelRowProblems = computed(() => rowProblems(this.labels(), false));
  readonly taintRowProblems = computed(() => rowProblems(this.taints(), true));

  readonly problems = computed(() => {
    const problems: Partial<Record<AddNodeField, AddNodeProblem>> = {};
    if (checkHostname(this.hostname().trim()) !== null) {
      problems.hostname = 'invalid.hostname';
    }
    if (checkIp(this.ip().trim()) !== null) {
      problems.ip = 'invalid.ip';
    }
    if (!/^\d{1,5}$/.test(this.sshPort().trim()) || checkPort(Number(this.sshPort().trim())) !== null) {
      problems.sshPort = 'invalid.sshPort';
    }
    Object.assign(problems, this.credentials.problems());
    // Row problems are shown per row; the set-wide rule (the API's) must agree before sending.
    if (this.labelRowProblems().some(Boolean) || checkLabels(this.labelInput()) !== null) {
      problems.labels = 'invalid.labels';
    }
    if (this.taintRowProblems().some(Boolean) || checkTaints(this.taintInput()) !== null) {
      problems.taints = 'invalid.taints';
    }
    return problems;
  });

  readonly valid = computed(() => Object.keys(this.problems()).length === 0);

  toInput(clusterId: string): AddNodeInput {
    return {
      clusterId,
      hostname: this.hostname().trim(),
      ip: this.ip().trim(),
      sshPort: Number(this.sshPort().trim()),
      ...this.credentials.toInput(),
      labels: this.labelInput(),
      taints: this.taintInput().map((taint) => ({ key: taint.key, value: taint.value || null, effect: taint.effect })),
    };
  }

  /** What each field was when sent, to tell whether the user changed it since the API complained. */
  snapshot(): Readonly<Record<AddNodeField, string>> {
    return {
      hostname: this.hostname().trim(),
      ip: this.ip().trim(),
      sshPort: this.sshPort().trim(),
      sshUser: this.credentials.sshUser().trim(),
      password: '',
      privateKey: '',
      passphrase: '',
      labels: JSON.stringify(this.labelInput()),
      taints: JSON.stringify(this.taintInput()),
    };
  }

  private labelInput(): { key: string; value: string }[] {
    return filled(this.labels()).map((row) => ({ key: row.key.trim(), value: row.value.trim() }));
  }

  private taintInput(): { key: string; value: string; effect: TaintEffect }[] {
    return filled(this.taints()).map((row) => ({ key: row.key.trim(), value: row.value.trim(), effect: toEffect(row.effect) }));
  }
}

function filled(rows: readonly KeyValueRow[]): readonly KeyValueRow[] {
  return rows.filter((row) => row.key.trim() !== '' || row.value.trim() !== '');
}

function toEffect(value: string): TaintEffect {
  return (TAINT_EFFECTS as readonly string[]).includes(value) ? (value as TaintEffect) : 'NoSchedule';
}

function rowProblems(rows: readonly KeyValueRow[], valueOptional: boolean): (RowProblem | null)[] {
  const seen = new Set<string>();
  return rows.map((row) => {
    const key = row.key.trim();
    const value = row.value.trim();
    if (key === '' && value === '') {
      return null;
    }
    if (key === '') {
      return { problem: 'required.key', key };
    }
    if (checkLabelKey(key) !== null) {
      return { problem: 'invalid.key', key };
    }
    if ((value !== '' || !valueOptional) && checkLabelValue(value) !== null) {
      return { problem: 'invalid.value', key: value };
    }
    // Kubernetes keeps one label per key; taints may repeat a key with another effect.
    const identity = valueOptional ? `${key}:${row.effect}` : key;
    if (seen.has(identity)) {
      return { problem: 'duplicate.key', key };
    }
    seen.add(identity);
    return null;
  });
}
