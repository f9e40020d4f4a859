// ESLint (flat config): typescript-eslint's recommended-type-checked rules over the code
// (src/, test/, bench/, bin/, the tool configs). Typed linting takes its program from
// tsconfig.json through the project service; the few JavaScript files, outside that
// tsconfig, get a default project. The rules the preset has and this config turns off
// are the deliberate patterns of this code base, each with its reason.
import js from '@eslint/js'
import { defineConfig } from 'eslint/config'
import globals from 'globals'
import tseslint from 'typescript-eslint'

const unsafeAny = {
  '@typescript-eslint/no-unsafe-argument': 'off',
  '@typescript-eslint/no-unsafe-assignment': 'off',
  '@typescript-eslint/no-unsafe-call': 'off',
  '@typescript-eslint/no-unsafe-member-access': 'off',
  '@typescript-eslint/no-unsafe-return': 'off',
}

export default defineConfig(
  {
    // examples/ holds the developer guide's samples, run as they are by test/guide.
    ignores: ['dist/', 'coverage/', 'data/', 'test-artifacts/', 'examples/'],
  },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: globals.node,
      parserOptions: {
        projectService: {
          allowDefaultProject: ['bin/*.js', 'eslint.config.js'],
        },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    linterOptions: {
      reportUnusedDisableDirectives: 'error',
    },
    rules: {
      // Implementations of async interfaces (the memory replay cache and throttle, the
      // embedded stores, fastify plugins and hooks) are `async` without awaiting anything:
      // the interface promises a Promise, and a synchronous throw must become a rejection.
      '@typescript-eslint/require-await': 'off',
      // Control characters are matched on purpose, always written as escapes: the input
      // checks refuse them (names, e-mail addresses, entry text, a login's next page), and
      // client names and XML text replace them.
      'no-control-regex': 'off',
      // A leading underscore names a binding kept only for its position: a destructured
      // field left out of a copy, a loop counter whose value is not read.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },
  {
    files: ['test/**'],
    rules: {
      // Tests read HTTP answers' JSON bodies and log lines as `any` and let `expect` check
      // their shape: the assertion is the type check.
      ...unsafeAny,
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    files: ['bin/*.js'],
    // Plain JavaScript has no annotations (bin/kigo.js imports the built dist/, which may
    // not exist yet): every untyped binding is `any` there.
    rules: unsafeAny,
  },
)
