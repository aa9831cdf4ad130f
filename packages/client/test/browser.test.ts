/**
 * The client's main entry must load in a browser: bundled for the browser platform (where `node:`
 * modules do not exist), it builds, and carries neither undici nor any Node built-in. The Node entry
 * (`@strata/client/node`) is the control: the same bundling refuses it.
 */
import { join } from 'node:path';
import { build } from 'esbuild';

const SRC = join(__dirname, '..', 'src');

function bundleForBrowser(entry: string) {
  return build({ entryPoints: [join(SRC, entry)], bundle: true, platform: 'browser', format: 'esm', write: false, logLevel: 'silent' });
}

describe('@strata/client in a browser bundle', () => {
  it('bundles the main entry for the browser with no Node module in it', async () => {
    const result = await bundleForBrowser('index.ts');
    expect(result.errors).toEqual([]);
    const code = result.outputFiles[0].text;
    expect(code).toMatch(/StrataClient = class/);
    expect(code).toContain('globalThis.fetch(');
    expect(code).not.toMatch(/undici|from ["']node:|require\(["']node:/);
  });

  it('refuses the Node entry, which needs undici and Node built-ins', async () => {
    await expect(bundleForBrowser('node.ts')).rejects.toThrow(/node:|could not resolve/i);
  });
});
