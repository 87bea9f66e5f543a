// The calls of tests/e2e/js/client_node_test.mjs, made with @kubernetes/client-node (from
// tests/e2e/js/node_modules) against the server of a kubeconfig, printing what the client saw of
// each as one JSON line {"label", "seen"}: the returned object, or the ApiException's code and
// body. apiserver_diff_test.py runs it against kube-apiserver and against our server and compares.
//
// Usage: node client_node_calls.mjs KUBECONFIG
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const k8s = await import(
  pathToFileURL(
    path.join(here, '..', 'e2e', 'js', 'node_modules', '@kubernetes', 'client-node', 'dist',
      'index.js'),
  ).href
);

const kc = new k8s.KubeConfig();
kc.loadFromFile(process.argv[2]);
const core = kc.makeApiClient(k8s.CoreV1Api);
const discovery = kc.makeApiClient(k8s.DiscoveryV1Api);
const coordination = kc.makeApiClient(k8s.CoordinationV1Api);
const ns = 'diff-js';
const mergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
const strategicPatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch);

async function call(label, fn) {
  let seen;
  try {
    seen = { ok: await fn() };
  } catch (error) {
    if (error instanceof k8s.ApiException) {
      let body = error.body;
      try {
        body = JSON.parse(body);
      } catch {
        // kept as text
      }
      seen = { code: error.code, body };
    } else {
      seen = { raised: String(error?.message || error) };
    }
  }
  console.log(JSON.stringify({ label, seen }));
}

const configMap = (name, labels = {}, data = {}) => ({
  apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels }, data,
});

await call('create a ConfigMap', () =>
  core.createNamespacedConfigMap({ namespace: ns, body: configMap('cm-a', { app: 'web' }, { k: 'v1' }) }));
await call('a stale resourceVersion', async () => {
  const read = await core.readNamespacedConfigMap({ name: 'cm-a', namespace: ns });
  await core.replaceNamespacedConfigMap({ name: 'cm-a', namespace: ns, body: { ...read, data: { k: 'v2' } } });
  return core.replaceNamespacedConfigMap({ name: 'cm-a', namespace: ns, body: { ...read, data: { k: 'stale' } } });
});
await call('label selector app=web', () =>
  core.listNamespacedConfigMap({ namespace: ns, labelSelector: 'app=web' }));
await call('a merge patch', () =>
  core.patchNamespacedConfigMap({ name: 'cm-a', namespace: ns, body: { data: { k: null, z: '3' } } }, mergePatch));
await call('create a Service', () =>
  core.createNamespacedService({
    namespace: ns,
    body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' },
      spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] } },
  }));
await call('a strategic merge patch of ports', () =>
  core.patchNamespacedService({ name: 'web', namespace: ns,
    body: { spec: { ports: [{ name: 'https', port: 443, targetPort: 8443 }] } } }, strategicPatch));
await call('an EndpointSlice with an invalid address', () =>
  discovery.createNamespacedEndpointSlice({
    namespace: ns,
    body: { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'bad' },
      addressType: 'IPv4', endpoints: [{ addresses: ['not-an-ip'] }] },
  }));
await call('a Date as MicroTime', () =>
  coordination.createNamespacedLease({
    namespace: ns,
    body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'leader' },
      spec: { holderIdentity: 'a', renewTime: new Date(Date.UTC(2024, 0, 1)) } },
  }));
await call('a Lease with six-digit times', () =>
  coordination.createNamespacedLease({
    namespace: ns,
    body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'leader' },
      spec: { holderIdentity: 'a', leaseDurationSeconds: 15, renewTime: '2024-01-01T00:00:00.000000Z' } },
  }));
await call('an invalid name', () =>
  core.createNamespacedConfigMap({ namespace: ns, body: configMap('Bad_Name') }));
await call('a missing namespace', () => core.readNamespace({ name: 'no-such-namespace' }));
await call('delete', () => core.deleteNamespacedConfigMap({ name: 'cm-a', namespace: ns }));
await call('a deleted object', () => core.readNamespacedConfigMap({ name: 'cm-a', namespace: ns }));
