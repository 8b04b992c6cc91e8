import {defineConfig} from 'eslint/config'
import tseslint from 'typescript-eslint'

export default defineConfig(
  {ignores: ['dist/**', 'node_modules/**', 'bench/**', 'playground/**', 'coverage/**', '.demo/**', 'eslint.config.js']},
  tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: {project: ['./tsconfig.test.json'], tsconfigRootDir: import.meta.dirname},
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
    files: ['src/**/*.ts'],
    rules: {
      // The core runs in browsers: Node built-ins belong in ./node only.
      'no-restricted-imports': ['error', {patterns: [{group: ['node:*'], message: 'No Node built-ins in the core.'}]}],
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      // Asymmetric matchers (expect.any, expect.objectContaining) are typed `any` by vitest.
      '@typescript-eslint/no-unsafe-assignment': 'off',
    },
  },
)
