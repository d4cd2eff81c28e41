import type { AdmissionPlugin, AdmissionRequest } from '../admission';
import type { UserInfo } from '../user-info';
import { resourceAttributes } from './attributes';
import { forbiddenError, type Authorizer } from './authorizer';

function signerOf(request: AdmissionRequest): string {
  const signer = request.object?.spec?.['signerName'];
  return typeof signer === 'string' ? signer : '';
}

/**
 * Whether the user may `verb` (approve, sign) on the synthetic `signers` resource of
 * certificates.k8s.io for this signer name, or for its domain wildcard (`kubernetes.io/*`).
 * @see https://kubernetes.io/docs/reference/access-authn-authz/certificate-signing-requests/#authorization
 * @see https://github.com/kubernetes/kubernetes/blob/master/plugin/pkg/admission/certificates/util.go
 */
export function authorizedForSigner(authorizer: Authorizer, user: UserInfo, verb: string, signerName: string): boolean {
  const check = (name: string): boolean => authorizer.authorize(resourceAttributes(user, { verb, apiGroup: 'certificates.k8s.io', apiVersion: '*', resource: 'signers', name })).allowed;
  return check(signerName) || check(`${signerName.split('/')[0]}/*`);
}

/**
 * The CertificateApproval and CertificateSigning admission plugins: writing `/approval` (approve or
 * deny) needs `approve` on the CSR's signer, writing a certificate through `/status` needs `sign`.
 * @see https://kubernetes.io/docs/reference/access-authn-authz/admission-controllers/#certificateapproval
 */
export function certificateAdmission(authorizer: Authorizer): AdmissionPlugin {
  return (request) => {
    if (request.def.group !== 'certificates.k8s.io' || request.def.resource !== 'certificatesigningrequests') {
      return;
    }
    const subject = { resource: request.def.resource, group: request.def.group, name: request.name };
    const signer = signerOf(request);
    if (request.operation === 'UPDATE' && request.subresource === 'approval' && !authorizedForSigner(authorizer, request.user, 'approve', signer)) {
      throw forbiddenError(subject, `user not permitted to approve requests with signerName ${JSON.stringify(signer)}`);
    }
    if (request.operation === 'UPDATE' && request.subresource === 'status') {
      const certificate = request.object?.status?.['certificate'];
      if (certificate !== request.oldObject?.status?.['certificate'] && !authorizedForSigner(authorizer, request.user, 'sign', signer)) {
        throw forbiddenError(subject, `user not permitted to sign requests with signerName ${JSON.stringify(signer)}`);
      }
    }
  };
}
