import { computed } from '@angular/core';
import { toSignal } from '@angular/core/rxjs-interop';
import { FormControl, FormGroup } from '@angular/forms';
import { type KeyValueRow, domainValidator } from '@ccos/console/ui';
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

const trimmed = (check: (value: string) => ReturnType<typeof checkIp>, problem: HostProblem) => domainValidator((value) => check(value.trim()), problem);

/** A port as typed: digits only, then the domain's port range. */
function checkTypedPort(value: string): ReturnType<typeof checkPort> {
  return /^\d{1,5}$/.test(value) ? checkPort(Number(value)) : checkPort(Number.NaN);
}

/**
 * The add-node form: an Angular form group whose validators are the rules the API applies,
 * from @ccos/shared/domain, kept apart from the page so the page only wires controls to fields.
 * Empty label and taint rows are ignored. Create it in an injection context (a component's field).
 */
export class AddNodeForm {
  readonly credentials = new SshCredentialsForm();
  readonly group = new FormGroup({
    hostname: new FormControl('', { nonNullable: true, validators: trimmed(checkHostname, 'invalid.hostname') }),
    ip: new FormControl('', { nonNullable: true, validators: trimmed(checkIp, 'invalid.ip') }),
    sshPort: new FormControl('22', { nonNullable: true, validators: trimmed(checkTypedPort, 'invalid.sshPort') }),
    credentials: this.credentials.group,
    labels: new FormControl<readonly KeyValueRow[]>([], { nonNullable: true }),
    taints: new FormControl<readonly KeyValueRow[]>([], { nonNullable: true }),
    /** An ADMIN's confirmation that the machine a removed name belonged to is wiped or gone (asked for by the API only). */
    acknowledgeOldCertificates: new FormControl(false, { nonNullable: true }),
  });
  /** The group's value, so what is computed from its controls (the page's error texts) follows every change. */
  private readonly value = toSignal(this.group.valueChanges, { initialValue: this.group.value });

  get controls(): AddNodeForm['group']['controls'] {
    return this.group.controls;
  }

  readonly labelRowProblems = computed(() => rowProblems(this.value().labels ?? [], false));
  readonly taintRowProblems = computed(() => rowProblems(this.value().taints ?? [], true));

  readonly problems = computed(() => {
    this.value();
    const problems: Partial<Record<AddNodeField, AddNodeProblem>> = {};
    for (const field of ['hostname', 'ip', 'sshPort'] as const) {
      const errors = this.controls[field].errors;
      if (errors) {
        problems[field] = Object.keys(errors)[0] as HostProblem;
      }
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
    const { hostname, ip, sshPort, acknowledgeOldCertificates } = this.group.getRawValue();
    return {
      clusterId,
      hostname: hostname.trim(),
      ip: ip.trim(),
      sshPort: Number(sshPort.trim()),
      ...this.credentials.toInput(),
      labels: this.labelInput(),
      taints: this.taintInput().map((taint) => ({ key: taint.key, value: taint.value || null, effect: taint.effect })),
      ...(acknowledgeOldCertificates ? { acknowledgeOldCertificates } : {}),
    };
  }

  /** What each field was when sent, to tell whether the user changed it since the API complained. */
  snapshot(): Readonly<Record<AddNodeField, string>> {
    const { hostname, ip, sshPort, credentials } = this.group.getRawValue();
    return {
      hostname: hostname.trim(),
      ip: ip.trim(),
      sshPort: sshPort.trim(),
      sshUser: credentials.sshUser.trim(),
      password: '',
      privateKey: '',
      passphrase: '',
      labels: JSON.stringify(this.labelInput()),
      taints: JSON.stringify(this.taintInput()),
    };
  }

  private labelInput(): { key: string; value: string }[] {
    return filled(this.controls.labels.value).map((row) => ({ key: row.key.trim(), value: row.value.trim() }));
  }

  private taintInput(): { key: string; value: string; effect: TaintEffect }[] {
    return filled(this.controls.taints.value).map((row) => ({ key: row.key.trim(), value: row.value.trim(), effect: toEffect(row.effect) }));
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
