import {defineConfig} from 'eslint/config'
import {createNodeResolver, importX} from 'eslint-plugin-import-x'
import tseslint from 'typescript-eslint'

const nodeBuiltins = {group: ['node:*'], message: 'No Node built-ins in the core.'}
const msw = {group: ['msw', 'msw/*'], message: 'msw is an optional peer dependency of ./testing only.'}
const otel = {group: ['@opentelemetry/*'], message: '@opentelemetry/api is an optional peer dependency of ./otel only.'}
// The testing kit checks the transport: it reaches the core only through its public entry point.
const coreInternals = {
  group: ['../*', '!../index.ts'],
  message: 'src/testing imports the core only through ../index.ts.',
}

// The layers of the core, from the top down (docs/design.md#layout): a folder imports only from the
// layers below it, and from the vocabulary at the root (options.ts, errors.ts, events.ts); nothing
// imports the transport or an entry point.
const entryPoints = [
  './src/index.ts',
  './src/node.ts',
  './src/idb.ts',
  './src/journal.ts',
  './src/redis.ts',
  './src/cloudflare.ts',
  './src/server.ts',
  './src/otel.ts',
]
// The server half (./server, ./server/redis) stands apart: it imports nothing of the client core, nor the core of it.
const clientCore = [
  './src/transport.ts',
  './src/options.ts',
  './src/errors.ts',
  './src/events.ts',
  './src/session',
  './src/calls',
  './src/streams',
  './src/persistence',
  './src/delivery',
  './src/modern',
  './src/wire',
  './src/policy',
  './src/testing',
]
const layers = [
  ['session', ['./src/transport.ts']],
  ['calls', ['./src/transport.ts', './src/session']],
  ['streams', ['./src/transport.ts', './src/session', './src/calls']],
  ['persistence', ['./src/transport.ts', './src/session', './src/calls', './src/streams', './src/delivery']],
  ['delivery', ['./src/transport.ts', './src/session', './src/calls', './src/streams', './src/persistence']],
  [
    'modern',
    ['./src/transport.ts', './src/session', './src/calls', './src/streams', './src/persistence', './src/delivery'],
  ],
  [
    'wire',
    [
      './src/transport.ts',
      './src/session',
      './src/calls',
      './src/streams',
      './src/persistence',
      './src/delivery',
      './src/modern',
    ],
  ],
  [
    'policy',
    [
      './src/transport.ts',
      './src/session',
      './src/calls',
      './src/streams',
      './src/persistence',
      './src/delivery',
      './src/modern',
      './src/wire',
    ],
  ],
].flatMap(([folder, above]) => [
  {
    target: `./src/${folder}`,
    from: above,
    message: `src/${folder}/ sits below what it imports here (docs/design.md#layout).`,
  },
  {target: `./src/${folder}`, from: entryPoints, message: 'The core never imports an entry point.'},
  {
    target: `./src/${folder}`,
    from: './src/server',
    message: 'The client core never imports the server half (docs/server.md).',
  },
])
const serverZones = [
  {
    target: './src/server',
    from: [...clientCore, ...entryPoints],
    message: 'src/server/ imports nothing of the client core (docs/server.md).',
  },
  {
    target: './src/server.ts',
    from: clientCore,
    message: 'src/server.ts exports the server half only (docs/server.md).',
  },
  {
    target: [
      ...clientCore.filter((path) => path.endsWith('.ts') || path === './src/testing'),
      ...entryPoints.filter((path) => path !== './src/server.ts' && path !== './src/otel.ts'),
    ],
    from: ['./src/server', './src/server.ts'],
    message: 'The client never imports the server half (docs/server.md).',
  },
]
// ./otel sits beside the other entry points: the client through its public entry point, the server half through ./server.
const otelZones = [
  {
    target: ['./src/otel.ts', './src/otel'],
    from: [
      ...clientCore,
      './src/server',
      ...entryPoints.filter((path) => !['./src/index.ts', './src/server.ts', './src/otel.ts'].includes(path)),
    ],
    message: 'src/otel reaches the client through ./index.ts and the server half through ./server.ts only.',
  },
  {
    target: [...clientCore, './src/server', ...entryPoints.filter((path) => path !== './src/otel.ts')],
    from: ['./src/otel', './src/otel.ts'],
    message: 'Nothing but the ./otel entry point imports src/otel.',
  },
]

export default defineConfig(
  {
    ignores: [
      '**/dist/**',
      'node_modules/**',
      'bench/**',
      'coverage/**',
      '.demo/**',
      '.playground/**',
      '.soak/**',
      '.sim/**',
      '.test-build/**',
      'docs/api/**',
      'test/package/consumer/**',
      'eslint.config.js',
      'stryker.config.mjs',
      'stryker.ci.config.mjs',
      '.tools/**',
      '.stryker-tmp/**',
      'reports/**',
    ],
  },
  tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        project: ['./tsconfig.test.json', './examples/mv3-extension/tsconfig.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // Every background promise is tracked or explicitly voided (SDK anti-pattern A2).
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/restrict-template-expressions': ['error', {allowNumber: true}],
      '@typescript-eslint/no-confusing-void-expression': ['error', {ignoreArrowShorthand: true}],
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    // No import cycles in the library, type-only imports included: each module sits on a layer below those
    // that use it (docs/design.md#layout).
    files: ['src/**/*.ts'],
    plugins: {'import-x': importX},
    settings: {'import-x/resolver-next': [createNodeResolver({extensions: ['.ts', '.js']})]},
    rules: {
      'import-x/no-cycle': 'error',
      'import-x/no-restricted-paths': [
        'error',
        {zones: [...layers, ...serverZones, ...otelZones], basePath: import.meta.dirname},
      ],
    },
  },
  {
    files: ['src/**/*.ts'],
    // The ./node and ./redis entry points and what they alone import.
    ignores: [
      'src/node.ts',
      'src/persistence/file-store.ts',
      'src/persistence/file-lock.ts',
      'src/persistence/atomic-file.ts',
      'src/persistence/logged-file.ts',
      'src/persistence/file-leases.ts',
      'src/redis.ts',
      'src/persistence/redis-store.ts',
    ],
    rules: {
      // The core runs in browsers: Node built-ins belong in ./node only.
      'no-restricted-imports': ['error', {patterns: [nodeBuiltins, msw, otel]}],
      // file-store.ts references the Node types, which makes these globals type-check anywhere in src.
      'no-restricted-globals': [
        'error',
        ...[
          'process',
          'Buffer',
          'global',
          'require',
          'module',
          '__dirname',
          '__filename',
          'setImmediate',
          'clearImmediate',
        ].map((name) => ({name, message: 'No Node globals in the core.'})),
      ],
    },
  },
  {
    // ./otel runs in browsers too; OpenTelemetry's API is its own.
    files: ['src/otel.ts', 'src/otel/**/*.ts'],
    rules: {'no-restricted-imports': ['error', {patterns: [nodeBuiltins, msw]}]},
  },
  {
    // The soak judges the transport: it reaches it through the public entry points only.
    files: ['soak/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: String.raw`^\.\./src/(?!(index|node|testing/node)\.ts$)`,
              message: 'The soak uses the public API only.',
            },
          ],
        },
      ],
    },
  },
  {
    // The simulation drives the real transport and servers through their public entry points only.
    files: ['sim/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: String.raw`^\.\./src/(?!(index|server|testing/index)\.ts$)`,
              message: 'The simulation uses the public API only.',
            },
          ],
        },
      ],
    },
  },
  {
    // Plain-JS fixtures run by child processes, and the scripts that pick a Node: no TS project, so
    // no type information.
    files: ['test/**/*.mjs', 'scripts/**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
  },
  {
    // Workers code: Cloudflare's types clash with the DOM types of the other projects, and it is
    // checked against the build (dist/), so tsc checks it in npm run test:workerd, after the build
    // (examples/cloudflare-worker/tsconfig.json).
    files: ['examples/cloudflare-worker/**/*.ts', 'test/runtimes/workerd/**/*.ts'],
    extends: [tseslint.configs.disableTypeChecked],
  },
  {
    // The testing kit runs in browsers too (msw's setupWorker): msw is allowed there, Node built-ins are not...
    files: ['src/testing/**/*.ts'],
    rules: {'no-restricted-imports': ['error', {patterns: [nodeBuiltins, coreInternals]}]},
  },
  {
    // ...except in its Node adapter (./testing/node), which serves over real sockets.
    files: ['src/testing/node.ts'],
    rules: {'no-restricted-imports': ['error', {patterns: [coreInternals]}], 'no-restricted-globals': 'off'},
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      // Asymmetric matchers (expect.any, expect.objectContaining) are typed `any` by vitest.
      '@typescript-eslint/no-unsafe-assignment': 'off',
    },
  },
)
