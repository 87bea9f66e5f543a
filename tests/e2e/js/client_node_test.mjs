// End-to-end: the JavaScript Kubernetes client (@kubernetes/client-node 1.x, pinned in
// package-lock.json beside this file) against `slicewright apiserver`, through the kubeconfig the
// server writes, loaded unchanged with KubeConfig.loadFromFile: HTTPS verified against the CA it
// carries (client-node refuses plain HTTP without insecure-skip-tls-verify).
// CRUD, label and field selectors, merge and strategic merge patches, 409 on a stale
// resourceVersion, Watch, makeInformer, EndpointSlices, a CRD with its status subresource, Leases,
// 404/422 Status bodies; and that it refuses the plain HTTP of --insecure-http. Prints "ok"/"FAIL"
// lines and "N passed, N failed" as the Python tests do.
//
// Usage: node client_node_test.mjs PATH/TO/slicewright   (scripts/install-js-deps.sh installs the
// client into node_modules here)
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import * as k8s from '@kubernetes/client-node';

const SLOW = Number(process.env.E2E_SLOW || '1');
let passed = 0;
let failed = 0;

function ok(name) {
  passed += 1;
  console.log(`ok   ${name}`);
}

function fail(name, ...details) {
  failed += 1;
  console.log(`FAIL ${name}`);
  for (const line of details) console.log(`       ${line}`);
}

function check(name, condition, ...details) {
  if (condition) ok(name);
  else fail(name, ...details);
  return condition;
}

function eq(name, got, want) {
  const g = JSON.stringify(got);
  const w = JSON.stringify(want);
  return check(name, g === w, `got:  ${g}`, `want: ${w}`);
}

// Runs one scenario; an exception fails it (with its stack) and the next one runs.
async function run(name, fn) {
  try {
    await fn();
  } catch (error) {
    fail(
      `${name}: raised`,
      ...String(error?.stack || error)
        .split('\n')
        .slice(0, 12),
    );
    if (error?.body) fail(`${name}: body`, JSON.stringify(error.body).slice(0, 500));
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Polls condition() (sync or async) until truthy (returned) or the deadline passes (undefined).
async function waitUntil(seconds, condition) {
  const deadline = Date.now() + seconds * 1000 * SLOW;
  for (;;) {
    const value = await condition();
    if (value) return value;
    if (Date.now() >= deadline) return undefined;
    await sleep(20);
  }
}

// The ApiException of `call` (undefined when it succeeded), with its body parsed.
async function apiError(call) {
  try {
    await call();
  } catch (error) {
    if (!(error instanceof k8s.ApiException)) throw error;
    let body = error.body;
    if (typeof body === 'string') {
      try {
        body = JSON.parse(body);
      } catch {
        // left as text; the check on it fails
      }
    }
    return { code: error.code, body };
  }
  return undefined;
}

const mergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
const strategicPatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch);

// --- the server --------------------------------------------------------------------------------
function startServer(binary, dataDir, kubeconfig, extraArgs = []) {
  const child = spawn(
    binary,
    [
      'apiserver',
      '--listen',
      '127.0.0.1:0',
      '--data-dir',
      dataDir,
      '--write-kubeconfig',
      kubeconfig,
      ...extraArgs,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start in time: ${output}`));
    }, 20000 * SLOW);
    const onData = (chunk) => {
      output += chunk.toString();
      // Written after the kubeconfig: both are ready once this line is out.
      const match = /^slicewright apiserver: kubeconfig written/m.exec(output);
      const url = /^slicewright apiserver: serving on (\S+)$/m.exec(output);
      if (match && url) {
        clearTimeout(timer);
        resolve({ child, url: url[1] });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}: ${output}`));
    });
  });
}

function stopServer(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve(child.exitCode);
    child.removeAllListeners('exit');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10000 * SLOW);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve(code ?? signal);
    });
    child.kill('SIGTERM');
  });
}

// --- scenarios -----------------------------------------------------------------------------------
function configMap(name, labels = {}, data = {}) {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels }, data };
}

async function crud(core, ns) {
  const created = await core.createNamespacedConfigMap({
    namespace: ns,
    body: configMap('cm-a', { app: 'web', tier: 'front' }, { k: 'v1' }),
  });
  eq(
    'create returns the object',
    [created.metadata.name, created.metadata.namespace, created.data],
    ['cm-a', ns, { k: 'v1' }],
  );
  check(
    'create sets a resourceVersion and uid',
    created.metadata.resourceVersion && created.metadata.uid,
  );
  const read = await core.readNamespacedConfigMap({ name: 'cm-a', namespace: ns });
  eq(
    'read returns what was created',
    read.metadata.resourceVersion,
    created.metadata.resourceVersion,
  );
  read.data = { k: 'v2' };
  const replaced = await core.replaceNamespacedConfigMap({
    name: 'cm-a',
    namespace: ns,
    body: read,
  });
  eq('replace updates the data', replaced.data, { k: 'v2' });
  check(
    'replace moves the resourceVersion',
    BigInt(replaced.metadata.resourceVersion) > BigInt(created.metadata.resourceVersion),
  );

  // 409: the update that still carries the first resourceVersion.
  const stale = { ...created, data: { k: 'stale' } };
  const conflict = await apiError(() =>
    core.replaceNamespacedConfigMap({ name: 'cm-a', namespace: ns, body: stale }),
  );
  eq(
    'a stale resourceVersion is a 409 Conflict',
    [conflict?.code, conflict?.body?.reason],
    [409, 'Conflict'],
  );
  check(
    'the 409 message names the object',
    /configmaps "cm-a"/.test(conflict?.body?.message || ''),
    conflict?.body?.message,
  );

  await core.createNamespacedConfigMap({
    namespace: ns,
    body: configMap('cm-b', { app: 'web', tier: 'back' }),
  });
  await core.createNamespacedConfigMap({ namespace: ns, body: configMap('cm-c', { app: 'db' }) });
  const names = (list) => list.items.map((item) => item.metadata.name).sort();
  eq('list', names(await core.listNamespacedConfigMap({ namespace: ns })), [
    'cm-a',
    'cm-b',
    'cm-c',
  ]);
  eq(
    'label selector app=web',
    names(await core.listNamespacedConfigMap({ namespace: ns, labelSelector: 'app=web' })),
    ['cm-a', 'cm-b'],
  );
  eq(
    'label selector app=web,tier!=front',
    names(
      await core.listNamespacedConfigMap({ namespace: ns, labelSelector: 'app=web,tier!=front' }),
    ),
    ['cm-b'],
  );
  eq(
    'label selector app in (db)',
    names(await core.listNamespacedConfigMap({ namespace: ns, labelSelector: 'app in (db)' })),
    ['cm-c'],
  );
  eq(
    'field selector metadata.name=cm-b',
    names(
      await core.listNamespacedConfigMap({ namespace: ns, fieldSelector: 'metadata.name=cm-b' }),
    ),
    ['cm-b'],
  );
  eq(
    'field selector metadata.namespace across namespaces',
    names(
      await core.listConfigMapForAllNamespaces({
        fieldSelector: `metadata.namespace=${ns}`,
        labelSelector: 'app',
      }),
    ),
    ['cm-a', 'cm-b', 'cm-c'],
  );

  const deleted = await core.deleteNamespacedConfigMap({ name: 'cm-c', namespace: ns });
  check('delete answers', deleted !== undefined);
  const gone = await apiError(() => core.readNamespacedConfigMap({ name: 'cm-c', namespace: ns }));
  eq(
    'a deleted object is a 404 Status',
    [gone?.code, gone?.body?.kind, gone?.body?.status, gone?.body?.reason, gone?.body?.message],
    [404, 'Status', 'Failure', 'NotFound', 'configmaps "cm-c" not found'],
  );
  eq(
    'the 404 Status details',
    [gone?.body?.details?.name, gone?.body?.details?.kind],
    ['cm-c', 'configmaps'],
  );
}

async function patches(core, ns) {
  await core.createNamespacedConfigMap({
    namespace: ns,
    body: configMap('patched', { a: '1' }, { x: '1', y: '2' }),
  });
  const merged = await core.patchNamespacedConfigMap(
    {
      name: 'patched',
      namespace: ns,
      body: { metadata: { labels: { b: '2' } }, data: { x: null, z: '3' } },
    },
    mergePatch,
  );
  eq(
    'a merge patch adds, keeps and removes keys',
    [merged.metadata.labels, merged.data],
    [
      { a: '1', b: '2' },
      { y: '2', z: '3' },
    ],
  );

  await core.createNamespacedService({
    namespace: ns,
    body: {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web' },
      spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
    },
  });
  // Ports merge on their key `port`: the strategic patch adds one and keeps the other.
  const strategic = await core.patchNamespacedService(
    {
      name: 'web',
      namespace: ns,
      body: { spec: { ports: [{ name: 'https', port: 443, targetPort: 8443 }] } },
    },
    strategicPatch,
  );
  eq(
    'a strategic merge patch merges the ports list by port',
    strategic.spec.ports.map((p) => [p.name, p.port]).sort(),
    [
      ['http', 80],
      ['https', 443],
    ],
  );
  const replacedList = await core.patchNamespacedService(
    {
      name: 'web',
      namespace: ns,
      body: { spec: { ports: [{ name: 'only', port: 81, targetPort: 81 }] } },
    },
    mergePatch,
  );
  eq(
    'a merge patch replaces the ports list',
    replacedList.spec.ports.map((p) => [p.name, p.port]),
    [['only', 81]],
  );
}

async function watchEvents(kc, core, ns) {
  const list = await core.listNamespacedConfigMap({ namespace: ns });
  const events = [];
  let ended;
  const watch = new k8s.Watch(kc);
  const controller = await watch.watch(
    `/api/v1/namespaces/${ns}/configmaps`,
    { resourceVersion: list.metadata.resourceVersion, allowWatchBookmarks: true },
    (type, obj) => {
      if (type !== 'BOOKMARK') events.push([type, obj.metadata.name, obj.data?.n ?? null]);
    },
    (err) => {
      ended = err ?? 'ended';
    },
  );
  await core.createNamespacedConfigMap({
    namespace: ns,
    body: configMap('watched', {}, { n: '1' }),
  });
  await core.patchNamespacedConfigMap(
    { name: 'watched', namespace: ns, body: { data: { n: '2' } } },
    mergePatch,
  );
  await core.deleteNamespacedConfigMap({ name: 'watched', namespace: ns });
  const seen = await waitUntil(20, () => events.length >= 3);
  controller.abort();
  check('the watch saw three events', seen, JSON.stringify(events));
  eq('Watch delivers ADDED, MODIFIED, DELETED in order', events, [
    ['ADDED', 'watched', '1'],
    ['MODIFIED', 'watched', '2'],
    ['DELETED', 'watched', '2'],
  ]);
  check(
    'the watch did not fail before it was aborted',
    ended === undefined || ended === 'ended' || ended?.name === 'AbortError',
    String(ended),
  );
}

async function informer(kc, core, ns) {
  await core.createNamespacedConfigMap({
    namespace: ns,
    body: configMap('before', { inf: 'yes' }),
  });
  const inf = k8s.makeInformer(
    kc,
    `/api/v1/namespaces/${ns}/configmaps`,
    () => core.listNamespacedConfigMap({ namespace: ns, labelSelector: 'inf=yes' }),
    'inf=yes',
  );
  const seen = [];
  const errors = [];
  inf.on('add', (obj) => seen.push(['add', obj.metadata.name]));
  inf.on('update', (obj) => seen.push(['update', obj.metadata.name, obj.data?.n ?? null]));
  inf.on('delete', (obj) => seen.push(['delete', obj.metadata.name]));
  inf.on('error', (err) => errors.push(String(err)));
  await inf.start();
  try {
    check('the informer lists what exists', await waitUntil(20, () => inf.get('before', ns)));
    await core.createNamespacedConfigMap({
      namespace: ns,
      body: configMap('after', { inf: 'yes' }),
    });
    await core.createNamespacedConfigMap({
      namespace: ns,
      body: configMap('unselected', { inf: 'no' }),
    });
    check('the informer sees a create', await waitUntil(20, () => inf.get('after', ns)));
    await core.patchNamespacedConfigMap(
      { name: 'after', namespace: ns, body: { data: { n: '1' } } },
      mergePatch,
    );
    check(
      'the informer sees an update',
      await waitUntil(20, () => inf.get('after', ns)?.data?.n === '1'),
      JSON.stringify(seen),
    );
    await core.deleteNamespacedConfigMap({ name: 'before', namespace: ns });
    check(
      'the informer sees a delete',
      await waitUntil(20, () => !inf.get('before', ns)),
      JSON.stringify(seen),
    );
    eq(
      'the informer cache holds the selected objects',
      inf
        .list(ns)
        .map((o) => o.metadata.name)
        .sort(),
      ['after'],
    );
    eq('the informer handlers ran in order', seen, [
      ['add', 'before'],
      ['add', 'after'],
      ['update', 'after', '1'],
      ['delete', 'before'],
    ]);
    eq('the informer reported no errors', errors, []);
  } finally {
    await inf.stop();
  }
}

async function endpointSlices(discovery, ns) {
  const body = {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'web-abc', labels: { 'kubernetes.io/service-name': 'web' } },
    addressType: 'IPv4',
    endpoints: [
      { addresses: ['10.0.0.1'], conditions: { ready: true }, nodeName: 'n1', zone: 'zone-a' },
      { addresses: ['10.0.0.2'], conditions: { ready: false } },
    ],
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
  };
  const created = await discovery.createNamespacedEndpointSlice({ namespace: ns, body });
  eq(
    'create an EndpointSlice',
    [created.addressType, created.endpoints.length, created.ports[0].port],
    ['IPv4', 2, 8080],
  );
  const list = await discovery.listNamespacedEndpointSlice({
    namespace: ns,
    labelSelector: 'kubernetes.io/service-name=web',
  });
  eq(
    'list EndpointSlices by service-name and read their endpoints',
    list.items.map((s) =>
      s.endpoints.map((e) => [e.addresses[0], e.conditions.ready, e.zone ?? null]),
    ),
    [
      [
        ['10.0.0.1', true, 'zone-a'],
        ['10.0.0.2', false, null],
      ],
    ],
  );
  const bad = await apiError(() =>
    discovery.createNamespacedEndpointSlice({
      namespace: ns,
      body: { ...body, metadata: { name: 'bad' }, endpoints: [{ addresses: ['not-an-ip'] }] },
    }),
  );
  eq('an invalid address is a 422 Status', [bad?.code, bad?.body?.reason], [422, 'Invalid']);
  check(
    'the 422 names the field',
    (bad?.body?.details?.causes || []).some((c) =>
      /endpoints\[0\]\.addresses\[0\]/.test(c.field || ''),
    ),
    JSON.stringify(bad?.body),
  );
  await discovery.deleteNamespacedEndpointSlice({ name: 'web-abc', namespace: ns });
}

const GROUP = 'e2e.slicewright.io';

async function crd(kc, ns) {
  const ext = kc.makeApiClient(k8s.ApiextensionsV1Api);
  const custom = kc.makeApiClient(k8s.CustomObjectsApi);
  await ext.createCustomResourceDefinition({
    body: {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `widgets.${GROUP}` },
      spec: {
        group: GROUP,
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            subresources: { status: {} },
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: {
                  spec: { type: 'object', properties: { size: { type: 'integer' } } },
                  status: { type: 'object', properties: { phase: { type: 'string' } } },
                },
              },
            },
          },
        ],
      },
    },
  });
  const established = await waitUntil(20, async () => {
    const got = await ext.readCustomResourceDefinition({ name: `widgets.${GROUP}` });
    return (got.status?.conditions || []).some(
      (c) => c.type === 'Established' && c.status === 'True',
    );
  });
  check('the CRD becomes Established', established);
  const params = { group: GROUP, version: 'v1', namespace: ns, plural: 'widgets' };
  const widget = {
    apiVersion: `${GROUP}/v1`,
    kind: 'Widget',
    metadata: { name: 'w1' },
    spec: { size: 3 },
  };
  // Discovery may lag the Established condition by a moment: retry the first create briefly.
  let created;
  await waitUntil(20, async () => {
    const error = await apiError(async () => {
      created = await custom.createNamespacedCustomObject({ ...params, body: widget });
    });
    return error === undefined || error.code !== 404;
  });
  eq('create a custom object', [created?.metadata?.name, created?.spec], ['w1', { size: 3 }]);
  const withStatus = await custom.patchNamespacedCustomObjectStatus(
    { ...params, name: 'w1', body: { status: { phase: 'Ready' }, spec: { size: 99 } } },
    mergePatch,
  );
  eq(
    'the status subresource writes status only',
    [withStatus.status, withStatus.spec],
    [{ phase: 'Ready' }, { size: 3 }],
  );
  const main = await custom.patchNamespacedCustomObject(
    { ...params, name: 'w1', body: { spec: { size: 4 }, status: { phase: 'Ignored' } } },
    mergePatch,
  );
  eq(
    'the main resource ignores status',
    [main.spec, main.status],
    [{ size: 4 }, { phase: 'Ready' }],
  );
  const list = await custom.listNamespacedCustomObject(params);
  eq(
    'list custom objects',
    list.items.map((o) => [o.metadata.name, o.status?.phase]),
    [['w1', 'Ready']],
  );
  await custom.deleteNamespacedCustomObject({ ...params, name: 'w1' });
  const gone = await apiError(() => custom.getNamespacedCustomObject({ ...params, name: 'w1' }));
  eq(
    'a deleted custom object is a 404 Status',
    [gone?.code, gone?.body?.reason],
    [404, 'NotFound'],
  );
}

async function leases(kc, ns) {
  const coordination = kc.makeApiClient(k8s.CoordinationV1Api);
  const now = new Date();
  // MicroTime (acquireTime, renewTime) must carry exactly six fraction digits, as kube-apiserver
  // parses it with Go's RFC3339Micro layout; a JS Date serializes with three (toISOString), which
  // a real cluster refuses with a 400, so clients send the text themselves.
  const micro = (date) => date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
  const lease = (renewTime) => ({
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'leader' },
    spec: { holderIdentity: 'a', leaseDurationSeconds: 15, acquireTime: renewTime, renewTime },
  });
  const refused = await apiError(() =>
    coordination.createNamespacedLease({ namespace: ns, body: lease(now) }),
  );
  eq(
    'a Date as MicroTime is refused as kube-apiserver refuses it',
    [refused?.code, refused?.body?.reason, (refused?.body?.message || '').split(': ')[0]],
    [400, 'BadRequest', 'Lease in version "v1" cannot be handled as a Lease'],
  );
  const created = await coordination.createNamespacedLease({
    namespace: ns,
    body: lease(micro(now)),
  });
  eq('create a Lease', [created.spec.holderIdentity, created.spec.leaseDurationSeconds], ['a', 15]);
  const millis = (t) => new Date(t).getTime();
  eq('the Lease renewTime round-trips', millis(created.spec.renewTime), now.getTime());
  const renewed = {
    ...created,
    spec: { ...created.spec, renewTime: micro(new Date(now.getTime() + 5000)) },
  };
  const updated = await coordination.replaceNamespacedLease({
    name: 'leader',
    namespace: ns,
    body: renewed,
  });
  eq('renew the Lease', millis(updated.spec.renewTime), now.getTime() + 5000);
  const stale = await apiError(() =>
    coordination.replaceNamespacedLease({
      name: 'leader',
      namespace: ns,
      body: { ...created, spec: { ...created.spec, holderIdentity: 'b' } },
    }),
  );
  eq('a second candidate with the old resourceVersion gets 409', stale?.code, 409);
  const read = await coordination.readNamespacedLease({ name: 'leader', namespace: ns });
  eq('the holder is unchanged', read.spec.holderIdentity, 'a');
}

async function statusBodies(core, ns) {
  const invalid = await apiError(() =>
    core.createNamespacedConfigMap({ namespace: ns, body: configMap('Bad_Name') }),
  );
  eq(
    'an invalid name is a 422 Status',
    [invalid?.code, invalid?.body?.kind, invalid?.body?.status, invalid?.body?.reason],
    [422, 'Status', 'Failure', 'Invalid'],
  );
  check(
    'the 422 message names the object and field',
    (invalid?.body?.message || '').startsWith(
      'ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value',
    ),
    invalid?.body?.message,
  );
  eq(
    'the 422 details',
    [
      invalid?.body?.details?.name,
      invalid?.body?.details?.kind,
      invalid?.body?.details?.causes?.[0]?.field,
    ],
    ['Bad_Name', 'ConfigMap', 'metadata.name'],
  );
  const missingNs = await apiError(() => core.readNamespace({ name: 'no-such-namespace' }));
  eq(
    'a missing namespace is a 404 Status',
    [missingNs?.code, missingNs?.body?.reason, missingNs?.body?.message],
    [404, 'NotFound', 'namespaces "no-such-namespace" not found'],
  );
}

// Why the server serves HTTPS: client-node refuses a plain-HTTP kubeconfig before sending anything.
async function plainHttpRefused(binary, scratch) {
  const kubeconfig = path.join(scratch, 'insecure.kubeconfig');
  const server = await startServer(binary, path.join(scratch, 'insecure.data'), kubeconfig, [
    '--insecure-http',
  ]);
  try {
    check('--insecure-http serves http', server.url.startsWith('http://'), server.url);
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(kubeconfig);
    let refused;
    try {
      await kc.makeApiClient(k8s.CoreV1Api).listNamespace();
    } catch (error) {
      refused = String(error?.message || error);
    }
    check(
      'client-node refuses the plain-HTTP kubeconfig',
      /HTTP protocol is not allowed/.test(refused || ''),
      refused,
    );
  } finally {
    eq('the --insecure-http server stops cleanly (exit 0)', await stopServer(server.child), 0);
  }
}

// --- main ----------------------------------------------------------------------------------------
async function main() {
  const binary = process.argv[2];
  if (!binary) {
    console.error('usage: node client_node_test.mjs PATH/TO/slicewright');
    return 2;
  }
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'sw-client_node_test.'));
  const kubeconfig = path.join(scratch, 'kubeconfig');
  let server;
  try {
    server = await startServer(path.resolve(binary), path.join(scratch, 'data'), kubeconfig);
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(kubeconfig);
    const cluster = kc.getCurrentCluster();
    eq(
      'the kubeconfig is loaded as written',
      [cluster?.server, cluster?.skipTLSVerify ?? false],
      [server.url, false],
    );
    check('its server is https', server.url.startsWith('https://'), server.url);
    check('it carries the CA', Boolean(cluster?.caData), JSON.stringify(cluster));
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const version = await kc.makeApiClient(k8s.VersionApi).getCode();
    check(
      'VersionApi.getCode over HTTPS',
      version.gitVersion.startsWith('v1.'),
      JSON.stringify(version),
    );
    const ns = 'client-node';
    await core.createNamespace({
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
    });
    await run('CRUD, selectors and 409', () => crud(core, ns));
    await run('merge and strategic merge patches', () => patches(core, ns));
    await run('Watch', () => watchEvents(kc, core, ns));
    await run('makeInformer', () => informer(kc, core, ns));
    await run('EndpointSlices', () => endpointSlices(kc.makeApiClient(k8s.DiscoveryV1Api), ns));
    await run('CRD with a status subresource', () => crd(kc, ns));
    await run('Leases', () => leases(kc, ns));
    await run('404 and 422 Status bodies', () => statusBodies(core, ns));
    eq('SIGTERM stops the server cleanly (exit 0)', await stopServer(server.child), 0);
    await run('plain HTTP', () => plainHttpRefused(path.resolve(binary), scratch));
  } catch (error) {
    fail(
      'setup: raised',
      ...String(error?.stack || error)
        .split('\n')
        .slice(0, 12),
    );
  } finally {
    if (server && server.child.exitCode === null) server.child.kill('SIGKILL');
    if (failed === 0 && !process.env.E2E_KEEP) fs.rmSync(scratch, { recursive: true, force: true });
    else console.log(`(kept ${scratch} for inspection)`);
  }
  console.log(`client_node_test: ${passed} passed, ${failed} failed`);
  return failed === 0 ? 0 : 1;
}

process.exitCode = await main();
