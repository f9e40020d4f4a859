// TypeBox, as one module. The package is about 700 ES modules, and loading them was a
// third of the embedded start (docs/performance.md#the-embedded-start): after compiling, the build bundles
// this module with the package into dist/vendor/typebox.js and makes this module's output
// a re-export of that one file (bin/build.js). Under the tests it is the package itself.
export { default as Type, type Static, type TSchema } from 'typebox'
export { default as Value } from 'typebox/value'
export { Compile } from 'typebox/compile'
