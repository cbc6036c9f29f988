/**
 * The session's output pipeline as SessionCore builds it (engine defaults, the bash dialect's prompt,
 * replies dropped), from the build at `root` (a checkout or an `ab-builds.mjs` snapshot with a built
 * `dist/`), for the benchmarks that measure the pipeline alone.
 */
import { fileURLToPath } from 'node:url';

/** This checkout. */
export const THIS_BUILD = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Resolves to `(listener) => OutputPipeline` for the build at `root`, with that build's default config
 * as `config`: each pipeline tells `listener` (undefined: no send in the slot) what a send would hear.
 */
export async function sessionPipelines(root = THIS_BUILD) {
  const { resolveEngineConfig } = await import(`${root}/dist/shared/config.js`);
  const { OutputPipeline } = await import(`${root}/dist/worker/output-pipeline.js`);
  const { createNonce } = await import(`${root}/dist/worker/readiness/prompt-marker.js`);
  const { dialectNamed } = await import(`${root}/dist/worker/shell/registry.js`);
  const config = resolveEngineConfig({});
  const create = (listener) =>
    new OutputPipeline({
      rows: config.rows,
      cols: config.cols,
      config,
      nonce: createNonce(),
      prompt: dialectNamed('bash').prompt,
      replies: { offer: () => undefined, markerParsed: () => undefined },
      listener: () => listener,
    });
  return { create, config };
}
