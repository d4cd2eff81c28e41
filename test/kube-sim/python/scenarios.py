"""Scenarios of the official Kubernetes Python client (Debian's python3-kubernetes) against kube-sim.

Run by test/kube-sim/python-client.test.ts as `/usr/bin/python3 scenarios.py KUBECONFIG`; prints one
JSON object with what each scenario observed, for the test to check.
"""
import datetime
import json
import sys

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException


def list_nodes(core):
    nodes = core.list_node()
    page = core.list_node(limit=1)
    return {
        'names': [n.metadata.name for n in nodes.items],
        'resourceVersion': nodes.metadata.resource_version,
        'pageContinue': bool(page.metadata._continue),
        'remaining': page.metadata.remaining_item_count,
    }


def watch_expired(core, old_resource_version):
    try:
        for _ in watch.Watch().stream(core.list_namespaced_config_map, 'default', resource_version=old_resource_version, timeout_seconds=5):
            return {'status': None, 'reason': 'an event arrived'}
    except ApiException as error:
        return {'status': error.status, 'reason': error.reason}
    return {'status': None, 'reason': 'the watch ended without an error'}


def watch_events(core, resource_version):
    seen = []
    for event in watch.Watch().stream(core.list_namespaced_config_map, 'default', resource_version=resource_version, timeout_seconds=2):
        seen.append('%s %s' % (event['type'], event['object'].metadata.name))
    return seen


def evict_under_budget(core):
    body = client.V1Eviction(metadata=client.V1ObjectMeta(name='db-0', namespace='shop'))
    try:
        core.create_namespaced_pod_eviction('db-0', 'shop', body)
        return {'status': 201}
    except ApiException as error:
        status = json.loads(error.body)
        return {'status': error.status, 'message': status.get('message'), 'cause': status.get('details', {}).get('causes', [{}])[0].get('message')}


def approve_csr(certificates, name):
    csr = certificates.read_certificate_signing_request(name)
    condition = client.V1CertificateSigningRequestCondition(
        type='Approved', status='True', reason='PythonApprove', message='approved by the Python client',
        last_update_time=datetime.datetime.now(datetime.timezone.utc))
    csr.status.conditions = (csr.status.conditions or []) + [condition]
    approved = certificates.replace_certificate_signing_request_approval(name, csr)
    return {'conditions': [c.type for c in approved.status.conditions]}


def token_request(core):
    core.create_namespaced_service_account('default', client.V1ServiceAccount(metadata=client.V1ObjectMeta(name='py-robot')))
    spec = client.V1TokenRequestSpec(audiences=[], expiration_seconds=600)
    issued = core.create_namespaced_service_account_token('py-robot', 'default', client.AuthenticationV1TokenRequest(spec=spec))
    configuration = client.Configuration.get_default_copy()
    configuration.api_key = {'authorization': 'Bearer ' + issued.status.token}
    configuration.cert_file = None
    configuration.key_file = None
    as_robot = client.CoreV1Api(client.ApiClient(configuration))
    try:
        as_robot.list_node()
        return {'status': 200}
    except ApiException as error:
        return {'status': error.status, 'message': json.loads(error.body).get('message'), 'expires': issued.status.expiration_timestamp is not None}


def main():
    config.load_kube_config(config_file=sys.argv[1])
    core = client.CoreV1Api()
    certificates = client.CertificatesV1Api()
    old = sys.argv[2]
    fresh = sys.argv[3]
    print(json.dumps({
        'list': list_nodes(core),
        'watch': watch_events(core, fresh),
        'watchExpired': watch_expired(core, old),
        'eviction': evict_under_budget(core),
        'csr': approve_csr(certificates, 'python-csr'),
        'tokenRequest': token_request(core),
    }))


if __name__ == '__main__':
    main()
