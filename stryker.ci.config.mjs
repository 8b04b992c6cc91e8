// The mutation run CI can afford (docs/mutation.md): the reconnect decision and the cursor rule, which every
// resumption goes through. Fails below the break threshold. `npm run mutate:ci`.
import base from './stryker.config.mjs'

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  ...base,
  mutate: ['src/policy/decision.ts', 'src/streams/stream.ts'],
  reporters: ['clear-text', 'progress', 'json'],
  thresholds: {...base.thresholds, break: 90},
}
